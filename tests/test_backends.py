"""The display backends are declared once: a record per backend, in a folder of its own, read
by everything else; and nothing outside display/ and desktops/ names a session kind."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux import doctor
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.backend import CAPABILITIES, SetupFailed
from roundhouse.devices.linux.display.gnome import install
from roundhouse.devices.linux.display.kde import vouch
from roundhouse.devices.linux.doctor import diagnose

SRC = Path(__file__).parents[1] / "src" / "roundhouse"
DISPLAY = SRC / "devices" / "linux" / "display"


@pytest.mark.parametrize("backend", backends.BACKENDS, ids=lambda b: b.kind)
def test_each_backend_is_one_folder_and_one_record(backend: backends.Backend) -> None:
    module = backend.open.__module__
    folder = module.split(".")[-2]
    assert module == f"roundhouse.devices.linux.display.{folder}.backend", module
    assert type(backend.compositor).__module__ == module  # its compositor lives there too
    assert {route.capability for route in backend.routes} == set(CAPABILITIES)
    for route in backend.routes:
        assert route.name and route.needs, route
    assert backend.compositor.packages and backend.compositor.server
    assert all(name == name.lower() for name in backend.desktop_names)
    if backend.wayland:
        assert backend.current_desktop, "its virtual session says what it is"


def test_kinds_are_unique_and_named_by_their_records() -> None:
    assert len(set(backends.SESSION_KINDS)) == len(backends.BACKENDS)
    for backend in backends.BACKENDS:
        assert backends.named(backend.kind) is backend
    assert backends.named(None).kind == backends.DEFAULT_KIND
    with pytest.raises(backends.UnknownKind, match="no session kind 'weston'.*sway"):
        backends.named("weston")


def test_nothing_outside_display_and_desktops_names_a_session_kind() -> None:
    """A new backend is one folder and one record: no table elsewhere lists the kinds."""
    kinds = set(backends.SESSION_KINDS) | {backend.family for backend in backends.BACKENDS}
    allowed = (DISPLAY, SRC / "devices" / "linux" / "desktops")
    named = []
    for path in sorted(SRC.rglob("*.py")):
        if any(path.is_relative_to(folder) for folder in allowed):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in kinds:
                named.append(f"{path.relative_to(SRC)}:{node.lineno} {node.value!r}")
    assert not named, named


def test_no_module_outside_display_imports_a_backends_own_package() -> None:
    """What another layer needs of a session goes through the backend records and the
    display seam (display/backends.py, base.py, backend.py), never a backend's own folder:
    a backend stays one folder that can change alone. The Wayland protocol package is
    shared plumbing of the backends, not one of them."""
    own = {backend.open.__module__.split(".")[-2] for backend in backends.BACKENDS}
    assert own == {"x11", "wlroots", "labwc", "gnome", "kde"}
    leaks = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(DISPLAY):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [f"{node.module}.{alias.name}" for alias in node.names]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            leaks += [
                f"{path.relative_to(SRC)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[:4] == ["roundhouse", "devices", "linux", "display"]
                and name.split(".")[4:5] in [[folder] for folder in own]
            ]
    assert not leaks, leaks


def test_the_product_imports_no_test_double() -> None:
    """roundhouse.testing holds the fakes that ship; nothing outside it imports them."""
    importing = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(SRC / "testing"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [module]
            if any(
                n and (n == "roundhouse.testing" or n.startswith("roundhouse.testing."))
                for n in names
            ):
                importing.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not importing, importing


def test_the_readmes_table_of_sessions_is_the_records() -> None:
    """The table of what each session kind uses is made from the backend records: a route
    renamed, added or dropped, or a person watch changed, fails here until the README has
    the table again (print backends.capability_table() and paste it)."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    table = backends.capability_table()
    assert table in readme, f"README.md's table of sessions is stale; it is now:\n{table}"
    for backend in backends.BACKENDS:
        assert f"| {backend.title} |" in table
        for route in backend.routes:
            assert route.name in table
        assert backend.person_watch and backend.person_watch in table


def test_an_unknown_session_kind_is_refused_naming_the_kinds() -> None:
    with pytest.raises(DesktopUnavailable, match="no session kind 'mir'.*x11.*labwc"):
        VirtualDesktop(DesktopSettings(session="mir")).start()


@pytest.mark.parametrize("kind", [b.kind for b in backends.BACKENDS if b.wayland])
async def test_doctor_names_the_records_fix_when_a_session_cannot_be_opened(
    kind: str, tmp_path: Path
) -> None:
    """The fix comes from the backend's record, whatever its kind (doctor once looked a
    sway session's fix up by family, and showed none)."""
    env = {
        "WAYLAND_DISPLAY": "wayland-9",
        "XDG_RUNTIME_DIR": str(tmp_path),  # no compositor listens there
        "XDG_SESSION_TYPE": "wayland",
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'bus'}",
    }
    report = await diagnose(Desktop("wayland-9", env, 1280, 800, virtual=False, kind=kind))
    (failed,) = [check for check in report.checks if check.name == "display server"]
    assert not failed.ok and failed.fix, failed
    assert not report.ok


def test_doctor_names_the_packages_a_session_still_needs_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(doctor, "_installed_packages", lambda: {"at-spi2-core", "libatk-adaptor"})
    check = doctor._packages_check(backends.named("gnome"))
    assert check is not None and not check.ok and not check.required
    assert check.fix == (
        "sudo apt-get install gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base"
    )
    installed = doctor._packages_check(backends.named("sway"))
    assert installed is not None and installed.ok


@pytest.mark.parametrize(
    ("version", "form", "declared"),
    [
        ("43.9", "init()", ["43", "44"]),
        ("44.2", "init()", ["43", "44"]),
        ("46.0", "export default", ["45", "46", "47", "48"]),
        ("48.4", "export default", ["45", "46", "47", "48"]),
        ("49.1", "export default", ["45", "46", "47", "48", "49"]),
    ],
)
def test_the_gnome_extension_fits_the_running_shell(
    version: str, form: str, declared: list[str]
) -> None:
    """GNOME 43 and 44 load an extension as a script, 45 and later as a module: the form that
    fits is installed, declaring the versions it works with, with the one shared core."""
    files = install.extension_files(version)
    metadata = json.loads(files["metadata.json"])
    assert metadata["uuid"] == install.UUID and metadata["shell-version"] == declared
    script = files["extension.js"]
    assert form in script and "function roundhouseShell(Main)" in script
    assert "/*CORE*/" not in script and 'name="Eval"' not in script  # it exports no Eval
    with pytest.raises(SetupFailed, match="older than 43"):
        install.extension_files("42.5")


def test_kde_relaunches_only_under_a_vouched_interpreter_it_is_not_yet(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert vouch.relaunch_interpreter(env) is None  # no setup: nothing to start again as
    interpreter = vouch.interpreter(env)
    interpreter.parent.mkdir(parents=True)
    interpreter.write_text("")
    assert vouch.relaunch_interpreter(env) is None  # no desktop file vouches for it
    vouch.desktop_file(env).parent.mkdir(parents=True)
    vouch.desktop_file(env).write_text("[Desktop Entry]\n")
    assert vouch.relaunch_interpreter(env) == str(interpreter)


def test_setup_kde_reads_its_desktop_file_back_and_says_what_it_could_not_ask(
    tmp_path: Path,
) -> None:
    """With no KDE session to ask, setup says so rather than that KWin took it; the desktop
    file is read back as KWin reads it; --undo checks that what it removed is gone."""
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    done = vouch.install(env)
    assert done.done[-1].startswith("no KDE session here to ask"), done.done
    entry = vouch.desktop_file(env).read_text()
    assert f"Exec={vouch.interpreter(env)} -m roundhouse\n" in entry
    assert all(f"{line}\n" in entry for line in vouch.INTERFACES)
    undone = vouch.uninstall(env)
    assert undone.done == [
        f"removed {vouch.desktop_file(env)}",
        f"removed {vouch.interpreter_folder(env)}",
    ]
    assert not vouch.desktop_file(env).exists() and not vouch.interpreter_folder(env).exists()


@pytest.mark.skipif(
    shutil.which("gnome-shell") is None or shutil.which("dbus-run-session") is None,
    reason="gnome-shell and dbus are installed by `make system-deps`",
)
def test_setup_gnome_with_no_session_bus_stores_what_the_next_login_reads(tmp_path: Path) -> None:
    """Over ssh or from a provisioning script there is no session bus, and gsettings loses
    its writes with exit 0: setup writes through a private bus, reads it back, and the
    person's dconf file (what GNOME Shell reads at the next login) holds it; --undo too."""
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}

    def setup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "roundhouse", "setup", *args, "gnome"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    def enabled() -> str:  # read as GNOME Shell reads it at its start: no bus needed
        return subprocess.run(
            ["gsettings", "get", "org.gnome.shell", "enabled-extensions"],
            env=env, capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()  # fmt: skip

    done = setup()
    assert done.returncode == 0, done.stderr
    assert "added it to GNOME Shell's enabled extensions (read back)" in done.stdout
    assert enabled() == f"['{install.UUID}']"
    assert (tmp_path / ".config/dconf/user").is_file()
    assert (install.extension_folder(env) / "extension.js").is_file()

    undone = setup("--undo")
    assert undone.returncode == 0, undone.stderr
    assert "removed it from GNOME Shell's enabled extensions (read back)" in undone.stdout
    assert enabled() == "@as []"
    assert not install.extension_folder(env).exists()
