"""GNOME and KDE as distributions ship them, as a person has them: started with `roundhouse
desktop start --session KIND --shipped` (GNOME Shell without unsafe mode, KWin with its
permission checks on), then used only through the lines it printed, in a HOME of the test's
own, as a terminal of that session would be.

Before `roundhouse setup KIND`: the tree, screenshots (GNOME) and clicks through a
control's accessibility action work, a GNOME Text Editor task done by keys works (GNOME), and
doctor names the setup. After it (and, on GNOME's
Wayland, a log-out and in: the session is started again with the same HOME): doctor exits
0, the offline agent saves a line typed into gedit, Calculator shows 739, and a screenshot
is a real picture."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from PIL import Image
from tests.desktop.conftest import wait_until
from tests.person.test_locked import RUN_DIALOG
from tests.wayland.conftest import skip_unless_this_release_has
from tests.wayland.test_sessions import COMMAND_TIMEOUT, ROUNDHOUSE, screen_refused, session_env

from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import named, open_display
from roundhouse.devices.linux.display.base import DisplayServer


class Session:
    """A shipped session of one kind in a HOME of its own, started and stopped as a person
    logs in and out."""

    def __init__(self, kind: str, home: Path) -> None:
        self.kind, self.home = kind, home
        self.name = ""
        self.env: dict[str, str] = {}

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ROUNDHOUSE, *args],
            env=self.env or {**self._login(), "PATH": os.environ["PATH"]},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )

    def _login(self) -> dict[str, str]:
        return {"HOME": str(self.home), "LANG": "C.UTF-8", "RH_LOOPBACK_ONLY": "1"}

    def log_in(self) -> None:
        done = self.run("desktop", "start", "--session", self.kind, "--shipped")
        assert done.returncode == 0, done.stderr
        self.name = done.stderr.split(" desktop ", 1)[1].split()[0]
        self.env = {**session_env(done.stdout), **self._login()}

    def log_out(self) -> None:
        env, self.env = self.env, {}
        if self.name:
            self.run("desktop", "stop", self.name)
        self.env, self.name = {}, ""
        del env

    def quit_apps(self) -> None:
        listed = self.run("windows", "--desktop", "current", "--json")
        for window in json.loads(listed.stdout or "[]"):
            if window["pid"]:
                os.kill(window["pid"], signal.SIGTERM)


@pytest.fixture(scope="module", params=["gnome", "kde"])
def shipped(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Session]:
    skip_unless_this_release_has(request.param)
    session = Session(request.param, tmp_path_factory.mktemp(f"home-{request.param}"))
    session.log_in()
    try:
        yield session
    finally:
        session.log_out()


def test_before_setup_doctor_names_the_setup_and_what_needs_no_setup_works(
    shipped: Session, tmp_path: Path
) -> None:
    doctor = shipped.run("doctor", "--desktop", "current")
    assert f"roundhouse setup {shipped.kind}" in doctor.stdout, doctor.stdout
    tree = shipped.run("tree", "--desktop", "current")
    if shipped.kind == "gnome":
        # Nothing refused whole: one note for the missing window positions, exit 0.
        assert doctor.returncode == 0, doctor.stdout
        assert "note window positions:" in doctor.stdout
        shot = tmp_path / "before.png"
        done = shipped.run("screenshot", "--desktop", "current", "--output", str(shot))
        assert done.returncode == 0, done.stderr
        with Image.open(shot) as picture:
            assert picture.size == (1280, 800)
    else:
        # KWin refuses screenshots and input to a program nothing vouches for.
        assert doctor.returncode == 1 and "FAIL screenshots:" in doctor.stdout, doctor.stdout
        assert "note input:" in doctor.stdout
    assert tree.returncode in (0, 1), tree.stderr  # no window yet is "no such window"
    # A click through the buttons' accessibility action needs no position, nor input.
    done = shipped.run(
        "run",
        "open the calculator, then click the 7 button, then click the 3 button, then click "
        "the 9 button",
        *("--model", "offline", "--desktop", "current", "--yes", "--logs", str(tmp_path)),
        cwd=tmp_path,
    )
    try:
        if shipped.kind == "kde" and screen_refused(shipped.env) is None:
            assert done.returncode == 0, done.stdout + done.stderr
        elif shipped.kind == "gnome":
            assert done.returncode == 0, done.stdout + done.stderr
            controls = shipped.run("tree", "--desktop", "current", "--controls")
            assert "'739'" in controls.stdout, controls.stdout
    finally:
        shipped.quit_apps()
    if shipped.kind == "gnome":
        two_lines_saved_by_keys(shipped, tmp_path)


def two_lines_saved_by_keys(shipped: Session, tmp_path: Path) -> None:
    """A task that needs no pointer works before the extension runs: GNOME Text Editor's
    text view refuses GrabFocus (GTK 4) but has the caret, and its Save As dialog (GTK 4.8:
    role filler, never active) is found through the tree."""
    target = tmp_path / "two.txt"
    done = shipped.run(
        "run",
        f"open Text Editor and write 'first line' then press Enter and write 'second line', "
        f"then save it as {target}",
        *("--model", "offline", "--desktop", "current", "--yes", "--logs", str(tmp_path)),
        cwd=tmp_path,
    )
    try:
        # Seen once under load, cause unknown: the Save dialog's Return "opened a new window"
        # and the title never named the file. What the session lists then, and whether the
        # file was written, go with the failure.
        listed = (
            "" if done.returncode == 0 else shipped.run("windows", "--desktop", "current").stdout
        )
        said = f"{done.stdout}{done.stderr}\nwindows now:\n{listed}\nsaved: {target.exists()}"
        assert done.returncode == 0, said
        assert "Traceback" not in done.stderr, done.stderr
        wait_until(target.exists, 10, "the saved file")
        assert target.read_text() == "first line\nsecond line\n"
    finally:
        shipped.quit_apps()


def test_after_setup_the_agent_works_as_on_its_own_desktops(
    shipped: Session, tmp_path: Path
) -> None:
    done = shipped.run("setup", shipped.kind)
    assert done.returncode == 0, done.stdout + done.stderr
    if shipped.kind == "gnome":
        assert "log out and in once" in done.stdout, done.stdout
    else:  # asked of KWin itself, as the interpreter it now trusts
        assert "KWin now offers it its fake input (asked as it)" in done.stdout, done.stdout
    shipped.log_out()  # GNOME on Wayland loads the extension at its next start
    shipped.log_in()
    doctor = shipped.run("doctor", "--desktop", "current")
    routes = named(shipped.kind).routes
    if screen_refused(shipped.env) is None:
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    # Where KWin 6 has no GPU render node, its screenshots stay refused (no setup helps).
    failing = "FAIL" if screen_refused(shipped.env) is None else "FAIL windows"
    for missing in ("note window positions", "note input", failing):
        assert missing not in doctor.stdout, doctor.stdout
    assert routes[0].name in doctor.stdout  # its preferred input route
    target = tmp_path / "saved" / "hello.txt"
    done = shipped.run(
        "run",
        f"open gedit, type Hello from roundhouse and save it as {target}",
        *("--model", "offline", "--desktop", "current", "--yes", "--logs", str(tmp_path)),
        cwd=tmp_path,
    )
    try:
        # Where KWin 6 serves no screenshots, the agent still works from the tree and keys.
        assert done.returncode == 0, done.stdout + done.stderr
        wait_until(lambda: target.exists(), 10, "the saved file")
        assert target.read_text() == "Hello from roundhouse\n"
        if shipped.kind == "gnome":
            a_shell_dialog_fails_a_run(shipped, tmp_path)
        if screen_refused(shipped.env) is not None:
            return
        shot = tmp_path / "after.png"
        assert (
            shipped.run("screenshot", "--desktop", "current", "--output", str(shot)).returncode == 0
        )
        with Image.open(shot) as picture:
            colours = picture.convert("RGB").getcolors(1 << 16) or []
            assert len(colours) > 50  # gedit's window and text: a real picture
    finally:
        shipped.quit_apps()
    undone = shipped.run("setup", "--undo", shipped.kind)
    assert undone.returncode == 0 and "removed" in undone.stdout, undone.stdout


def a_shell_dialog_fails_a_run(shipped: Session, tmp_path: Path) -> None:
    """Through the extension, as through Eval (tests/person/test_locked.py): a run while
    one of GNOME Shell's own dialogs shows FAILs naming it."""
    persons = Desktop(display="", env=shipped.env, width=1280, height=800, virtual=False)
    with open_display(dataclasses.replace(persons, kind="gnome")) as display:
        wait_until(lambda: opened_by_keys(display), 30, "the Shell's dialog")
        try:
            done = shipped.run(
                "run",
                "open gedit and type hello",
                *("--model", "offline", "--desktop", "current", "--yes", "--logs", str(tmp_path)),
                cwd=tmp_path,
            )
        finally:
            display.input.press_keys("Escape")
        wait_until(lambda: display.watch.blocked() is None, 20, "the dialog to go")
    assert done.returncode != 0, done.stdout
    assert f"GNOME Shell's own dialog {RUN_DIALOG!r} is up" in done.stdout, done.stdout


def opened_by_keys(display: DisplayServer) -> str | None:
    """The person presses alt+F2, and the Shell's run dialog shows within 5 s; again where
    it does not (Mutter drops the first key after a focus change: the key was lost)."""
    display.input.press_keys("alt+F2")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if reason := display.watch.blocked():
            return reason
        time.sleep(0.1)
    return None


INSPECTOR = Path(__file__).parents[2] / ".mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"


async def test_an_mcp_host_on_the_session_serves_it_over_stdio(shipped: Session) -> None:
    """`serve --stdio --desktop current`, started as an MCP host on the person's desktop
    starts it (with the session's environment only), answers the official client and the
    JS MCP Inspector: its windows, and the doctor's report."""
    server = StdioServerParameters(
        command=ROUNDHOUSE, args=["serve", "--stdio", "--desktop", "current"], env=shipped.env
    )
    async with Client(server, read_timeout_seconds=60) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"get_controls", "list_windows", "doctor"} <= names
        listed = await client.call_tool("list_windows", {})
        assert not listed.is_error, listed
        doctor = await client.call_tool("doctor", {})
        assert not doctor.is_error, doctor
        # A result goes once, as one JSON text (devices/mcp/server.py).
        [text] = [block.text for block in doctor.content if isinstance(block, TextContent)]
        report = json.loads(text)
        assert report["session"] == "wayland", report
    assert INSPECTOR.exists(), "make test installs the MCP Inspector (make mcp-inspector)"
    env_args = [arg for name, value in shipped.env.items() for arg in ("-e", f"{name}={value}")]
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *env_args, ROUNDHOUSE, "serve", "--stdio", "--desktop"]
        + ["current", "--method", "tools/call", "--tool-name", "list_windows"],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["isError"] is False


def test_batch_runs_on_gnome_as_shipped(tmp_path: Path) -> None:
    """`batch --session gnome --shipped`: a suite task on GNOME as distributions ship it,
    without roundhouse's extension (Calculator's buttons through their actions)."""
    skip_unless_this_release_has("gnome")
    suite = Path(__file__).parents[2] / "tasks" / "basic"
    done = subprocess.run(
        [ROUNDHOUSE, "batch", str(suite), "--session", "gnome", "--shipped"]
        + ["--model", "replay", "--task", "calculator-739", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=2 * COMMAND_TIMEOUT,
        env={k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")},
    )
    (row,) = json.loads((tmp_path / "results.json").read_text())
    assert row["passed"], done.stdout + done.stderr


def test_setup_gnome_with_no_session_bus_enables_the_extension_at_the_next_login(
    tmp_path: Path,
) -> None:
    """`setup gnome` over ssh or from a provisioning script (no session bus): at the next
    login the extension runs, and doctor finds the window positions it serves."""
    skip_unless_this_release_has("gnome")
    session = Session("gnome", tmp_path / "home")
    session.home.mkdir()
    done = session.run("setup", "gnome")  # not logged in: no session bus in its environment
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(read back)" in done.stdout, done.stdout
    session.log_in()
    try:
        doctor = session.run("doctor", "--desktop", "current")
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "note window positions" not in doctor.stdout, doctor.stdout
        assert "roundhouse's GNOME Shell extension (D-Bus)" in doctor.stdout, doctor.stdout
    finally:
        session.log_out()
