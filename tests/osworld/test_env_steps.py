"""OSWorld's steps and getters on a real OSWorld environment (a virtual desktop, its own
home, real applications): what the batch and the server both rest on."""

from __future__ import annotations

import asyncio
import time
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from roundhouse.devices.contract import WindowInfo
from roundhouse.osworld.env import OsworldDesktop, OsworldEnv
from roundhouse.osworld.files import FileCache
from roundhouse.osworld.getters import GETTERS
from roundhouse.osworld.steps import NotRunnable, StepError, run_steps
from roundhouse.osworld.tasks import Step
from tests.osworld.conftest import EXAMPLES

WAIT = 30.0


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[OsworldEnv]:
    async with OsworldDesktop(tmp_path / "env", files=FileCache(EXAMPLES / "files")) as opened:
        yield opened


async def steps(env: OsworldEnv, *given: tuple[str, dict[str, object]]) -> None:
    await run_steps(env, [Step(type=kind, parameters=dict(p)) for kind, p in given])


async def window(env: OsworldEnv, match: Callable[[WindowInfo], bool]) -> WindowInfo:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = [w for w in env.display.windows.list_windows() if match(w)]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no such window; there are {env.display.windows.list_windows()}")


async def focus_settled(env: OsworldEnv, quiet: float = 1.0) -> None:
    """Wait until the active window has stayed the same for `quiet` seconds. gedit presents
    its window once it has started, with a _NET_ACTIVE_WINDOW request of its own that
    openbox grants (it takes every activation for the user's): an activation made before
    then is undone some 50 ms later."""
    deadline = time.monotonic() + WAIT
    active, since = env.display.windows.active_window(), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, "the focus kept moving"
        await asyncio.sleep(0.05)
        now = env.display.windows.active_window()
        if now != active:
            active, since = now, time.monotonic()


async def test_pkill_and_killall_end_this_desktops_processes_only(
    env: OsworldEnv, tmp_path: Path
) -> None:
    async with OsworldDesktop(tmp_path / "other") as other:
        theirs = other.spawn(["sleep", "600"])
        ours = [env.spawn(["sleep", "600"]), env.spawn(["sleep", "601"])]
        await steps(env, ("launch", {"command": ["pkill", "-f", "sleep 600"]}))
        assert ours[0].wait(timeout=10) is not None
        assert ours[1].poll() is None and theirs.poll() is None
        await steps(env, ("execute", {"command": ["/bin/bash", "-c", "killall sleep"]}))
        assert ours[1].wait(timeout=10) is not None
        assert theirs.poll() is None  # another desktop's process: never touched


async def test_execute_fills_placeholders_keeps_output_and_runs_until(env: OsworldEnv) -> None:
    await steps(
        env,
        ("execute", {"command": "echo {CLIENT_PASSWORD} {SCREEN_WIDTH_HALF} > /home/user/p.txt",
                     "shell": True}),
        ("command", {"command": ["ls", "/home/user"], "stdout": "ls.out"}),
        ("execute", {"command": "echo x >> ~/n.txt; wc -l < ~/n.txt", "shell": True,
                     "until": {"stdout": "3"}}),
    )  # fmt: skip
    assert (env.home / "p.txt").read_text() == "password 960\n"
    assert "p.txt" in (env.cache / "ls.out").read_text()
    assert (env.home / "n.txt").read_text() == "x\nx\nx\n"


async def test_download_copies_from_the_cache_into_the_home_only(env: OsworldEnv) -> None:
    url = "https://any.host/datasets/rh/resolve/main/os/rh-os-photos/notes.txt"
    both = [{"url": url, "path": "Desktop/n.txt"}, {"url": url, "path": "/home/user/m.txt"}]
    await steps(env, ("download", {"files": both}))
    assert (env.home / "Desktop" / "n.txt").read_text() == "a note\n"
    assert (env.home / "m.txt").read_text() == "a note\n"
    with pytest.raises(StepError, match="outside the task's home"):
        await steps(env, ("download", {"files": [{"url": url, "path": "/etc/rh-test.txt"}]}))
    with pytest.raises(StepError, match="outside the task's home"):
        await steps(env, ("download", {"files": [{"url": url, "path": "../../escape.txt"}]}))
    with pytest.raises(NotRunnable, match="not in the file cache"):
        await steps(env, ("download", {"files": [{"url": url + "x", "path": "a"}]}))
    with pytest.raises(NotRunnable, match="'login'"):
        await steps(env, ("login", {}))


async def test_windows_are_launched_activated_and_closed_as_wmctrl_names_them(
    env: OsworldEnv,
) -> None:
    await steps(env, ("launch", {"command": "gedit"}), ("launch", {"command": ["xterm"]}))
    gedit = await window(env, lambda w: "gedit" in w.title)
    await window(env, lambda w: w.application.lower() == "xterm")
    await focus_settled(env)
    await steps(env, ("activate_window", {"window_name": "GEDIT"}))  # case is ignored
    assert env.display.windows.active_window() == env.display.windows.get(gedit.xid)
    await steps(env, ("activate_window", {"window_name": "XTerm", "by_class": True}))
    assert (env.display.windows.active_window() or gedit).application == "XTerm"
    await steps(env, ("activate_window", {"window_name": "gedit", "strict": True}))  # no match
    await steps(env, ("close_window", {"window_name": "xterm", "by_class": True}))
    deadline = time.monotonic() + WAIT
    while any(w.application == "XTerm" for w in env.display.windows.list_windows()):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    size = await GETTERS["vm_window_size"](env, {"app_class_name": "gedit"})
    assert size == {"width": gedit.rect.width, "height": gedit.rect.height}


async def test_open_shows_a_document_in_its_application(env: OsworldEnv) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet["A1"] = "opened"
    book.save(env.home / "Desktop" / "sheet.xlsx")
    await steps(env, ("open", {"path": "/home/user/Desktop/sheet.xlsx"}))
    shown = await window(env, lambda w: w.title.startswith("sheet.xlsx"))
    assert "LibreOffice Calc" in shown.title
    assert env.display.windows.active_window() == env.display.windows.get(shown.xid)
    tree = ET.fromstring(await env.accessibility_xml())
    assert any(app.get("name", "").startswith("soffice") for app in tree.iter("application"))


async def test_chrome_tabs_open_and_close_through_devtools(env: OsworldEnv) -> None:
    pages = ["data:text/html,<title>one</title>one", "data:text/html,<title>two</title>two"]
    await steps(
        env,
        ("launch", {"command": ["google-chrome", "--remote-debugging-port=1337"]}),
        ("launch", {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]}),
        ("chrome_open_tabs", {"urls_to_open": pages}),
    )
    devtools = f"http://127.0.0.1:{env.devtools_port}/json/list"

    async def titles(wanted: list[str]) -> list[str]:
        deadline = time.monotonic() + WAIT
        while True:  # a tab's title comes once its page has loaded
            listed = httpx.get(devtools, timeout=10).json()
            shown = sorted(t["title"] for t in listed if t["type"] == "page")
            if shown == wanted or time.monotonic() > deadline:
                return shown
            await asyncio.sleep(0.1)

    assert await titles(["one", "two"]) == ["one", "two"]  # the first, blank tab is closed
    await steps(env, ("chrome_close_tabs", {"urls_to_close": [pages[0]]}))
    assert await titles(["two"]) == ["two"]
    assert (env.home / ".config" / "google-chrome").is_dir()  # OSWorld's profile folder


async def test_getters_read_what_osworlds_read(env: OsworldEnv) -> None:
    (env.home / "Desktop" / "a.txt").write_text("A")
    got = await GETTERS["vm_file"](env, {"path": ["/home/user/Desktop/a.txt", "~/nothing"],
                                         "dest": ["a.txt", "b.txt"], "multi": True,
                                         "gives": [0, 1]})  # fmt: skip
    assert got == [str(env.cache / "a.txt"), None]
    assert await GETTERS["vm_command_line"](env, {"command": "echo $HOME", "shell": True}) == (
        f"{env.home}\n"
    )
    assert await GETTERS["vm_command_error"](env, {"command": ["ls", "/nowhere"]})
    assert await GETTERS["vm_command_line"](env, {"command": ["no-such-program"]}) is None
    assert await GETTERS["list_directory"](env, {"path": "/home/user/nowhere"}) is None
    listing = await GETTERS["list_directory"](env, {"path": "/home/user"})
    assert (
        listing["name"] == "user" and {"type": "file", "name": ".Xauthority"} in listing["children"]
    )
    assert await GETTERS["vm_screen_size"](env, {}) == {"width": 1920, "height": 1080}
    cloud = "https://x/datasets/rh/resolve/main/os/rh-os-compare/original.txt"
    path = await GETTERS["cloud_file"](env, {"path": cloud, "dest": "o.txt"})
    assert Path(path).read_text() == "The  original\ttext.\n"
    with pytest.raises(NotRunnable):
        await GETTERS["cloud_file"](env, {"path": cloud + "x", "dest": "p.txt"})
    with pytest.raises(FileNotFoundError):
        await GETTERS["cache_file"](env, {"path": "never-written.txt"})
    assert await GETTERS["vm_terminal_output"](env, {}) is None  # no terminal open
