"""A virtual desktop: a session of any kind, started headless for the agent and ended whole.

    with VirtualDesktop(settings.desktop) as desktop:     # a Desktop
        ...

It is a runtime folder of its own (its sockets and throw-away profiles), a private D-Bus
session bus, the display server its backend's record says (display/backends.py: Xvfb and
openbox, or a headless compositor), and the AT-SPI bus activated on that session bus.
When it stops, it first ends the apps that ran on it, and whatever they forked (reaper.py:
by the tag in their environment, as clients of its display server, as their descendants
and session members); then its own processes by pid: the ones it spawned, and the services
its buses activated (services.py).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from dbus_fast.errors import DBusFastError

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops import janitor, services
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable
from roundhouse.devices.linux.desktops.detached import DesktopState, unused_name
from roundhouse.devices.linux.desktops.reaper import TAG_ENV, DesktopReaper, new_tag, terminate
from roundhouse.devices.linux.desktops.session import (
    bus_path,
    wayland_env,
    without_session,
    x11_env,
)
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.backend import Backend
from roundhouse.devices.linux.display.compositor import (
    READY_TIMEOUT,
    CompositorUnavailable,
    Headless,
)
from roundhouse.devices.linux.system.procfs import ProcessRecord

log = logging.getLogger(__name__)

LAYOUT_VARIABLES = ("XKB_DEFAULT_LAYOUT", "XKB_DEFAULT_VARIANT")
START_TIMEOUT = 10.0  # seconds for a line from a starting program; a cold Xvfb takes ~1 s
REAP_WAIT = 2.0  # seconds for an ended child of ours to be reapable
EXEC_ATTEMPTS = 5


class VirtualDesktop:
    """`with VirtualDesktop(settings) as desktop:` — started on entry, stopped on exit."""

    def __init__(self, settings: DesktopSettings | None = None) -> None:
        self.settings = settings or DesktopSettings()
        self._children: list[subprocess.Popen[bytes]] = []
        self._records: list[ProcessRecord] = []
        self._runtime_dir: str | None = None
        self._a11y_address: str | None = None
        self._bus_address: str | None = None
        self._display: str | None = None
        self._tag: str | None = None
        self._lifeline: int | None = None  # to this desktop's janitor (janitor.py)
        self._backend: Backend | None = None
        self._wayland_display: str | None = None
        self._extra_env: dict[str, str] = {}
        self._size = (self.settings.width, self.settings.height)  # every monitor's
        self.desktop: Desktop | None = None

    def __enter__(self) -> Desktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Desktop:
        try:
            backend = backends.named(self.settings.session)
        except backends.UnknownKind as error:
            raise DesktopUnavailable(str(error)) from None
        _require_programs(backend)
        try:
            return self._start(backend)
        except BaseException:
            self.stop()
            raise

    def _start(self, backend: Backend) -> Desktop:
        """The session bus first (GNOME Shell needs it at start), then the display server;
        once it is up the bus's services get the desktop's environment, and the AT-SPI bus
        starts with it."""
        size = (self.settings.width, self.settings.height)
        tag = self._begin()
        runtime = self._runtime_dir
        assert runtime is not None
        base = {**without_session(os.environ), TAG_ENV: tag, "XDG_RUNTIME_DIR": runtime}
        # What wlroots compositors, and our virtual keyboard there, read the layout from.
        xkb = Headless(base, Path(runtime), size, layout=self.settings.layout).xkb
        layout = dict(zip(LAYOUT_VARIABLES, xkb, strict=True)) if self.settings.layout else {}
        base.update(layout)
        self._bus_address = self._spawn_session_bus(
            runtime, {**base, "GSETTINGS_BACKEND": "memory"}
        )
        base["DBUS_SESSION_BUS_ADDRESS"] = self._bus_address
        self._backend = backend
        try:
            headless = Headless(
                base,
                Path(runtime),
                size,
                shipped=self.settings.shipped,
                monitors=self.settings.monitors,
                layout=self.settings.layout,
            )
            started = backend.compositor.start(self, headless)
        except CompositorUnavailable as error:
            raise DesktopUnavailable(f"{backend.kind} did not start: {error}") from None
        self._display = started.display
        self._size = started.size or size
        base.update(started.env)
        env = self._session_env(backend, base, started.display)
        try:
            self._a11y_address = services.start_session_services(self._bus_address, env)
        except (OSError, TimeoutError, DBusFastError, services.BusFailed) as error:
            raise DesktopUnavailable(
                f"the AT-SPI bus did not come up ({error!r}); is at-spi2-core installed?"
            ) from None
        try:
            ready = backend.compositor.ready(env, READY_TIMEOUT)
        except CompositorUnavailable as error:
            raise DesktopUnavailable(f"{backend.kind} did not start: {error}") from None
        env.update(ready)
        self._extra_env = {**started.env, **ready, **layout}
        if backend.wayland:
            self._wayland_display = started.display
            self._display = unused_name(backend.kind)
        self.desktop = Desktop(self._display, env, *self._size, virtual=True, kind=backend.kind)
        log.info("virtual %s desktop %s up (%dx%d)", backend.kind, self._display, *self._size)
        return self.desktop

    def _session_env(
        self, backend: Backend, base: Mapping[str, str], display: str
    ) -> dict[str, str]:
        """The environment of the desktop's applications."""
        assert self._runtime_dir is not None
        if not backend.wayland:
            return x11_env(
                display, self._bus_address, base, runtime_dir=self._runtime_dir, tag=self._tag
            )
        return wayland_env(
            base,
            wayland_display=display,
            runtime_dir=self._runtime_dir,
            bus_address=self._bus_address,
            current_desktop=backend.current_desktop,
            virtual=True,
        )

    def _begin(self) -> str:
        """The runtime folder and the tag; the janitor watching them. Everything of this
        desktop carries its tag, its display server too: a desktop started from an app of
        another desktop must not look like one of that desktop's processes."""
        self._runtime_dir = tempfile.mkdtemp(prefix=janitor.DESKTOP_RUNTIME_PREFIX)
        self._tag = tag = new_tag()
        # Should this process be SIGKILLed, the janitor ends every process with the tag;
        # told "done" by stop() or "keep" by detach(), it leaves them alone.
        self._lifeline = janitor.start(TAG_ENV, tag, self._runtime_dir)
        return tag

    def _spawn_session_bus(self, runtime_dir: str, env: Mapping[str, str]) -> str:
        """The desktop's session bus, listening in its runtime folder; its address."""
        return self.spawn_reading(
            "dbus-daemon",
            [
                "dbus-daemon",
                *services.session_bus_config(runtime_dir),
                "--nofork",
                f"--address={bus_path(runtime_dir)}",
            ],
            "--print-address=",
            env,
        )

    # ------------------------------------------------------------ spawning (a Spawner)

    def spawn(
        self, name: str, argv: list[str], env: Mapping[str, str], log: Path | None = None
    ) -> None:
        for attempt in range(EXEC_ATTEMPTS):
            try:
                with open(log or os.devnull, "ab") as output:
                    process = subprocess.Popen(
                        argv,
                        env=dict(env),
                        stdin=subprocess.DEVNULL,
                        stdout=output,
                        stderr=output,
                        start_new_session=True,  # a Ctrl-C meant for us must not reach it
                    )
                break
            except OSError as error:
                # A program file just written may be held open for writing by another
                # thread's forked child until that child execs: Linux then refuses to run
                # it (ETXTBSY) for a moment.
                if error.errno != errno.ETXTBSY or attempt == EXEC_ATTEMPTS - 1:
                    raise
                time.sleep(0.05)
        self._adopt(name, process)

    def spawn_reading(
        self, name: str, argv: list[str], fd_flag: str, env: Mapping[str, str]
    ) -> str:
        """Start a program that reports readiness by writing a line to a file descriptor."""
        read_end, write_end = os.pipe()
        flag = [fd_flag + str(write_end)] if fd_flag.endswith("=") else [fd_flag, str(write_end)]
        try:
            process = subprocess.Popen(
                argv + flag,
                env=dict(env),
                pass_fds=[write_end],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._adopt(name, process)
            os.close(write_end)
            write_end = -1
            return _read_line(read_end, START_TIMEOUT, name)
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def _adopt(self, name: str, process: subprocess.Popen[bytes]) -> None:
        self._children.append(process)
        record = services.procfs_record(name, process.pid)
        if record is not None:
            self._records.append(record)

    # ------------------------------------------------------------ state and stopping

    def state(self) -> DesktopState:
        if self.desktop is None or self._bus_address is None:
            raise RuntimeError("the desktop is not started")
        return self._state(self.desktop.display)

    def _state(self, display: str) -> DesktopState:
        """What this desktop has started so far; a start cut short has no buses yet."""
        assert self._runtime_dir is not None, "the runtime folder is made first"
        backend = self._backend or backends.named(self.settings.session)
        return DesktopState(
            display=display,
            width=self._size[0],
            height=self._size[1],
            bus_address=self._bus_address,
            a11y_address=self._a11y_address,
            runtime_dir=self._runtime_dir,
            processes=list(self._records),
            tag=self._tag,
            session=backend.kind,
            wayland_display=self._wayland_display,
            server=backend.compositor.server,
            extra_env=dict(self._extra_env),
        )

    def detach(self) -> DesktopState:
        """Leave the desktop running after this process exits; return what stops it later."""
        state = self.state()
        self._release_janitor(janitor.KEEP)
        for process in self._children:
            # We will never wait for them: mark them done so Popen does not warn at exit.
            process.returncode = 0
        self._children.clear()
        self._records.clear()
        self._forget()
        return state

    def stop(self) -> None:
        """End the apps that ran on the desktop, and what they forked; then the desktop."""
        if self._display is not None:
            stop_desktop_processes(self._state(self._display))
        else:  # the display server never came up: nothing can have run on it
            _stop_processes(list(reversed(self._records)))
        for process in self._children:
            # Ended, but a many-threaded one (gnome-shell) reads as gone while its other
            # threads still wind down, and can be reaped only once they have.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=REAP_WAIT)
        self._children.clear()
        self._records.clear()
        if self._runtime_dir is not None:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
        self._forget()  # a second stop() does nothing
        self._release_janitor(janitor.DONE)

    def _forget(self) -> None:
        self._bus_address = self._a11y_address = self._runtime_dir = None
        self._display = self._tag = self._wayland_display = None
        self._extra_env = {}
        self.desktop = None

    def _release_janitor(self, word: bytes) -> None:
        if self._lifeline is not None:
            lifeline, self._lifeline = self._lifeline, None
            with contextlib.suppress(OSError):
                janitor.release(lifeline, word)


def stop_desktop_processes(state: DesktopState) -> None:
    """End the desktop's apps (and what they forked) while its display server still runs;
    then the services our buses activated, what we spawned (newest first), and last
    whatever was started in between. `state.server` names the desktop's display server
    among the spawned (its clients are the desktop's): Xvfb, or a compositor listening on
    the Wayland socket."""
    spawned = state.processes
    found: list[ProcessRecord] = []
    if state.bus_address is not None:
        mine = [os.getpid(), *(record.pid for record in spawned)]
        found = services.service_records(state.bus_address, state.a11y_address, exclude=mine)
    display_server = next((record for record in spawned if record.name == state.server), None)
    socket = None
    if state.wayland_display is not None:
        socket = os.path.join(state.runtime_dir, state.wayland_display)
    reaper = DesktopReaper(state.tag, state.display, display_server, [*spawned, *found], socket)
    reaper.end_apps()
    _stop_processes(found)
    _stop_processes(list(reversed(spawned)))
    reaper.end_leftovers()
    shutil.rmtree(state.runtime_dir, ignore_errors=True)


def _stop_processes(records: Sequence[ProcessRecord]) -> None:
    """SIGTERM each (still ours) process, wait, then SIGKILL what is left."""
    for record in terminate(records):
        log.warning("%s (pid %d) ignored SIGTERM; killed it", record.name, record.pid)


def _read_line(fd: int, timeout: float, what: str) -> str:
    """One line a child writes to a pipe (Xvfb's display number, dbus-daemon's address)."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise DesktopUnavailable(f"{what} did not start within {timeout:g} s")
        chunk = os.read(fd, 256)
        if not chunk:
            raise DesktopUnavailable(f"{what} exited during start-up")
        data += chunk
    return data.decode().strip()


def _require_programs(backend: Backend) -> None:
    missing = backend.compositor.missing()
    missing += [name for name in ("dbus-daemon",) if shutil.which(name) is None]
    if missing:
        raise DesktopUnavailable(
            f"cannot start a virtual {backend.kind} desktop: {', '.join(missing)} not "
            f"installed. Install them with: sudo apt-get install {backend.compositor.packages} "
            "dbus at-spi2-core"
        )
