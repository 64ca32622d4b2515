"""The pure parts of `roundhouse bench observation`: OSWorld's table rules, our block as the
prompt renders it, the recall count, and o200k_base loaded without the network."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

from roundhouse.agents.prompting import describe_control
from roundhouse.bench.observation import Wanted, controls_block, recall_missing
from roundhouse.bench.osworld import HEADER, A11yNode, keeps, linearise, read_window
from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.devices.linux.atspi.bus import Ref
from roundhouse.devices.linux.atspi.constants import (
    GET_ROLE_NAME,
    Method,
)
from tests.fake_atspi import FakeApp, FakeBus, FakeObject

SHOWN = frozenset({"showing", "visible", "enabled"})


def node(tag: str, name: str = "", text: str = "", **changes: object) -> A11yNode:
    values: dict[str, object] = {
        "tag": tag,
        "name": name,
        "text": text,
        "states": SHOWN,
        "position": (10, 20),
        "size": (30, 40),
    }
    values.update(changes)
    return A11yNode(**values)  # type: ignore[arg-type]


def test_osworld_keeps_named_visible_usable_nodes_of_its_roles() -> None:
    assert keeps(node("push-button", "OK"))
    assert keeps(node("document-web", text="page"))  # a tag starting with "document"
    assert keeps(node("menu-item", "Open"))  # a tag ending with "item"
    assert keeps(node("entry", "Name", states=frozenset({"showing", "visible", "editable"})))
    assert not keeps(node("panel", "Order"))  # not one of its roles
    assert not keeps(node("push-button"))  # neither name nor text
    assert not keeps(node("push-button", "OK", states=frozenset({"visible", "enabled"})))
    assert not keeps(node("push-button", "OK", states=frozenset({"showing", "visible"})))
    assert not keeps(node("push-button", "OK", position=(-1, 5)))
    assert not keeps(node("push-button", "OK", size=(0, 5)))
    assert not keeps(node("push-button", "OK", position=None, size=None))


def test_osworld_table_columns_and_quoting() -> None:
    table = linearise(
        [node("panel", "x"), node("push-button", "OK"), node("label", "Say", 'He said "hi"')]
    )
    assert table.splitlines() == [
        HEADER,
        'push-button\tOK\t""\t\t\t(10, 20)\t(30, 40)',
        'label\tSay\t"He said ""hi"""\t\t\t(10, 20)\t(30, 40)',
    ]


WINDOW = WindowInfo(
    xid=1,
    title="Form",
    application="Chromium",
    pid=1,
    rect=Rect(left=0, top=0, right=100, bottom=100),
    active=True,
)


def control(label: int, role: str, name: str, text: str | None = None) -> Control:
    rect = Rect(left=0, top=0, right=10, bottom=10)
    return Control(label=label, id=f"n{label}", role=role, name=name, rect=rect, text=text)


def test_our_block_is_the_prompts_own_lines() -> None:
    controls = [control(1, "entry", "Name", "Ada"), control(2, "push button", "Submit")]
    block = controls_block(WINDOW, controls)
    # Whatever the prompt puts around them, the block holds each control's line.
    for listed in controls:
        assert describe_control(listed) in block
    assert "(no interactive controls)" not in block


def test_recall_needs_role_name_and_one_control_per_wanted_one() -> None:
    controls = [control(1, "toggle button", "Menu"), control(2, "text", "")]
    wanted = [Wanted("toggle button", "Menu"), Wanted("toggle button", "Menu")]
    assert recall_missing(controls, wanted) == [Wanted("toggle button", "Menu")]
    assert recall_missing(controls, [Wanted("text", None)]) == []
    assert recall_missing(controls, [Wanted("push button", "Menu")]) == [
        Wanted("push button", "Menu")
    ]
    tab = control(3, "page tab", "Order form - Memory usage - 24.0 MB")
    assert recall_missing([tab], [Wanted("page tab", "Order form")]) == []
    assert recall_missing([tab], [Wanted("page tab", "Order")]) == [Wanted("page tab", "Order")]


def test_o200k_loads_from_the_packaged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("bpe_openai")
    from roundhouse.bench import tokens as bench_tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    placed = bench_tokens.install_o200k(bench_tokens.cache_dir())
    assert placed.name == hashlib.sha1(bench_tokens.O200K_URL.encode()).hexdigest()
    assert hashlib.sha256(placed.read_bytes()).hexdigest() == bench_tokens.O200K_SHA256
    encoding = bench_tokens.o200k()
    assert bench_tokens.count_tokens(encoding, "hello world") == 2


async def test_osworlds_walk_leaves_out_a_node_that_goes_while_it_is_read() -> None:
    """gedit dropped an object between two calls of the walk (a fresh-clone run): the
    bench noted 'gedit: not measured'. The node is left out; the rest is read."""
    app = FakeApp(
        {
            "/root": FakeObject("frame", "Editor", children=["/going", "/button"]),
            "/going": FakeObject("label", "Tooltip", rect=(0, 0, 50, 10)),
            "/button": FakeObject("push button", "Save", rect=(0, 20, 50, 20)),
        }
    )

    class Vanishing(FakeBus):
        async def call(self, ref: Ref, method: Method, body: Any = ()) -> list[Any]:
            answer = await super().call(ref, method, body)
            if ref[1] == "/going" and method == GET_ROLE_NAME:
                del self.app.objects["/going"]  # gone before its name is asked
            return answer

    nodes = await read_window(Vanishing(app), app.ref("/root"))
    assert [(node.tag, node.name) for node in nodes] == [
        ("frame", "Editor"),
        ("push-button", "Save"),
    ]


def test_an_application_whose_program_is_not_here_is_noted_not_measured() -> None:
    from roundhouse.bench.tree import available

    wanted = [["roundhouse-no-such-program", "x"], [sys.executable, "-c", "pass"]]
    found, notes = available(wanted, lambda argv: argv)
    assert found == [[sys.executable, "-c", "pass"]]
    assert notes == ["roundhouse-no-such-program is not installed (make system-deps): not measured"]
