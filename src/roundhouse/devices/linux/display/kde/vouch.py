"""`roundhouse setup kde`: a desktop file that vouches for roundhouse's own interpreter, so that
a person's KWin, with its permission checks on, lets roundhouse use its fake input and its
ScreenShot2; removed again with `roundhouse setup --undo`.

KWin decides by the client's executable (/proc/PID/exe): it trusts a program whose desktop
file names it in Exec and lists the interfaces in X-KDE-Wayland-Interfaces and
X-KDE-DBUS-Restricted-Interfaces. A Python program's executable is its interpreter, and a
desktop file naming /usr/bin/python3 would vouch for every Python program of the person.
So roundhouse gets an interpreter of its own: a copy (`python3 -m venv --copies`) that
imports roundhouse from where it is installed, and runs nothing else; the roundhouse
command starts itself again under it in a KDE session (`relaunch_interpreter`). KWin reads
a new desktop file within seconds: no log-out. Setup reads the file back, and in a running
session asks KWin, as that interpreter, whether it now offers it its fake input.
"""

from __future__ import annotations

import configparser
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from roundhouse.core.polling import until
from roundhouse.devices.linux.display.backend import Outcome, SetupFailed, setup_command
from roundhouse.devices.linux.display.compositor import CompositorUnavailable
from roundhouse.devices.linux.display.wayland.wire import Connection

DESKTOP_FILE = "dev.roundhouse.kwin.desktop"
COMMAND_TIMEOUT = 120.0  # seconds for the interpreter's copy (a venv) to be made
GRANT_WAIT = 20.0  # seconds for a running KWin to read a new desktop file (about 2 here)
FAKE_INPUT = "org_kde_kwin_fake_input"
PROBE = (
    "import os, sys; from roundhouse.devices.linux.display.kde.vouch import fake_input_offered; "
    "sys.exit(0 if fake_input_offered(os.environ) else 1)"
)
INTERFACES = (
    "X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input",
    "X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2",
)


def _data_home(env: Mapping[str, str]) -> Path:
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(data)


def interpreter_folder(env: Mapping[str, str]) -> Path:
    return _data_home(env) / "roundhouse" / "kwin-python"


def interpreter(env: Mapping[str, str]) -> Path:
    return interpreter_folder(env) / "bin" / "python3"


def desktop_file(env: Mapping[str, str]) -> Path:
    return _data_home(env) / "applications" / DESKTOP_FILE


def relaunch_interpreter(env: Mapping[str, str]) -> str | None:
    """The interpreter roundhouse must run as in this KDE session: the vouched one, once set
    up, when this process is not it already; else None."""
    vouched = interpreter(env)
    if not (vouched.is_file() and desktop_file(env).is_file()):
        return None
    if Path(sys.executable).resolve() == vouched.resolve():
        return None
    return str(vouched)


def install(env: Mapping[str, str]) -> Outcome:
    """The interpreter of roundhouse's own, and the desktop file that vouches for it."""
    outcome = Outcome()
    folder = interpreter_folder(env)
    if folder.exists():
        shutil.rmtree(folder)
    _run([sys.executable, "-m", "venv", "--copies", "--without-pip", str(folder)])
    purelib = Path(
        sysconfig.get_path("purelib", vars={"base": str(folder), "platbase": str(folder)})
    )
    # It imports roundhouse, and what roundhouse needs, from where this process does.
    places = [*site.getsitepackages(), site.getusersitepackages()]
    lines = [f"import site; site.addsitedir({place!r})" for place in places if Path(place).is_dir()]
    (purelib / "roundhouse-installed.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    check = _run([str(interpreter(env)), "-c", "import roundhouse.cli"], check=False)
    if check.returncode != 0:
        raise SetupFailed(
            f"the copied interpreter {interpreter(env)} cannot import roundhouse: "
            f"{check.stderr.strip().splitlines()[-1:]}"
        )
    outcome.done.append(f"made roundhouse's own interpreter, {interpreter(env)}")
    entry = desktop_file(env)
    entry.parent.mkdir(parents=True, exist_ok=True)
    partial = entry.with_name(entry.name + ".partial")
    partial.write_text(
        "[Desktop Entry]\nType=Application\nName=roundhouse (desktop agent)\n"
        f"Exec={interpreter(env)} -m roundhouse\nNoDisplay=true\n"
        + "".join(f"{line}\n" for line in INTERFACES),
        encoding="utf-8",
    )
    os.replace(partial, entry)  # a new file: KWin re-reads one rewritten in place late
    outcome.done.append(f"vouched for it to KWin in {entry} (fake input, ScreenShot2)")
    _read_back(entry, env)
    for tool in ("kbuildsycoca6", "kbuildsycoca5"):
        if shutil.which(tool):
            _run([tool], check=False, env=dict(env))
            break
    if not env.get("WAYLAND_DISPLAY"):
        outcome.done.append(
            "no KDE session here to ask: KWin reads the file at its start, and within "
            "seconds in a running session (no log-out)"
        )
        return outcome
    try:
        until(
            lambda: _granted(env),
            GRANT_WAIT,
            "KWin offered no fake input to it",
            every=0.5,
            error=CompositorUnavailable,
        )
    except CompositorUnavailable as error:
        raise SetupFailed(
            f"{error}: KWin has not taken {entry} (is this session KWin's, with "
            "kbuildsycoca6 or kbuildsycoca5 installed?)"
        ) from None
    outcome.done.append("KWin now offers it its fake input (asked as it): no log-out is needed")
    return outcome


def _read_back(entry: Path, env: Mapping[str, str]) -> None:
    """The desktop file as KWin reads it: names the interpreter and both interfaces."""
    read = configparser.ConfigParser(interpolation=None, strict=False)
    read.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    try:
        read.read_string(entry.read_text(encoding="utf-8"))
        section = read["Desktop Entry"]
    except (OSError, configparser.Error, KeyError) as error:
        raise SetupFailed(f"{entry} does not read back as a desktop file: {error}") from None
    wanted = {"Exec": f"{interpreter(env)} -m roundhouse"}
    for line in INTERFACES:
        key, _, value = line.partition("=")
        wanted[key] = value
    wrong = [key for key, value in wanted.items() if section.get(key) != value]
    if wrong:
        raise SetupFailed(f"{entry} reads back without {', '.join(wrong)}")


def _granted(env: Mapping[str, str]) -> bool:
    """Whether KWin offers the vouched interpreter its fake input: asked as that program,
    since KWin decides by the client's executable."""
    probe = _run([str(interpreter(env)), "-c", PROBE], check=False, env=dict(env))
    return probe.returncode == 0


def fake_input_offered(env: Mapping[str, str]) -> bool:
    """Whether this program sees org_kde_kwin_fake_input (KWin hides it from the untrusted)."""
    with Connection.open(env) as wayland:
        return any(found.interface == FAKE_INPUT for found in wayland.registry().values())


def uninstall(env: Mapping[str, str]) -> Outcome:
    outcome = Outcome()
    for path in (desktop_file(env), interpreter_folder(env)):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        else:
            continue
        if path.exists():
            raise SetupFailed(f"{path} is still there after its removal")
        outcome.done.append(f"removed {path}")
    return outcome


def _run(
    argv: list[str], check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return setup_command(argv, env, check, COMMAND_TIMEOUT)
