"""GIMP, LibreOffice Impress, Thunderbird and VLC started by OSWorld's own launch steps, as
its VM starts them: main windows maximised where the VM's are (VLC's at its own size),
profiles in the task's home, VLC's HTTP interface answering OSWorld's getter's request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from roundhouse.osworld.apps import OFFICE_PROFILE, VLC_PASSWORD, which_app
from roundhouse.osworld.env import OsworldDesktop, OsworldEnv
from roundhouse.osworld.files import FileCache
from tests.osworld.standin_files import PROFILE_URL, write_cache
from tests.osworld.test_env_steps import steps, window

STEADY = 2.0  # seconds a window must keep its size to count as settled


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[OsworldEnv]:
    async with OsworldDesktop(tmp_path / "env") as opened:
        yield opened


async def settled(env: OsworldEnv, title: str) -> tuple[int, int, int, int]:
    """The rectangle of the app's main window (its title holds `title`: GIMP's splash
    window comes first) once it has stopped changing."""
    found = await window(env, lambda w: title in w.title)
    last, since = None, time.monotonic()
    deadline = since + 60.0
    while time.monotonic() - since < STEADY:
        assert time.monotonic() < deadline, f"{title}'s window kept changing"
        rect = env.display.windows.get(found.xid).rect
        now = (rect.left, rect.top, rect.right, rect.bottom)
        if now != last:
            last, since = now, time.monotonic()
        await asyncio.sleep(0.2)
    assert last is not None
    return last


def screen_filling(rect: tuple[int, int, int, int], env: OsworldEnv) -> bool:
    """Maximised: the whole screen's width, and its height but for the title bar."""
    left, top, right, bottom = rect
    return right - left == env.desktop.width and bottom - top >= env.desktop.height - 40


async def test_gimp_and_thunderbird_open_maximised(env: OsworldEnv) -> None:
    await steps(env, ("launch", {"command": ["gimp"]}), ("launch", {"command": ["thunderbird"]}))
    assert screen_filling(await settled(env, "GNU Image Manipulation Program"), env)
    assert screen_filling(await settled(env, "Mozilla Thunderbird"), env)
    assert (env.home / ".thunderbird").is_dir()  # its profile, in the task's home
    assert (env.home / ".config" / "GIMP").is_dir()


async def test_impress_opens_maximised_in_the_homes_profile(env: OsworldEnv) -> None:
    await steps(env, ("launch", {"command": ["libreoffice", "--impress"]}))
    assert screen_filling(await settled(env, "LibreOffice Impress"), env)
    settings = env.home / OFFICE_PROFILE / "user" / "registrymodifications.xcu"
    assert "WarnAlienFormat" in settings.read_text()
    # LibreOffice writes its own settings there as it runs: the profile is the one it uses.
    deadline = time.monotonic() + 30.0
    while not (env.home / OFFICE_PROFILE / "user" / "extensions").exists():
        assert time.monotonic() < deadline, "LibreOffice did not use the home's profile"
        await asyncio.sleep(0.2)


async def test_vlc_opens_at_its_own_size_with_its_http_interface(env: OsworldEnv) -> None:
    # As OSWorld's vlc tasks launch it: a shell command with a variable before the program.
    command = "VLC_VERBOSE=-1 vlc --no-audio --no-video-title-show"
    await steps(env, ("launch", {"command": command, "shell": True}))
    left, top, right, bottom = await settled(env, "VLC media player")
    assert right - left < env.desktop.width and bottom - top < env.desktop.height - 40
    url = f"http://127.0.0.1:{env.vlc_port}/requests/status.xml"
    deadline = time.monotonic() + 30.0
    async with httpx.AsyncClient(timeout=5.0) as http:
        while True:
            try:
                answer = await http.get(url, auth=("", VLC_PASSWORD))
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "VLC's HTTP interface never answered"
                await asyncio.sleep(0.3)
        assert answer.status_code == 200 and b"<state>stopped</state>" in answer.content
        assert (await http.get(url, auth=("", "wrong"))).status_code == 401


def test_which_app_reads_commands_as_the_launch_step_gets_them() -> None:
    assert which_app(["gimp", "/home/user/Desktop/a.png"]) is not None
    assert which_app(["/usr/bin/thunderbird"]) is not None
    shell = ["/bin/sh", "-c", "VLC_VERBOSE=-1 vlc --no-audio"]
    found = which_app(shell)
    assert found is not None and not found.maximised
    assert which_app(["/bin/sh", "-c", "echo 'unclosed"]) is None
    assert which_app(["gedit"]) is None and which_app([]) is None


async def test_thunderbird_takes_the_profile_a_task_unpacks(tmp_path: Path) -> None:
    """As OSWorld's thunderbird tasks set it up: the profile's archive downloaded, unpacked
    into the home, Thunderbird launched; it opens that profile's account, maximised, and
    `ready` returns once its window shows."""
    write_cache(tmp_path / "files")
    async with OsworldDesktop(tmp_path / "env", files=FileCache(tmp_path / "files")) as env:
        await steps(
            env,
            ("download", {"files": [{"url": PROFILE_URL,
                                     "path": "/home/user/thunderbird-profile.tar.gz"}]}),
            ("execute", {"command": ["tar", "-xzv", "--recursive-unlink", "-f",
                                     "/home/user/thunderbird-profile.tar.gz", "-C",
                                     "/home/user/"]}),
            ("launch", {"command": ["/usr/bin/thunderbird"]}),
        )  # fmt: skip
        await env.apps.ready()
        titles = [w.title for w in env.display.windows.list_windows()]
        assert any("Mozilla Thunderbird" in title for title in titles), titles
        assert screen_filling(await settled(env, "anonym-x2024@outlook.com"), env)
        assert sorted(p.name for p in (env.home / ".thunderbird").glob("*.default*")) == [
            "t5q2a5hp.default-release"
        ]


async def test_chromes_tabs_and_address_bar_as_osworlds_getters_read_them(
    env: OsworldEnv,
) -> None:
    """OSWorld's google-chrome is Chromium here: its tabs come from DevTools, and its tree
    names it Google Chrome, whose address bar OSWorld's active_url_from_accessTree reads."""
    from roundhouse.osworld.getters import GETTERS

    pages = ["data:text/html,<title>One</title>1", "data:text/html,<title>Two</title>2"]
    await steps(
        env,
        ("launch", {"command": ["google-chrome", "--remote-debugging-port=1337"]}),
        ("chrome_open_tabs", {"urls_to_open": pages}),
    )
    deadline = time.monotonic() + 30.0
    while True:
        tabs = await GETTERS["open_tabs_info"](env, {})
        if sorted(t["title"] for t in tabs) == ["One", "Two"] or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.3)
    assert sorted(t["title"] for t in tabs) == ["One", "Two"], tabs
    await env.apps.ready()
    assert screen_filling(await settled(env, "Chromium"), env)  # as the VM's Chrome
    url = None
    while url is None and time.monotonic() < deadline + 30.0:  # its tree comes up later
        url = await GETTERS["active_url_from_accessTree"](env, {"goto_prefix": ""})
        await asyncio.sleep(0.5)
    assert url is not None and url.startswith("data:text/html"), url
    assert '<application name="Google Chrome"' in await env.accessibility_xml()
