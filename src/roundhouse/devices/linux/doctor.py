"""`roundhouse doctor`: can the agent observe and act on this desktop, and if not, why.

Each check tries the real thing once (opens the input route, takes a screenshot, lists
the windows, joins the accessibility bus) and says what it found, and for a problem the
one-line fix. The report is data (`Report`); the CLI and the MCP tool render it.

    report = await diagnose(desktop)
    print(report.render()); exit(0 if report.ok else 1)

`doctor_tool(desktop)` is the same as a tool, which `roundhouse serve` offers its clients.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

from roundhouse.devices.base import Tool, make_tool
from roundhouse.devices.linux.atspi.client import AtspiClient, AtspiError
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backend import Backend, Capability
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import (
    DisplayServer,
    DisplayUnavailable,
    NoWatch,
    RouteRefused,
)
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

COMMAND_TIMEOUT = 3.0  # seconds for gsettings and the like
MISSING_NAMES = {"windows": "window positions"}  # what doctor calls a missing capability


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True  # a failed optional check is advice; the agent still works


@dataclass
class Report:
    desktop: str
    session: str  # "x11" or "wayland"
    compositor: str  # the display backend's kind, or what XDG_CURRENT_DESKTOP says
    checks: list[Check] = field(default_factory=list)
    routes: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks if check.required)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def render(self) -> str:
        lines = [f"desktop {self.desktop}: {self.session} session, compositor {self.compositor}"]
        for check in self.checks:
            mark = "ok  " if check.ok else ("FAIL" if check.required else "note")
            lines.append(f"  {mark} {check.name}: {check.detail}")
            if not check.ok and check.fix:
                lines.append(f"       fix: {check.fix}")
        verdict = "the agent can observe and act here" if self.ok else "the agent cannot work here"
        lines.append(verdict)
        return "\n".join(lines)


async def diagnose(desktop: Desktop, display: DisplayServer | None = None) -> Report:
    """Check `desktop` (with `display` when one is open already, else it is opened and
    closed here)."""
    backend = desktop.backend
    report = Report(desktop.display, backend.session_type, _compositor(desktop))
    opened = display
    if opened is None:
        try:
            opened = await asyncio.to_thread(open_display, desktop)
        except (DisplayUnavailable, OSError, RuntimeError) as error:
            report.checks.append(
                Check("display server", False, str(error), _fix(error, backend, "windows"))
            )
    if opened is not None:
        try:
            report.compositor = opened.kind
            report.routes = dict(opened.routes)
            report.checks += await _display_checks(opened, backend)
        finally:
            if display is None:
                await asyncio.to_thread(opened.close)
    report.checks += await _accessibility_checks(desktop)
    packages = await asyncio.to_thread(_packages_check, backend)
    if packages is not None:
        report.checks.append(packages)
    return report


def _packages_check(backend: Backend) -> Check | None:
    """The Debian packages the session's routes still need, with the one line that installs
    them (advice); None where there is no dpkg to ask."""
    installed = _installed_packages()
    if installed is None:
        return None
    missing = [name for name in backend.person_packages if name not in installed]
    if not missing:
        return Check("packages", True, f"installed: {' '.join(backend.person_packages)}")
    line = f"sudo apt-get install {' '.join(missing)}"
    return Check("packages", False, f"not installed: {' '.join(missing)}", line, required=False)


def _installed_packages() -> set[str] | None:
    """Installed packages by their names and the names they provide (Debian 13 renamed
    libraries for 64-bit time: libatk-adaptor's provider may carry another name)."""
    if shutil.which("dpkg-query") is None:
        return None
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f", "${db:Status-Abbrev}|${Package}|${Provides}\n"],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    names: set[str] = set()
    for line in done.stdout.splitlines():
        status, _, rest = line.partition("|")
        if not status.startswith("ii"):
            continue
        package, _, provides = rest.partition("|")
        names.add(package.split(":")[0])
        names.update(item.split()[0] for item in provides.split(",") if item.strip())
    return names


def _compositor(desktop: Desktop) -> str:
    if not desktop.wayland:
        return desktop.kind
    return desktop.env.get("XDG_CURRENT_DESKTOP") or "unknown (XDG_CURRENT_DESKTOP is not set)"


def _fix(error: BaseException, backend: Backend, capability: Capability) -> str:
    """The fix the refusal names, else the one of the capability's route in the record."""
    if isinstance(error, RouteRefused) and error.fix:
        return error.fix
    return backend.route(capability).fix


async def _display_checks(display: DisplayServer, backend: Backend) -> list[Check]:
    needs = backend.route("input", display.routes.get("input")).needs
    checks = [Check("input", True, f"{display.routes.get('input', display.kind)} (needs: {needs})")]
    # What the session refuses that the display works without: a line each, with its fix
    # (advice: the agent still observes, and acts through the accessibility interfaces).
    for missing in display.missing:
        name = MISSING_NAMES.get(missing.capability, missing.capability or "route")
        note = Check(name, False, str(missing), missing.fix, required=False)
        checks = [note if check.name == name else check for check in checks]
        if note not in checks:
            checks.append(note)
    try:
        image = await asyncio.to_thread(display.screen.desktop)
        width, height = image.size
        detail = f"{display.routes.get('screenshots', display.kind)}: {width}x{height}"
        checks.append(Check("screenshots", True, detail))
    except (OSError, RuntimeError, TimeoutError) as error:
        checks.append(Check("screenshots", False, str(error), _fix(error, backend, "screenshots")))
    try:
        windows = await asyncio.to_thread(display.windows.list_windows)
        route = display.routes.get("windows", display.kind)
        checks.append(Check("windows", True, f"{route}: {len(windows)} open"))
    except (OSError, RuntimeError, TimeoutError) as error:
        checks.append(Check("windows", False, str(error), _fix(error, backend, "windows")))
    # How the person's input and a locked screen are told (advice: where neither is, the
    # agent still works, and cannot yield to them).
    watch = display.watch
    checks.append(Check("person", not isinstance(watch, NoWatch), watch.route, required=False))
    return checks


async def _accessibility_checks(desktop: Desktop) -> list[Check]:
    """The AT-SPI bus (required: the controls come from it), and whether toolkits that
    need asking expose their trees (advice)."""
    checks: list[Check] = []
    client = AtspiClient()
    try:
        await client.connect(desktop)
        apps = await client.frames.applications(client.bus)
        checks.append(Check("accessibility bus", True, f"up; {len(apps)} applications registered"))
    except (AtspiError, OSError, TimeoutError) as error:
        checks.append(
            Check(
                "accessibility bus",
                False,
                str(error),
                "sudo apt-get install at-spi2-core (the session bus starts its bus launcher)",
            )
        )
        return checks
    finally:
        await client.close()
    checks.append(await asyncio.to_thread(_toolkits, desktop))
    return checks


def _toolkits(desktop: Desktop) -> Check:
    """GTK and Chromium as roundhouse starts them expose their trees; Qt 6 only with
    QT_LINUX_ACCESSIBILITY_ALWAYS_ON or when the bus says a screen reader wants them
    (org.a11y.Status IsEnabled), GNOME's own apps when toolkit-accessibility is on."""
    notes: list[str] = []
    fixes: list[str] = []
    enabled = _a11y_enabled(desktop)
    if enabled is False:
        notes.append("Qt apps started outside roundhouse expose no tree (IsEnabled is off)")
        fixes.append(
            "busctl --user set-property org.a11y.Bus /org/a11y/bus org.a11y.Status IsEnabled "
            "b true (or QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 for Qt apps)"
        )
    # With in-memory settings (our virtual desktops) each process has its own: none to ask.
    memory = desktop.env.get("GSETTINGS_BACKEND") == "memory"
    for schema, key, wanted, wrong in () if memory else desktop.backend.settings:
        if _gsetting(desktop, schema, key) not in (None, wanted):
            notes.append(wrong)
            fixes.append(f"gsettings set {schema} {key} {wanted}")
    if notes:
        return Check("toolkits", False, "; ".join(notes), "; ".join(fixes), required=False)
    return Check(
        "toolkits",
        True,
        "GTK, Qt (QT_LINUX_ACCESSIBILITY_ALWAYS_ON) and Chromium "
        "(--force-renderer-accessibility) as launched here expose their trees",
    )


def _a11y_enabled(desktop: Desktop) -> bool | None:
    address = desktop.bus_address
    if address is None:
        return None
    try:
        bus = SyncBus(address, COMMAND_TIMEOUT)
    except (OSError, RuntimeError, TimeoutError):
        return None
    try:
        (value,) = bus.call(
            "org.a11y.Bus",
            "/org/a11y/bus",
            "org.freedesktop.DBus.Properties",
            "Get",
            "ss",
            ["org.a11y.Status", "IsEnabled"],
        )
        return bool(value.value)
    except (DBusCallError, RuntimeError, TimeoutError):
        return None
    finally:
        bus.close()


def _gsetting(desktop: Desktop, schema: str, key: str) -> str | None:
    if shutil.which("gsettings") is None:
        return None
    try:
        done = subprocess.run(
            ["gsettings", "get", schema, key],
            env=desktop.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def doctor_tool(desktop: Desktop) -> Tool:
    """`doctor` as a tool of the desktop's MCP server."""

    async def doctor() -> dict[str, Any]:
        """Check this desktop: session type and compositor, the accessibility bus, the input,
        screenshot and window routes and what they need, and a one-line fix for each
        problem. `ok` says whether an agent can observe and act here."""
        return (await diagnose(desktop)).as_dict()

    return make_tool(doctor, "data_collection")
