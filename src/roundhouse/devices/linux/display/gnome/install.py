"""`roundhouse setup gnome`: roundhouse's GNOME Shell extension, installed in a person's
session once, and removed again with `roundhouse setup --undo`.

GNOME Shell tells no other program where its windows are; the extension (extension/) exports
that, and activating and closing a window, as dev.roundhouse.Shell on the person's session
bus: nothing more (no Eval), and only there (another user's programs cannot reach that bus;
a Flatpak app sees only the names it is granted). GNOME 43 and 44 load an extension as a
script, 45 and later as a module: the one that fits the running Shell is installed, with
the same core (extension/core.js).

On Wayland, GNOME Shell loads an extension installed after it started only when it starts
again: the person logs out and in once. An extension it knows already is enabled at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from roundhouse.devices.linux.display.backend import Outcome, SetupFailed, setup_command
from roundhouse.devices.linux.display.gnome.shell import EXTENSION, SHELL, core_js
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

UUID = "roundhouse-windows@roundhouse.dev"
# The Shell versions each form of the extension declares it works with.
SCRIPT_VERSIONS = ("43", "44")
MODULE_VERSIONS = ("45", "46", "47", "48")
SCHEMA = "org.gnome.shell"
COMMAND_TIMEOUT = 10.0
EXTENSIONS = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Extensions")


def extension_folder(env: Mapping[str, str]) -> Path:
    """Where GNOME Shell looks for the person's extensions: $XDG_DATA_HOME/gnome-shell."""
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(data) / "gnome-shell" / "extensions" / UUID


def extension_files(shell_version: str) -> dict[str, str]:
    """metadata.json and extension.js for a Shell of this version (pure)."""
    major = shell_version.split(".", 1)[0]
    if not major.isdigit() or int(major) < int(SCRIPT_VERSIONS[0]):
        raise SetupFailed(f"GNOME Shell {shell_version} is older than 43: not supported")
    module = int(major) >= int(MODULE_VERSIONS[0])
    versions = list(MODULE_VERSIONS if module else SCRIPT_VERSIONS)
    if major not in versions:  # a newer Shell: declared, as the module form fits it
        versions.append(major)
    wrapper = resources.files(__package__) / "extension" / ("module.js" if module else "legacy.js")
    script = wrapper.read_text(encoding="utf-8").replace("/*CORE*/", core_js())
    metadata = {
        "uuid": UUID,
        "name": "roundhouse windows",
        "description": "Tells roundhouse, a desktop agent the person runs, where the windows "
        "are, and lets it bring one to the front or close it (dev.roundhouse.Shell on the "
        "session bus). Installed by `roundhouse setup gnome`.",
        "shell-version": versions,
        "url": "https://github.com/roundhouse-dev/roundhouse",
        "version": 1,
    }
    return {"metadata.json": json.dumps(metadata, indent=2) + "\n", "extension.js": script}


def shell_version(env: Mapping[str, str], bus: SyncBus | None) -> str:
    """The running GNOME Shell's version (its ShellVersion), else the installed one's."""
    if bus is not None:
        try:
            (value,) = bus.call(
                SHELL[0], SHELL[1], "org.freedesktop.DBus.Properties", "Get", "ss",
                [SHELL[2], "ShellVersion"],
            )  # fmt: skip
            return str(value.value)
        except DBusCallError:
            pass  # no Shell on this bus: the one installed says
    if shutil.which("gnome-shell") is None:
        raise SetupFailed("GNOME Shell is not installed here (no gnome-shell)")
    done = _run(["gnome-shell", "--version"], env)
    return done.stdout.split()[-1]


def install(env: Mapping[str, str]) -> Outcome:
    """Install and enable the extension in the session of `env`."""
    bus = _session_bus(env)
    try:
        version = shell_version(env, bus)
        outcome = Outcome()
        folder = extension_folder(env)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in extension_files(version).items():
            (folder / name).write_text(text, encoding="utf-8")
        outcome.done.append(
            f"installed roundhouse's extension for GNOME Shell {version} in {folder}"
        )
        _enable_in_settings(env, outcome)
        if bus is not None and bus.has_name(EXTENSION[0]):
            outcome.done.append("it runs already: nothing more to do")
        elif bus is not None and _enable_now(bus):
            outcome.done.append("GNOME Shell enabled it now")
        elif bus is not None:
            outcome.log_out = (
                "GNOME Shell on Wayland loads an extension installed after it started only "
                "when it starts again: log out and in once, then `roundhouse doctor`"
            )
        else:
            outcome.done.append("GNOME Shell is not running here: it loads it at its next start")
        return outcome
    finally:
        if bus is not None:
            bus.close()


def uninstall(env: Mapping[str, str]) -> Outcome:
    """Disable and remove the extension; what was there to undo."""
    outcome = Outcome()
    bus = _session_bus(env)
    try:
        if bus is not None:
            try:
                bus.call(*EXTENSIONS, "DisableExtension", "s", [UUID])
            except DBusCallError:
                pass  # not known to the running Shell: nothing to disable there
    finally:
        if bus is not None:
            bus.close()
    enabled = _gsettings_list(env, "enabled-extensions")
    if enabled is not None and UUID in enabled:
        _store_list(env, "enabled-extensions", [uuid for uuid in enabled if uuid != UUID])
        outcome.done.append("removed it from GNOME Shell's enabled extensions (read back)")
    folder = extension_folder(env)
    if folder.exists():
        shutil.rmtree(folder)
        outcome.done.append(f"removed {folder}")
    return outcome


def _enable_in_settings(env: Mapping[str, str], outcome: Outcome) -> None:
    """The extension in org.gnome.shell enabled-extensions, and user extensions allowed:
    what GNOME Shell reads at its start."""
    if shutil.which("gsettings") is None:
        raise SetupFailed("gsettings is not installed (sudo apt-get install libglib2.0-bin)")
    enabled = _gsettings_list(env, "enabled-extensions") or []
    if UUID not in enabled:
        _store_list(env, "enabled-extensions", [*enabled, UUID])
        outcome.done.append("added it to GNOME Shell's enabled extensions (read back)")
    if _gsettings(env, "get", SCHEMA, "disable-user-extensions").stdout.strip() == "true":
        _gsettings(env, "set", SCHEMA, "disable-user-extensions", "false")
        stored = _gsettings(env, "get", SCHEMA, "disable-user-extensions").stdout.strip()
        if stored != "false":
            raise SetupFailed(f"disable-user-extensions was not stored: it reads {stored}")
        outcome.done.append("allowed user extensions (disable-user-extensions was on)")


def _store_list(env: Mapping[str, str], key: str, items: list[str]) -> None:
    """Set a list key and read it back: gsettings says nothing when dconf lost the write."""
    _gsettings(env, "set", SCHEMA, key, _gvariant_list(items))
    stored = _gsettings_list(env, key)
    if stored != items:
        raise SetupFailed(f"GNOME Shell's {key} was not stored: it reads {stored}, not {items}")


def _enable_now(bus: SyncBus) -> bool:
    """Whether the running Shell knows the extension and enabled it (it knows only those
    installed before it started)."""
    try:
        (ok,) = bus.call(*EXTENSIONS, "EnableExtension", "s", [UUID])
    except DBusCallError:
        return False
    return bool(ok) and bus.has_name(EXTENSION[0])


def _session_bus(env: Mapping[str, str]) -> SyncBus | None:
    address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        return None
    try:
        return SyncBus(address, COMMAND_TIMEOUT)
    except (OSError, RuntimeError, TimeoutError):
        return None


def _gsettings_list(env: Mapping[str, str], key: str) -> list[str] | None:
    done = _gsettings(env, "get", SCHEMA, key, check=False)
    if done.returncode != 0:
        return None
    text = done.stdout.strip().removeprefix("@as ")
    return [item.strip().strip("'\"") for item in text.strip("[]").split(",") if item.strip()]


def _gvariant_list(items: list[str]) -> str:
    return "[" + ", ".join(f"'{item}'" for item in items) + "]"


def _gsettings(
    env: Mapping[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return _run(["gsettings", *args], env, check=check)


def _run(
    argv: list[str], env: Mapping[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    # Settings in memory (a virtual desktop's apps) would be lost: these go to dconf.
    kept = {key: value for key, value in env.items() if key != "GSETTINGS_BACKEND"}
    if argv[0] == "gsettings" and _session_bus_address(kept) is None:
        # dconf writes through its service on the session bus; with none (ssh, a text
        # console, a provisioning script) gsettings loses the write and exits 0. A private
        # bus of this one command's starts the service, which writes the person's
        # ~/.config/dconf/user: what the next login reads. Reads need no bus.
        if shutil.which("dbus-run-session") is None:
            raise SetupFailed("no session bus, and no dbus-run-session (apt-get install dbus)")
        kept.pop("DBUS_SESSION_BUS_ADDRESS", None)
        argv = ["dbus-run-session", "--", *argv]
    return setup_command(argv, kept, check, COMMAND_TIMEOUT)


def _session_bus_address(env: Mapping[str, str]) -> str | None:
    """The session bus of `env`, if one answers there."""
    bus = _session_bus(env)
    if bus is None:
        return None
    bus.close()
    return env["DBUS_SESSION_BUS_ADDRESS"]
