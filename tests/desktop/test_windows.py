"""Windows and applications through the window manager: list, activate, launch, close."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import (
    QT_APP_TITLE,
    StartApp,
    gedit_argv,
    qt_app_argv,
    wait_for_window,
    wait_until,
)
from Xlib import X  # type: ignore[import-untyped, unused-ignore]
from Xlib import display as xdisplay  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.apps.launch import Launcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.base import WindowError, find_window
from roundhouse.devices.linux.display.x11.windows import WindowManager


def test_list_windows_describes_a_real_window(
    desktop: Desktop, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    (window,) = [w for w in windows.list_windows() if w.pid == process.pid]
    assert window.title == QT_APP_TITLE
    assert window.application  # WM_CLASS
    assert 0 <= window.rect.left < window.rect.right <= desktop.width
    assert 0 <= window.rect.top < window.rect.bottom <= desktop.height
    assert window.rect.width >= 200 and window.rect.height >= 100


async def test_activate_switches_the_active_window(
    desktop: Desktop, windows: WindowManager, launch: StartApp, tmp_path: Path
) -> None:
    qt = launch(desktop, qt_app_argv())
    qt_window = wait_for_window(desktop, pid=qt.pid, title=QT_APP_TITLE)
    editor = launch(desktop, gedit_argv(str(tmp_path / "a.txt")))
    # The title names the file once gedit has loaded it and presented its window for the
    # last time; activating before that loses the focus to gedit's late present.
    editor_window = wait_for_window(desktop, pid=editor.pid, title="a.txt")

    activated = await windows.activate(qt_window.xid)
    active_now = windows.active_window()
    assert activated.active and active_now is not None and active_now.xid == activated.xid
    activated = await windows.activate(editor_window.xid)
    assert activated.xid == editor_window.xid and activated.active
    active = [w.xid for w in windows.list_windows() if w.active]
    assert active == [editor_window.xid]


async def test_close_window_removes_it(
    desktop: Desktop, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    assert await windows.close_window(window.xid)
    assert window.xid not in [w.xid for w in windows.list_windows()]
    assert process.wait(timeout=10) == 0  # the app quit on its own: closing is not killing


async def test_launch_by_desktop_entry_name_opens_its_window(
    desktop: Desktop, windows: WindowManager, tmp_path: Path
) -> None:
    # An entry of the test's own (the machine's may be hidden: scripts/with-apps.sh), as
    # Debian's org.gnome.gedit.desktop: Name=gedit, Exec=gedit %U, Categories TextEditor.
    data = tmp_path / "data"
    (data / "applications").mkdir(parents=True)
    (data / "applications" / "org.roundhouse.Notes.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Notes\nExec=gedit --standalone %U\n"
        "Categories=GNOME;GTK;Utility;TextEditor;\n"
    )
    env = {**desktop.env, "XDG_DATA_HOME": str(data)}
    with Launcher(windows, env) as launcher:
        try:
            launched = await launcher.launch("org.roundhouse.Notes")
            window = launched.window
            assert window.application.lower() == "gedit"
            assert launched.started == "Notes — Text Editor" and launched.failed == ()
            # By id: gedit 48 (Debian 13) titles its window 'gedit' a moment before it names
            # the document in it.
            assert window.xid in [w.xid for w in windows.list_windows()]
            assert await windows.close_window(window.xid)
        finally:
            launcher.kill_launched()


async def test_launch_a_command_opens_its_window(launcher: Launcher) -> None:
    command = f"{qt_app_argv()[0]} {qt_app_argv()[1]}"
    launched = await launcher.launch(command)
    assert launched.window.title == QT_APP_TITLE
    assert launched.started == command


async def test_unknown_application_names_the_known_ones(launcher: Launcher) -> None:
    # xterm is installed on every machine of this project (scripts/system-deps.sh).
    with pytest.raises(WindowError, match="no application or command 'no-such-app'.*XTerm"):
        await launcher.launch("no-such-app")


async def test_unknown_window_names_the_existing_ones(
    desktop: Desktop, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    with pytest.raises(WindowError, match=f"no window with id 12345.*{window.xid}.*{QT_APP_TITLE}"):
        await windows.activate(12345)
    with pytest.raises(WindowError, match=f"no window titled 'Nope'.*{QT_APP_TITLE}"):
        find_window(windows.list_windows(), "Nope")
    assert (
        find_window(windows.list_windows(), "roundhouse qt").xid == window.xid
    )  # substring, any case


def test_find_window_prefers_an_exact_title() -> None:
    from roundhouse.devices.contract import Rect, WindowInfo

    rect = Rect(left=0, top=0, right=10, bottom=10)
    a = WindowInfo(
        xid=1, title="notes.txt - gedit", application="Gedit", pid=1, rect=rect, active=False
    )
    b = WindowInfo(xid=2, title="notes", application="Qt", pid=2, rect=rect, active=True)
    assert find_window([a, b], "notes").xid == 2
    assert find_window([a, b], "GEDIT").xid == 1


def test_windows_command_lists_the_windows(desktop: Desktop, launch: StartApp) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    roundhouse = str(Path(sys.executable).with_name("roundhouse"))
    done = subprocess.run(
        [roundhouse, "windows", "--json", "--desktop", "current"],
        env=desktop.env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    listed = {entry["xid"]: entry for entry in json.loads(done.stdout)}
    assert listed[window.xid]["title"] == QT_APP_TITLE
    assert listed[window.xid]["pid"] == process.pid


async def test_activate_restores_a_minimised_window(
    desktop: Desktop, windows: WindowManager, launcher: Launcher
) -> None:
    window = (await launcher.launch(" ".join(qt_app_argv()))).window
    connection = xdisplay.Display(desktop.display)

    def minimised() -> bool:
        # ICCCM: ask the window manager to iconify the window. openbox may drop the
        # request while it is still settling a new window in, so it is asked again.
        target = connection.create_resource_object("window", window.xid)
        message = event.ClientMessage(
            window=target,
            client_type=connection.intern_atom("WM_CHANGE_STATE"),
            data=(32, [3, 0, 0, 0, 0]),  # IconicState
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        connection.screen().root.send_event(message, event_mask=mask)
        connection.sync()
        return not windows.viewable(window.xid)

    try:
        wait_until(minimised, what="the window to be minimised")
    finally:
        connection.close()
    activated = await windows.activate(window.xid)
    assert activated.active and windows.viewable(window.xid)


# --- launching by what an application is -----------------------------------------------
# These run with the machine's own applications (scripts/system-deps.sh installs gedit,
# vim, nano and xterm) but a tmp HOME, so the user's own defaults do not decide.


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A tmp HOME with an empty config and applications folder."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".local/share/applications").mkdir(parents=True)
    return home


@pytest.fixture
def home_launcher(desktop: Desktop, windows: WindowManager, home: Path) -> Iterator[Launcher]:
    """A Launcher whose apps (and their lookup) get the tmp HOME."""
    env = {k: v for k, v in desktop.env.items() if k not in ("XDG_CONFIG_HOME", "XDG_DATA_HOME")}
    with Launcher(windows, {**env, "HOME": str(home)}) as opened:
        yield opened
        opened.kill_launched()


# What "the text editor" is on this machine, as a person knows it (scripts/with-apps.sh
# presents gedit only, GNOME Text Editor only, or both): a graphical one, never vim.
GRAPHICAL_EDITORS = {"gedit — Text Editor": "gedit", "Text Editor": "gnome-text-editor"}


async def test_text_editor_is_a_graphical_one_though_vim_is_the_users_default(
    windows: WindowManager, home_launcher: Launcher, home: Path
) -> None:
    assert shutil.which("vim"), "vim must be installed (scripts/system-deps.sh all)"
    (home / ".config/mimeapps.list").write_text("[Default Applications]\ntext/plain=vim.desktop\n")
    launched = await home_launcher.launch("text editor")
    assert launched.started in GRAPHICAL_EDITORS and launched.failed == ()
    assert launched.window.application.lower() == GRAPHICAL_EDITORS[launched.started]
    assert await windows.close_window(launched.window.xid)


async def test_vim_opens_in_a_terminal_window(desktop: Desktop, home_launcher: Launcher) -> None:
    launched = await home_launcher.launch("vim")
    assert launched.started == "Vim — Text Editor (runs in a terminal)"
    assert launched.window.pid is not None
    assert _process_name(launched.window.pid) != "vim"  # the window is the terminal's

    def vim_on_this_desktop() -> bool:
        return any(
            _process_name(pid) == "vim" and _environ(pid).get("DISPLAY") == desktop.display
            for pid in _pids()
        )

    wait_until(vim_on_this_desktop, what=f"a vim process on {desktop.display}")


async def test_a_failing_default_falls_through_to_the_next_editor(
    windows: WindowManager, home_launcher: Launcher, home: Path
) -> None:
    (home / ".local/share/applications/broken-editor.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Broken Editor\nGenericName=Text Editor\n"
        "Exec=false\nCategories=Utility;TextEditor;\n"
    )
    (home / ".config/mimeapps.list").write_text(
        "[Default Applications]\ntext/plain=broken-editor.desktop\n"
    )
    launched = await home_launcher.launch("text editor")
    assert launched.failed == ("Broken Editor — Text Editor: false exited with status 1",)
    assert launched.started in GRAPHICAL_EDITORS
    program = GRAPHICAL_EDITORS[launched.started]
    assert launched.window.application.lower() == program
    # The launch that failed is not left among the launched processes.
    assert [child.args[-1] for child in home_launcher.launched()] == [program]


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:  # ended meanwhile, or not ours to read
        return ""


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {key: value for key, _, value in pairs}


def test_a_core_x_error_is_itself_and_the_connection_goes_on(desktop: Desktop) -> None:
    """python-xlib registers RandR's errors over the core BadRequest and BadValue, in a table
    every connection shares: a BadValue was read as BadRRModeError, a plain Exception, and
    the connection then hung (display/x11/__init__.py puts the core classes back)."""
    from Xlib import Xatom, error  # type: ignore[import-untyped, unused-ignore]

    connection = xdisplay.Display(desktop.display)  # RandR's init has run for it
    try:
        assert connection.has_extension("RANDR")
        root = connection.screen().root
        atom = connection.intern_atom("RH_THREE_BYTES")
        root.change_property(atom, Xatom.STRING, 8, b"abc")
        with pytest.raises(error.BadValue):  # an offset past the property's end
            root.get_property(atom, Xatom.STRING, 1000, 10)
        assert root.get_geometry().width == desktop.width  # answered: not wedged
    finally:
        connection.close()
