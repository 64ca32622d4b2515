"""Traps (issue 46), with the offline planner, real Chromium and pages served on 127.0.0.1,
on an X11 (Xvfb) desktop and on a sway one: each passes by doing what was asked or by
FAILing honestly, never by a false FINISH. Controls that share a name (a tab titled like a
button, a link and a button, a heading and a field's label), a disabled twin, and a save
that cannot succeed.

One desktop, one server and one browser serve the module per session kind: each request
goes to its page in the browser that is open, as a person's next request would. The
issue's own request opens Chromium itself, first: a second start of it on the same
desktop (its profile) would only hand its page to the first."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import DesktopSettings
from roundhouse.core.record import RoundRecord
from roundhouse.core.states import RoundState
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.suite.server import TaskServer, read_posted
from tests.desktop.conftest import kill_session, wait_until
from tests.gui.conftest import GuiSession

pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium is installed by `make system-deps`"
)

PAGES = {
    # The issue's page: titled "Order" (so is its tab), a Name field and an Order button.
    "form": """<title>Order</title>
<form method="post" action="/ordered">
<p><label for="name">Name</label> <input id="name" name="name"></p>
<p><button type="submit">Order</button></p>
</form>""",
    # A link before a button of the same name: the button is what "the Next button" means.
    "twins": """<title>Steps</title>
<p><a href="/elsewhere/">Next</a></p>
<form method="post" action="/next"><input type="hidden" name="via" value="button">
<p><button type="submit">Next</button></p></form>""",
    # A heading and a field's label that say the same.
    "note": """<title>Notes</title><h1>Comment</h1>
<form method="post" action="/noted">
<p><label for="comment">Comment</label> <input id="comment" name="comment"></p>
<p><button type="submit">Keep note</button></p></form>""",
    # A disabled button, and a link of its name that goes elsewhere.
    "disabled": """<title>Checkout</title>
<form method="post" action="/paid"><p><button type="submit" disabled>Pay</button></p></form>
<p><a href="/elsewhere/">Pay</a></p>""",
    "elsewhere": "<title>Elsewhere</title><p>Not the page asked for.</p>",
}


@pytest.fixture(scope="module", params=["x11", "sway"])
def desktop(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """An X11 (Xvfb) desktop, then a sway one: the traps hold on X11 and on Wayland."""
    if request.param != "x11" and shutil.which(request.param) is None:
        pytest.skip(f"{request.param} is installed by `make system-deps`")
    with VirtualDesktop(DesktopSettings(session=request.param)) as started:
        yield started


@pytest.fixture(scope="module")
def served(
    desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """The pages at {url}/NAME/, and the record of what was posted to them: one server per
    desktop, so that each desktop's record holds what was posted there."""
    root = tmp_path_factory.mktemp("pages")
    for name, body in PAGES.items():
        (root / name).mkdir()
        (root / name / "index.html").write_text(f"<!doctype html>{body}")
    record = root.parent / f"{root.name}-posted.jsonl"
    server = TaskServer.bind()
    server.start(root, record)
    yield server.url, record
    server.stop()


@pytest.fixture(scope="module")
def browser(desktop: Desktop, served: tuple[str, Path]) -> Iterator[None]:
    """One Chromium for the module, as the desktop launches it, on a blank page."""
    url, _ = served
    process = subprocess.Popen(
        desktop.app_command(["chromium", f"{url}/elsewhere/"]),
        env=desktop.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    with open_display(desktop) as display:  # X11 or Wayland alike

        def shown() -> bool:
            return any("Elsewhere" in w.title for w in display.windows.list_windows())

        wait_until(shown, timeout=60, what="Chromium's window")
    yield
    kill_session(process)


async def run(gui_session: GuiSession, request: str) -> tuple[RoundRecord, list[Any]]:
    """The round's outcome, and the app agent's actions that ran, as (function, name)."""
    async with gui_session(model="offline") as session:
        outcome = await session.run_round(request)
        steps = session.store.read_steps()
    ran = [(a.function, a.arguments.get("name")) for s in steps for a in s.ran]
    return outcome, ran


def posted_to(record: Path, path: str) -> list[dict[str, str]]:
    return [entry["fields"] for entry in read_posted(record) if entry["path"] == path]


async def test_the_issues_order_form_is_submitted_not_its_tab_clicked(
    gui_session: GuiSession, served: tuple[str, Path]
) -> None:
    """Issue 46's request, word for word: the page is titled "Order", and so is its tab."""
    url, record = served
    request = (
        f"open chromium at {url}/form, type Ada into the Name field and click the Order button"
    )
    outcome, _ = await run(gui_session, request)
    assert outcome.state is RoundState.FINISH, outcome.result
    assert posted_to(record, "/ordered") == [{"name": "Ada"}]


async def test_a_link_before_a_button_of_its_name_is_not_what_the_button_means(
    gui_session: GuiSession, served: tuple[str, Path], browser: None
) -> None:
    url, record = served
    outcome, ran = await run(gui_session, f"go to {url}/twins/ and click the Next button")
    assert outcome.state is RoundState.FINISH, outcome.result
    assert posted_to(record, "/next") == [{"via": "button"}]


async def test_a_heading_that_says_the_fields_label_is_not_the_field(
    gui_session: GuiSession, served: tuple[str, Path], browser: None
) -> None:
    url, record = served
    request = f"go to {url}/note/, type Nice into the Comment field and click the Keep note button"
    outcome, _ = await run(gui_session, request)
    assert outcome.state is RoundState.FINISH, outcome.result
    assert posted_to(record, "/noted") == [{"comment": "Nice"}]


async def test_a_disabled_button_is_not_clicked_nor_its_twin_and_the_round_fails_naming_it(
    gui_session: GuiSession, served: tuple[str, Path], browser: None
) -> None:
    url, record = served
    outcome, ran = await run(gui_session, f"go to {url}/disabled/ and click the Pay button")
    assert outcome.state is RoundState.FAIL
    assert "'Pay' (push button) is disabled" in (outcome.result or "")
    assert ("click_control", "Pay") not in ran  # neither the button nor the link
    assert posted_to(record, "/paid") == []


async def test_a_save_that_cannot_succeed_fails_and_says_so(
    gui_session: GuiSession, tmp_path: Path
) -> None:
    """Nothing can be written in /proc, root or not: the editor says so, and the round FAILs."""
    if shutil.which("gedit") is None:
        pytest.skip("gedit is installed by `make system-deps`")
    target = Path("/proc/roundhouse-trap.txt")
    outcome, _ = await run(gui_session, f"open gedit, type hello and save it as {target}")
    assert outcome.state is RoundState.FAIL, outcome.result
    assert not target.exists()
