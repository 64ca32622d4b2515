"""A locked screen is an outcome, not a place to type: with a real locker up (i3lock on
X11, swaylock on sway, GNOME Shell's screen shield, KWin's screen locker), a run FAILs
naming it, and no action is run. On a person's own sway
the locker is found by its process, and the session lock is never asked for."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from tests.desktop.conftest import kill_session, wait_until
from tests.person.conftest import WATCHED, settings_for

from roundhouse.config import Settings
from roundhouse.core.commands import ResultStatus
from roundhouse.core.states import RoundState
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.gnome.shell import with_shell_module
from roundhouse.devices.linux.display.wayland.dbus import BusGone, DBusCallError, SyncBus
from roundhouse.devices.linux.display.wlroots import lockers
from roundhouse.devices.linux.doctor import diagnose
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry, person_tools
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.compose import compose_session

LOCKERS = {"x11": ["i3lock", "--nofork"], "sway": ["swaylock"]}


def start_locker(desktop: Desktop) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        LOCKERS[desktop.kind],
        env=desktop.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.fixture(params=WATCHED)
def locked(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual desktop whose screen a real locker has locked."""
    with VirtualDesktop(settings_for(request.param).desktop) as desktop:
        if desktop.kind in ("gnome", "kde"):
            lock_session(desktop)
            yield desktop
            return
        locker = start_locker(desktop)
        try:
            with open_display(desktop) as display:
                if desktop.kind == "sway":
                    # The probe asks for the lock (or the inhibitor) for a moment: asked
                    # while swaylock asks, it would refuse swaylock. Seen first, not asked.
                    wait_until(lambda: not bare(display), 20, "swaylock to cover the screen")
                wait_until(display.watch.blocked, 20, "the locker to lock the screen")
            yield desktop
        finally:
            kill_session(locker)


# GNOME Shell makes its screen shield at start only where it can lock a session (GDM and
# logind answer on the system bus: main.js, LoginManager.canLock); a headless one has none.
# Made as main.js makes it, it is the Shell's own lock screen, which then locks as a
# person's does, through its D-Bus Lock. (GNOME Shell 45 and later export Main's names
# read-only: there the shield is not Main's, and serves its D-Bus service all the same.)
GNOME_SHIELD = with_shell_module(
    "screenShield",
    "shield => { if (Main.screenShield || global.__roundhouseShield) return true;"
    " global.__roundhouseShield = new shield.ScreenShield();"  # it exports its D-Bus service
    " try { Main.screenShield = global.__roundhouseShield; } catch (error) {}"  # 45+: read-only
    " return true; }",
)


def lock_session(desktop: Desktop) -> None:
    """Lock a GNOME or KDE session as a person's is locked (their lock key, their idle
    time): through the locker's own D-Bus Lock."""
    bus = SyncBus(desktop.env["DBUS_SESSION_BUS_ADDRESS"], 30)
    try:
        if desktop.kind == "gnome":
            shell = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")
            made, said = bus.call(*shell, "Eval", "s", [GNOME_SHIELD])
            assert made, said
            locker = ("org.gnome.Shell.ScreenShield", "/org/gnome/ScreenSaver")
            bus.call(*locker, "org.gnome.ScreenSaver", "Lock")  # answered once it shows
        else:
            locker = ("org.freedesktop.ScreenSaver", "/ScreenSaver")
            bus.call(*locker, "org.freedesktop.ScreenSaver", "Lock")
        interface = "org.gnome.ScreenSaver" if desktop.kind == "gnome" else locker[0]
        wait_until(lambda: bus.call(*locker, interface, "GetActive")[0], 20, "the lock")
    finally:
        bus.close()


async def test_a_run_on_a_locked_screen_fails_naming_it_and_acts_not(
    locked: Desktop, tmp_path: Path
) -> None:
    await fails_naming_it_and_acts_not(locked, tmp_path, "the screen is locked")


async def fails_naming_it_and_acts_not(desktop: Desktop, tmp_path: Path, reason: str) -> None:
    """A round on `desktop` FAILs saying `reason`, and launched, clicked and typed nothing."""
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "task": "blocked",
            "agent": "host",
            "desktop": {"session": desktop.kind},
        }
    )
    async with await DesktopTools.open(desktop, config) as tools:
        registry = desktop_registry(
            tools, extra=[*person_tools(tools), *ShellTools(config).tools()]
        )
        async with compose_session(config, dispatcher=LocalDispatcher(registry)) as session:
            outcome = await session.run_round("open gedit and type hello")
    assert outcome.state is RoundState.FAIL
    assert outcome.result is not None and reason in outcome.result
    acted = [
        action
        for step in outcome.steps
        for action in step.actions
        if action.result is not None
        and action.result.status is ResultStatus.SUCCESS
        and action.function not in ("run_shell", "wait")
    ]
    assert acted == []  # nothing was launched, clicked or typed


# A consent dialog as a portal asks GNOME Shell for one: the Shell is the backend of the
# Access portal (org.freedesktop.impl.portal.Access), and shows its question as one of its
# modal dialogs, as it shows polkit's password. The call is answered when the person
# answers (Escape: deny), so it is made from a thread. (The request's Close is no way to
# end it: GNOME Shell 43 takes its arguments the wrong way round, and never answers it.)
ACCESS = ("org.gnome.Shell.Portal", "/org/freedesktop/portal/desktop")
REQUEST = "/org/freedesktop/portal/desktop/request/1_0/roundhouse_test"
CONSENT = "Allow Roundhouse Test to use the camera?"
DENIED = [1, {}]  # the portal's answer: cancelled, no choices


@contextmanager
def consent_asked(address: str) -> Iterator[list[object]]:
    """Ask for a consent; the answer it gets, once the person has answered, in the list."""
    bus = SyncBus(address, 30)
    answers: list[object] = []

    def ask() -> None:
        with suppress(DBusCallError, TimeoutError, BusGone):  # the test says what is missing
            answers.append(
                bus.call(
                    *ACCESS,
                    "org.freedesktop.impl.portal.Access",
                    "AccessDialog",
                    "osssssa{sv}",
                    [REQUEST, "", "", CONSENT, "A test asks.", "", {}],
                    timeout=120,
                )
            )

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    try:
        yield answers
    finally:
        asking.join(30)
        bus.close()


RUN_DIALOG = "Run a Command"  # GNOME Shell's own dialog that alt+F2 opens, 43 to 48


def open_run_dialog(desktop: Desktop) -> None:
    """What alt+F2 does, through Eval: a key sent at once may be lost (Mutter drops the
    first key after a focus change), and this test is about the dialog, not the key."""
    bus = SyncBus(desktop.env["DBUS_SESSION_BUS_ADDRESS"], 30)
    try:
        shell = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")
        done, said = bus.call(*shell, "Eval", "s", ["Main.openRunDialog(); true"])
        assert done, said
    finally:
        bus.close()


async def test_a_gnome_shell_dialog_fails_a_run_naming_it_and_goes_with_it(
    tmp_path: Path,
) -> None:
    with VirtualDesktop(settings_for("gnome").desktop) as desktop:
        with open_display(desktop) as display:
            assert display.watch.blocked() is None
            assert "the Shell's own dialogs (polkit's, a portal's) by the Shell" in (
                display.watch.route
            )
            open_run_dialog(desktop)  # as alt+F2 opens it
            reason = wait_until(display.watch.blocked, 20, "the Shell's dialog to show")
            assert reason.startswith(f"GNOME Shell's own dialog {RUN_DIALOG!r} is up"), reason
            await fails_naming_it_and_acts_not(desktop, tmp_path, RUN_DIALOG)
            display.input.press_keys("Escape")  # and closes it
            wait_until(lambda: display.watch.blocked() is None, 20, "the dialog to go")


async def test_a_consent_dialog_of_gnome_shell_fails_a_run_naming_it_and_goes_with_it(
    tmp_path: Path,
) -> None:
    with VirtualDesktop(settings_for("gnome").desktop) as desktop:
        bus = SyncBus(desktop.env["DBUS_SESSION_BUS_ADDRESS"], 30)
        try:
            serves = bus.has_name(ACCESS[0])
        finally:
            bus.close()
        if not serves:  # GNOME Shell 48 here owns no org.gnome.Shell.Portal
            pytest.skip("this GNOME Shell serves no Access portal; its run dialog is tested")
        with open_display(desktop) as display:
            with consent_asked(desktop.env["DBUS_SESSION_BUS_ADDRESS"]) as answers:
                reason = wait_until(display.watch.blocked, 20, "the Shell's dialog to show")
                assert reason.startswith(f"GNOME Shell's own dialog {CONSENT!r} is up"), reason
                await fails_naming_it_and_acts_not(desktop, tmp_path, CONSENT)
                display.input.press_keys("Escape")  # the person says no
            assert answers == [DENIED]  # the run did not answer it for them
            assert display.watch.blocked() is None


def test_on_a_persons_sway_the_locker_is_found_by_its_process_and_no_lock_is_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same sway session, opened as a person's own (`--desktop current` on a session
    roundhouse did not start): swaylock is named, and no lock protocol but the input
    inhibitor (which locks nothing) is ever asked for."""
    asked: list[str] = []
    held = lockers._held

    def spy(env: Mapping[str, str], protocol: str, timeout: float) -> str | None:
        asked.append(protocol)
        return held(env, protocol, timeout)

    monkeypatch.setattr(lockers, "_held", spy)
    with VirtualDesktop(settings_for("sway").desktop) as ours:
        persons = dataclasses.replace(ours, virtual=False)
        with open_display(persons) as display:
            assert "their process (swaylock" in display.watch.route
            assert lockers.SESSION_LOCK not in display.watch.route
            assert display.watch.blocked() is None  # no locker yet
            assert bare(display)
            locker = start_locker(ours)
            try:
                reason = wait_until(display.watch.blocked, 20, "swaylock to be seen")
                assert reason == (
                    f"the screen is locked (swaylock is running on this display, pid {locker.pid})"
                )
                assert lockers.SESSION_LOCK not in asked
                # The lock is real (seen, not asked for: asking could refuse a starting
                # swaylock): the screen shows swaylock, not the bare desktop.
                wait_until(lambda: not bare(display), 20, "swaylock to cover the screen")
            finally:
                kill_session(locker)


def bare(display: DisplayServer) -> bool:
    """Whether the middle of the screen shows the bare virtual desktop's colour."""
    image = display.screen.desktop().convert("RGB")
    width, height = image.size
    return image.getpixel((width // 2, height // 2)) == compositor.BACKGROUND


async def test_doctor_says_which_way_a_locker_is_found() -> None:
    with VirtualDesktop(settings_for("sway").desktop) as ours:
        persons = await diagnose(dataclasses.replace(ours, virtual=False))
        virtual = await diagnose(ours)
    [person] = [check.detail for check in persons.checks if check.name == "person"]
    assert "lockers by their process (swaylock" in person
    assert "never asked for on a desktop roundhouse did not start" in person
    [ours_too] = [check.detail for check in virtual.checks if check.name == "person"]
    assert "lockers by the lock they hold, asked for" in ours_too
    assert "their process" not in ours_too


@pytest.mark.parametrize("kind", ["gnome", "kde"])
async def test_doctor_says_how_a_shipped_gnome_or_kde_sees_the_person(kind: str) -> None:
    """As distributions ship them (no unsafe mode, KWin's permission checks on), before
    `roundhouse setup`: the idle monitor or protocol and the locker answer any client."""
    with VirtualDesktop(settings_for(kind, shipped=True).desktop) as shipped:
        report = await diagnose(dataclasses.replace(shipped, virtual=False))
    persons = [check for check in report.checks if check.name == "person"]
    assert len(persons) == 1, report.checks  # none: the display did not open, and says why
    [person] = persons
    assert person.ok, person.detail
    if kind == "gnome":
        assert "Mutter's idle monitor" in person.detail and "screen shield" in person.detail
    else:
        assert "ext_idle_notifier_v1" in person.detail and "KWin's screen locker" in person.detail
