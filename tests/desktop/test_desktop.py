"""The virtual desktop: start, environment, side by side, and stop leaving nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from Xlib import display as xdisplay

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux import desktop as desktop_module
from roundhouse.devices.linux.desktop import (
    Desktop,
    DesktopUnavailable,
    VirtualDesktop,
    current_desktop,
)


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
    assert "NO_AT_BRIDGE" not in env and "GTK_A11Y" not in env
    assert _screen(desktop.display) == (desktop.width, desktop.height)


def test_app_command_adds_chromium_accessibility(desktop: Desktop) -> None:
    command = desktop.app_command(["/usr/bin/chromium", "https://example.org"])
    assert command[0] == "/usr/bin/chromium"
    assert "--force-renderer-accessibility" in command
    assert command[-1] == "https://example.org"
    assert desktop.app_command(["gedit", "a.txt"]) == ["gedit", "a.txt"]


def test_two_desktops_side_by_side_and_stop_leaves_nothing() -> None:
    settings = DesktopSettings(width=800, height=600)
    first, second = VirtualDesktop(settings), VirtualDesktop(settings)
    with first as one, second as two:
        assert one.display != two.display
        assert _screen(one.display) == (800, 600) == _screen(two.display)
        owned = [record.pid for record in first.state().processes + second.state().processes]
        services = desktop_module._activated_by(
            [first.state().bus_address, second.state().bus_address]
        )
        # Each desktop activated its own AT-SPI bus launcher on its own session bus.
        assert sum(record.name.startswith("at-spi-bus") for record in services) == 2
        owned += [record.pid for record in services]
        assert all(_running(pid) for pid in owned)
    assert not any(_running(pid) for pid in owned)
    for display in (one.display, two.display):
        assert not Path(f"/tmp/.X11-unix/X{display.lstrip(':')}").exists()


def test_detached_desktop_is_stopped_from_its_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    started, path = desktop_module.start_detached(DesktopSettings())
    assert path.parent == tmp_path / "roundhouse" / "desktops"
    [(found_path, state)] = desktop_module.detached_states()
    assert found_path == path and state.display == started.display
    assert desktop_module.state_alive(state)
    pids = [record.pid for record in state.processes]
    desktop_module.stop_detached(state, path)
    assert not path.exists()
    assert not desktop_module.state_alive(state)
    assert not any(_running(pid) for pid in pids)


def test_no_display_and_no_xvfb_names_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(desktop_module.shutil, "which", lambda name: None)
    with pytest.raises(DesktopUnavailable, match="apt-get install xvfb"):
        current_desktop({"PATH": os.environ.get("PATH", "")})
    with pytest.raises(DesktopUnavailable, match="Xvfb, dbus-daemon, openbox not installed"):
        VirtualDesktop().start()


def test_current_desktop_uses_the_given_display(desktop: Desktop) -> None:
    bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"]
    mine = current_desktop({"DISPLAY": desktop.display, "DBUS_SESSION_BUS_ADDRESS": bus})
    assert not mine.virtual
    assert (mine.width, mine.height) == (desktop.width, desktop.height)
    assert mine.env["DBUS_SESSION_BUS_ADDRESS"] == bus
