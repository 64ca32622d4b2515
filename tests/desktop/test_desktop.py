"""The virtual desktop: start, environment, side by side, and stop leaving nothing behind."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tests.desktop.conftest import (
    QT_APP_TITLE,
    StartApp,
    qt_app_argv,
    wait_for_window,
    wait_until,
)
from typer.testing import CliRunner
from Xlib import display as xdisplay

from roundhouse.cli import app
from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable, current_desktop
from roundhouse.devices.linux.desktops.detached import detached_states, state_alive
from roundhouse.devices.linux.desktops.opening import start_detached, stop_detached
from roundhouse.devices.linux.desktops.services import service_records
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.compositor import BACKGROUND


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _screen(display: str) -> tuple[int, int]:
    connection = xdisplay.Display(display)
    try:
        screen = connection.screen()
        return screen.width_in_pixels, screen.height_in_pixels
    finally:
        connection.close()


def test_environment_switches_on_accessibility(desktop: Desktop) -> None:
    env = desktop.env
    assert env["DISPLAY"] == desktop.display
    assert env["DBUS_SESSION_BUS_ADDRESS"].startswith("unix:path=")
    assert env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] == "1"
    assert env["GSETTINGS_BACKEND"] == "memory"
    assert env["GSK_RENDERER"] == os.environ.get("GSK_RENDERER", "cairo")  # no GPU here
    assert "NO_AT_BRIDGE" not in env and "GTK_A11Y" not in env
    assert _screen(desktop.display) == (desktop.width, desktop.height)


def test_app_command_adds_chromium_accessibility(desktop: Desktop) -> None:
    command = desktop.app_command(["/usr/bin/chromium", "https://example.org"])
    assert command[0] == "/usr/bin/chromium"
    assert "--force-renderer-accessibility" in command
    assert command[-1] == "https://example.org"
    assert desktop.app_command(["gedit", "a.txt"]) == ["gedit", "a.txt"]


def test_chromium_gets_a_throwaway_profile_only_on_a_virtual_desktop(desktop: Desktop) -> None:
    command = desktop.app_command(["chromium", "https://example.org"])
    profile = f"--user-data-dir={desktop.env['XDG_RUNTIME_DIR']}/chromium-profile"
    assert profile in command and "--no-first-run" in command
    assert "--no-default-browser-check" in command
    # The user's own desktop: the user's profile, and Chromium asks what it always asks.
    users = Desktop(desktop.display, dict(desktop.env), desktop.width, desktop.height, False)
    own = users.app_command(["chromium", "https://example.org"])
    assert not any(arg.startswith("--user-data-dir") for arg in own)
    assert "--no-first-run" not in own
    # A profile the caller chose is kept.
    chosen = desktop.app_command(["chromium", "--user-data-dir=/tmp/mine"])
    assert [a for a in chosen if a.startswith("--user-data-dir")] == ["--user-data-dir=/tmp/mine"]
    # Electron apps are not browsers: accessibility yes, a browser profile no.
    assert not any(a.startswith("--user-data-dir") for a in desktop.app_command(["code"]))
    # Started with nothing to open, it opens a blank page: the New Tab page takes the focus
    # from the address bar when it has loaded. A page asked for is opened as it is.
    assert desktop.app_command(["chromium"])[-1] == "about:blank"
    assert "about:blank" not in command
    assert "about:blank" not in users.app_command(["chromium"])


def test_two_desktops_side_by_side_and_stop_leaves_nothing() -> None:
    settings = DesktopSettings(width=800, height=600)
    first, second = VirtualDesktop(settings), VirtualDesktop(settings)
    with first as one, second as two:
        assert one.display != two.display
        assert _screen(one.display) == (800, 600) == _screen(two.display)
        owned = [record.pid for record in first.state().processes + second.state().processes]
        found = [
            service_records(state.bus_address or "", state.a11y_address)
            for state in (first.state(), second.state())
        ]
        # Each desktop activated its own AT-SPI bus launcher on its own session bus.
        launchers = {r.pid for records in found for r in records if r.name == "org.a11y.Bus"}
        assert len(launchers) == 2
        owned += [record.pid for records in found for record in records]
        assert all(_running(pid) for pid in owned)
    assert not any(_running(pid) for pid in owned)
    for display in (one.display, two.display):
        assert not Path(f"/tmp/.X11-unix/X{display.lstrip(':')}").exists()


def test_detached_desktop_is_stopped_from_its_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    started, path = start_detached(DesktopSettings())
    assert path.parent == tmp_path / "roundhouse" / "desktops"
    [(found_path, state)] = detached_states()
    assert found_path == path and state.display == started.display
    assert state_alive(state)
    pids = [record.pid for record in state.processes]
    stop_detached(state, path)
    assert not path.exists()
    assert not state_alive(state)
    assert not any(_running(pid) for pid in pids)


def test_no_display_and_no_xvfb_names_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(DesktopUnavailable, match="apt-get install xvfb"):
        current_desktop({"PATH": os.environ.get("PATH", "")})
    with pytest.raises(DesktopUnavailable, match="Xvfb, openbox, dbus-daemon not installed"):
        VirtualDesktop().start()


def test_current_desktop_uses_the_given_display(desktop: Desktop) -> None:
    bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"]
    mine = current_desktop({"DISPLAY": desktop.display, "DBUS_SESSION_BUS_ADDRESS": bus})
    assert not mine.virtual
    assert (mine.width, mine.height) == (desktop.width, desktop.height)
    assert mine.env["DBUS_SESSION_BUS_ADDRESS"] == bus
    # The user's own apps keep the user's settings and runtime directory.
    assert "GSETTINGS_BACKEND" not in mine.env and "XDG_RUNTIME_DIR" not in mine.env
    assert mine.env.get("GSK_RENDERER") == os.environ.get("GSK_RENDERER")
    assert mine.env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] == "1"


def test_cli_desktop_start_status_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    runner = CliRunner()
    started = runner.invoke(app, ["desktop", "start", "--width", "1024", "--height", "768"])
    assert started.exit_code == 0, started.output
    exports = dict(
        line.removeprefix("export ").split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export ")
    )
    display = exports["DISPLAY"]
    assert _screen(display) == (1024, 768)
    status = runner.invoke(app, ["desktop", "status", "--json"])
    [row] = json.loads(status.stdout)["desktops"]
    assert row["display"] == display and row["status"] == "running"
    pids = [pid for _name, pid in row["processes"]]
    stopped = runner.invoke(app, ["desktop", "stop", display])
    assert stopped.exit_code == 0 and f"stopped {display}" in stopped.stdout
    assert not any(_running(pid) for pid in pids)
    assert "no started desktops" in runner.invoke(app, ["desktop", "status"]).stdout
    missing = runner.invoke(app, ["desktop", "stop", ":99"])
    assert missing.exit_code == 1 and "no started desktop on :99" in missing.stderr


def test_cli_tree_of_a_window_on_the_current_display(
    desktop: Desktop, launch: StartApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.setenv(name, desktop.env[name])
    process = launch(desktop, qt_app_argv())
    wait_for_window(desktop, pid=process.pid)
    runner = CliRunner()

    def listed() -> str | None:
        result = runner.invoke(app, ["tree", "--window", QT_APP_TITLE, "--controls"])
        assert result.exit_code == 0, result.output
        return result.stdout if "[push button] 'Press me'" in result.stdout else None

    shown = wait_until(listed, what="the Qt app's controls")
    assert "[check box] 'Remember me' (unchecked)" in shown
    as_json = runner.invoke(app, ["tree", "--window", QT_APP_TITLE, "--json"])
    data = json.loads(as_json.stdout)
    assert data["root"]["name"] == QT_APP_TITLE and data["root"]["children"]
    unknown = runner.invoke(app, ["tree", "--window", "No such title"])
    assert unknown.exit_code == 1
    assert "no such window" in unknown.stderr and QT_APP_TITLE in unknown.stderr


def test_the_current_desktop_is_one_of_ours_when_its_runtime_folder_says_so(
    desktop: Desktop,
) -> None:
    """A batch task's round runs with --desktop current on the task's virtual desktop: its
    browser must still get the throw-away profile and the blank first page."""
    ours = current_desktop(desktop.env)
    assert ours.virtual and ours.display == desktop.display
    assert ours.app_command(["chromium"])[-1] == "about:blank"
    users = current_desktop({**desktop.env, "XDG_RUNTIME_DIR": "/run/user/1000"})
    assert not users.virtual
    assert "about:blank" not in users.app_command(["chromium"])


@pytest.mark.parametrize("session", ["x11", "sway"])
def test_a_bare_desktop_shows_its_plain_background(session: str) -> None:
    """Not black: a screenshot of a desktop with no window reads as a desktop."""
    with VirtualDesktop(DesktopSettings(session=session)) as desktop:
        with open_display(desktop) as display:
            corners = ((1, 1), (desktop.width - 2, desktop.height - 2))

            def painted() -> bool:  # sway's swaybg paints a moment after sway is up
                image = display.screen.desktop().convert("RGB")
                return all(image.getpixel(corner) == BACKGROUND for corner in corners)

            wait_until(painted, 10, f"the {session} desktop's background")
