"""Apps launched on a virtual desktop end with it: LibreOffice (oosplash re-executes itself
as soffice.bin) and Chromium (zygotes and renderers whose environment reads empty), and
nothing of a second desktop running beside it. Three ways to stop: VirtualDesktop.stop,
`roundhouse desktop stop`, and the end of a `roundhouse run --desktop virtual`.

An idle app usually exits by itself when its X server goes; a busy one does not notice
(the issue's LibreOffice was busy). The tests make soffice.bin and Chromium's browser
process busy for good with SIGSTOP before the desktop stops: without the reaper they, and
Chromium's helpers waiting on the browser, would run on.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest
from tests.desktop.conftest import wait_for_window
from Xlib.error import ConnectionClosedError, DisplayError, XError

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.apps.launch import Launcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.detached import detached_states
from roundhouse.devices.linux.desktops.opening import detached_desktop
from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.base import WindowError
from roundhouse.devices.linux.display.x11.windows import WindowManager, list_windows
from roundhouse.devices.linux.system import procfs
from roundhouse.devices.linux.system.procfs import Proc, ProcessRecord

pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None or shutil.which("soffice") is None,
    reason="chromium and LibreOffice Calc are installed by `make system-deps`",
)

CALC_TITLE = "LibreOffice Calc"
GONE_WITHIN = 5.0  # seconds after the stop returned; the "a few seconds"


def calc_command(profile: Path) -> str:
    """LibreOffice with a profile of its own: a start with a profile that a running
    LibreOffice uses (another test's, the user's) is handed to that one, which stays."""
    return f"soffice --calc --norestore --nologo -env:UserInstallation={profile.as_uri()}"


def family(table: Mapping[int, Proc], roots: Iterable[int]) -> dict[int, Proc]:
    """These processes and their descendants, as the table has them."""
    found = {pid: table[pid] for pid in roots if pid in table}
    grew = True
    while grew:
        new = {pid: p for pid, p in table.items() if p.ppid in found and pid not in found}
        found.update(new)
        grew = bool(new)
    return found


def names(procs: Iterable[Proc | ProcessRecord]) -> list[str]:
    return sorted(p.name for p in procs)


def still_running(records: Iterable[ProcessRecord]) -> list[str]:
    return [f"{r.name} ({r.pid})" for r in records if procfs.alive(r)]


def assert_all_gone(records: Iterable[ProcessRecord], timeout: float = GONE_WITHIN) -> None:
    """Every one of them ends within `timeout` (a zombie has ended: its parent reaps it)."""
    records = list(records)
    deadline = time.monotonic() + timeout
    while still_running(records) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not still_running(records)


def kill_leftovers(records: Iterable[ProcessRecord]) -> None:
    """A failed test must not leave its apps running on the machine."""
    for record in records:
        if procfs.alive(record):
            os.kill(record.pid, signal.SIGKILL)


def freeze(*records: ProcessRecord) -> None:
    """Make the processes busy for good: they will not notice their X server going."""
    for record in records:
        os.kill(record.pid, signal.SIGSTOP)
    for record in records:
        deadline = time.monotonic() + 5
        while (stat := procfs.read_stat(record.pid)) is not None and stat.state != "T":
            assert time.monotonic() < deadline, f"{record.name} did not stop"
            time.sleep(0.01)


def named(records: Iterable[ProcessRecord], name: str) -> ProcessRecord:
    [found] = [record for record in records if record.name == name]
    return found


async def open_apps(desktop: Desktop, profile: Path, calc: bool = True) -> list[int]:
    """Launch Calc (optionally) and Chromium as launch_application does; wait for their
    windows; return the pids started."""
    with (
        WindowManager(desktop.display) as windows,
        Launcher(windows, desktop.env, desktop.app_command) as launcher,
    ):
        try:
            if calc:
                await launcher.launch(calc_command(profile), timeout=90)
                wait_for_window(desktop, title=CALC_TITLE, timeout=90)
            await launcher.launch("chromium about:blank", timeout=90)
            wait_for_window(desktop, title="Chromium", timeout=90)
        except BaseException:
            # Not left to the code under test: the apps and all they forked, by pid.
            kill_leftovers(apps_of(child.pid for child in launcher.launched()))
            raise
        return [child.pid for child in launcher.launched()]


def apps_of(pids: Iterable[int]) -> list[ProcessRecord]:
    table = procfs.snapshot(TAG_ENV)
    return [p.record for p in family(table, pids).values()]


def record_of(pid: int) -> ProcessRecord:
    return procfs.snapshot(TAG_ENV)[pid].record


def test_stop_ends_calc_and_chromium_and_spares_another_desktop(tmp_path: Path) -> None:
    settings = DesktopSettings(width=1280, height=800)
    first, second = VirtualDesktop(settings), VirtualDesktop(settings)
    ours: list[ProcessRecord] = []
    theirs: list[ProcessRecord] = []
    try:
        one, two = first.start(), second.start()
        office, browser = asyncio.run(open_apps(one, tmp_path / "one"))
        ours = apps_of([office, browser])
        # The second desktop runs a Chromium too: the same program, whose processes read
        # untagged, must be told apart by whose X server it talks to.
        [their_browser] = asyncio.run(open_apps(two, tmp_path / "two", calc=False))
        theirs = apps_of([their_browser])
        assert "soffice.bin" in names(ours) and "oosplash" in names(ours)
        assert names(ours).count("chromium") >= 3, names(ours)  # browser, zygote, renderer
        assert names(theirs).count("chromium") >= 3, names(theirs)

        own = first.state().processes  # Xvfb, the bus, openbox
        freeze(named(ours, "soffice.bin"), record_of(browser))
        started = time.monotonic()
        first.stop()
        assert time.monotonic() - started < 15
        assert_all_gone(ours + own)
        # The other desktop and its browser carry on (a helper may end on its own: the
        # browser and most of them stay).
        assert procfs.alive(record_of(their_browser))
        assert len(still_running(theirs)) >= 3, names(theirs)
        wait_for_window(two, title="Chromium", timeout=5)
        second.stop()
        assert_all_gone(theirs)
    finally:
        first.stop()
        second.stop()
        kill_leftovers(ours + theirs)


@pytest.fixture
def cli_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment for roundhouse commands with its own state folder and HOME (the
    apps' profiles); whatever desktop they start is stopped at the end."""
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    for name in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", TAG_ENV):
        env.pop(name, None)
    yield env
    roundhouse(env, "desktop", "stop", "--all")


def roundhouse(env: Mapping[str, str], *args: str, timeout: float = 180) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the round failed, its apps ran
    return done.stdout


def test_cli_desktop_stop_ends_what_the_agent_and_the_user_launched(
    cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = json.loads(roundhouse(cli_env, "desktop", "start", "--json"))
    display = started["display"]
    monkeypatch.setenv("XDG_RUNTIME_DIR", cli_env["XDG_RUNTIME_DIR"])
    [(_path, state)] = detached_states()
    desktop = detached_desktop(state)
    chromium: subprocess.Popen[bytes] | None = None
    apps: list[ProcessRecord] = []
    try:
        # The agent opens Calc on the started desktop (and the round ends: the offline
        # model has nothing more to do in it); the app stays on the desktop.
        roundhouse(
            cli_env,
            "run",
            "open LibreOffice Calc",
            "--desktop",
            display,
            "--agent",
            "host",
            "--logs",
            str(tmp_path / "logs"),
        )
        calc = wait_for_window(desktop, title=CALC_TITLE, timeout=90)
        # The user starts Chromium from a shell pointed at the desktop with
        # `eval "$(roundhouse desktop start)"`: no tag, and in the user's (here pytest's)
        # session; only the X server can say that it is the desktop's.
        chromium = subprocess.Popen(
            [
                "chromium",
                "--no-sandbox",
                f"--user-data-dir={tmp_path / 'chromium'}",
                "--no-first-run",
                "about:blank",
            ],
            env={**cli_env, "DISPLAY": display},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_window(desktop, title="Chromium", timeout=90)
        table = procfs.snapshot(TAG_ENV)
        agents = [pid for pid, p in table.items() if p.tag == state.tag]
        apps = [p.record for p in family(table, [*agents, chromium.pid]).values()]
        assert calc.pid is not None and calc.pid in {r.pid for r in apps}
        assert "soffice.bin" in names(apps) and names(apps).count("chromium") >= 3
        freeze(named(apps, "soffice.bin"), record_of(chromium.pid))

        stop = time.monotonic()
        assert f"stopped {display}" in roundhouse(cli_env, "desktop", "stop", display)
        assert time.monotonic() - stop < 20
        chromium.wait(GONE_WITHIN)
        assert_all_gone(apps)
        assert_all_gone(state.processes)
    finally:
        # Not left to the code under test: what the agent launched carries the tag.
        table = procfs.snapshot(TAG_ENV)
        kill_leftovers([*apps, *(p.record for p in table.values() if p.tag == state.tag)])
        if chromium is not None:
            kill_leftovers(apps_of([chromium.pid]))
            chromium.wait()


def shown(found: Mapping[int, Proc], program: str, run: int) -> ProcessRecord | None:
    """The app's process, once its desktop shows a window (the run's desktop is found
    through openbox's environment, which has its DISPLAY)."""
    app = next(
        (
            p
            for p in found.values()
            # Chromium's browser is the run's child; its helpers have the same name.
            if p.name == program and (program != "chromium" or p.ppid == run)
        ),
        None,
    )
    openbox = next((p for p in found.values() if p.name == "openbox"), None)
    if app is None or openbox is None:
        return None
    try:
        environ = Path(f"/proc/{openbox.pid}/environ").read_bytes()
        display = procfs.environ_value(environ, "DISPLAY")
        return app.record if display and list_windows(display) else None
    except (OSError, WindowError, XError, ConnectionClosedError, DisplayError):
        return None  # the desktop is not up yet, or already going


@pytest.mark.parametrize(
    ("application", "program"), [("LibreOffice Calc", "soffice.bin"), ("Chromium", "chromium")]
)
def test_a_run_on_a_virtual_desktop_leaves_nothing(
    application: str, program: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # Every process the run starts is its descendant or carries its environment (a
    # marker of this test), until the desktop re-parents it; the test watches both.
    marker = uuid.uuid4().hex
    env = {**cli_env, "RH_TEST_RUN": marker}
    with (tmp_path / "run.err").open("wb") as errors:
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "roundhouse",
                "run",
                f"open {application}",
                "--desktop",
                "virtual",
                "--agent",
                "host",
                "--logs",
                str(tmp_path / "logs"),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    seen: dict[ProcessRecord, None] = {}
    busy: ProcessRecord | None = None
    busy_while_up = False
    try:
        while run.poll() is None:
            table = procfs.snapshot("RH_TEST_RUN")
            marked = [pid for pid, p in table.items() if p.tag == marker]
            found = family(table, [run.pid, *marked])
            seen.update(dict.fromkeys(p.record for p in found.values() if p.pid != run.pid))
            if busy is None and (busy := shown(found, program, run.pid)) is not None:
                freeze(busy)
                xvfb = named(seen, "Xvfb")
                busy_while_up = run.poll() is None and procfs.alive(xvfb)
            time.sleep(0.05)
        run.wait(timeout=5)
        assert run.returncode in (0, 1), (tmp_path / "run.err").read_text()
        assert busy is not None and busy_while_up, names(seen)
        # The run has ended: so has all it started.
        assert_all_gone(seen)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        kill_leftovers(seen)
