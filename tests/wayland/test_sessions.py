"""A Wayland session as a person has one: started with `roundhouse desktop start --session
KIND`, then used only through the lines it printed, as a terminal of that session would
be (`--desktop current`, nothing else carried over). On each of sway, labwc, GNOME and KDE:
doctor says wayland and exits 0, a screenshot is a real picture of the screen, the offline
agent opens gedit, types a line and saves it; stopping the session, or killing the process
that owns one, leaves none of its processes running."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from tests.desktop.conftest import kill_session, wait_until
from tests.helpers import tagged
from tests.wayland.conftest import SESSIONS, skip_unless_this_release_has

from roundhouse.devices.linux.display.backends import named
from roundhouse.devices.linux.display.kde.kwin import NO_GPU_FIX

ROUNDHOUSE = str(Path(sys.executable).with_name("roundhouse"))
COMMAND_TIMEOUT = 180  # seconds for one command of a test (the agent's run is the longest)


def roundhouse(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ROUNDHOUSE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def session_env(printed: str) -> dict[str, str]:
    """What a terminal of the session has: the lines `desktop start` printed, on top of a
    bare login environment (no DISPLAY, no bus, nothing of the test's own session)."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "RH_LOOPBACK_ONLY": "1",
    }
    for line in printed.splitlines():
        words = shlex.split(line)
        if words[:1] == ["export"]:
            name, _, value = words[1].partition("=")
            env[name] = value
        elif words[:1] == ["unset"]:
            env.pop(words[1], None)
    return env


@pytest.fixture(scope="module", params=SESSIONS)
def started(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """A session started by `roundhouse desktop start --session KIND`: its name and the
    environment its lines give; stopped (by name) after the module's tests."""
    skip_unless_this_release_has(request.param)
    done = roundhouse("desktop", "start", "--session", request.param)
    assert done.returncode == 0, done.stderr
    name = done.stderr.split(" desktop ", 1)[1].split()[0]
    try:
        yield name, session_env(done.stdout)
    finally:
        roundhouse("desktop", "stop", name)


def test_the_printed_lines_are_a_wayland_terminals(started: tuple[str, dict[str, str]]) -> None:
    name, env = started
    assert env["XDG_SESSION_TYPE"] == "wayland"
    assert env["XDG_CURRENT_DESKTOP"] == named(name.split("-")[0]).current_desktop
    assert (Path(env["XDG_RUNTIME_DIR"]) / env["WAYLAND_DISPLAY"]).is_socket()
    assert env["DBUS_SESSION_BUS_ADDRESS"].startswith("unix:path=")
    assert "DISPLAY" not in env
    status = json.loads(roundhouse("desktop", "status", "--json").stdout)
    row = next(row for row in status["desktops"] if row["display"] == name)
    assert row["status"] == "running" and row["session"] == name.split("-")[0]


def screen_refused(env: dict[str, str]) -> str | None:
    """Why the session serves no screenshots, as doctor says it, when the cause is KWin 6
    without a GPU render node (Debian 13's KWin 6.3 here: no permission would help)."""
    report = json.loads(roundhouse("doctor", "--desktop", "current", "--json", env=env).stdout)
    (shots,) = [check for check in report["checks"] if check["name"] == "screenshots"]
    if shots["ok"] or shots["fix"] != NO_GPU_FIX:
        return None
    return str(shots["detail"])


def test_doctor_on_the_current_session_says_wayland_and_exits_0(
    started: tuple[str, dict[str, str]],
) -> None:
    """Exit 0 where the agent can observe and act; where KWin serves no screenshots (no GPU
    render node), exit 1, the screenshots line FAILs with the cause and the fix, and every
    other route is ok."""
    _, env = started
    done = roundhouse("doctor", "--desktop", "current", env=env)
    assert "wayland session" in done.stdout
    if screen_refused(env) is not None:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAIL screenshots: KWin offers no ScreenShot2" in done.stdout
        assert NO_GPU_FIX in done.stdout
        for check in ("input", "windows", "accessibility bus"):
            assert f"ok   {check}:" in done.stdout
        return
    assert done.returncode == 0, done.stdout + done.stderr
    for check in ("input", "screenshots", "windows", "accessibility bus"):
        assert f"ok   {check}:" in done.stdout
    report = json.loads(roundhouse("doctor", "--desktop", "current", "--json", env=env).stdout)
    assert report["ok"] and report["session"] == "wayland", report
    assert set(report["routes"]) == {"input", "screenshots", "windows"}


def test_a_screenshot_of_the_current_session_is_a_real_picture(
    started: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    _, env = started
    document = tmp_path / "shown.txt"
    document.write_text("".join(f"a line of text, number {n}\n" for n in range(30)))
    gedit = subprocess.Popen(
        ["gedit", "--standalone", str(document)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:

        def listed() -> bool:
            return "shown.txt" in roundhouse("windows", "--desktop", "current", env=env).stdout

        wait_until(listed, 30, "gedit's window")
        target = tmp_path / "screen.png"
        done = roundhouse("screenshot", "--desktop", "current", "--output", str(target), env=env)
        why = screen_refused(env)
        if why is not None:  # refused at once, with the cause, and no file written
            assert done.returncode != 0 and "render node" in done.stderr, done.stderr
            assert not target.exists()
            return
        assert done.returncode == 0, done.stderr
        with Image.open(target) as picture:
            assert picture.size == (1280, 800)
            colours: list[tuple[int, tuple[int, int, int]]] = (
                picture.convert("RGB").getcolors(1 << 16) or []
            )
            assert len(colours) > 50  # text, a window and its frame: not a fill
            # gedit's white page takes a good part of the screen.
            white = sum(count for count, (r, g, b) in colours if min(r, g, b) >= 250)
            assert white > 0.1 * 1280 * 800
    finally:
        kill_session(gedit)


def test_the_offline_agent_opens_gedit_types_a_line_and_saves_it(
    started: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    _, env = started
    target = tmp_path / "saved" / "hello.txt"
    request = f"open gedit, type Hello from roundhouse and save it as {target}"
    done = subprocess.run(
        [ROUNDHOUSE, "run", request, "--model", "offline", "--desktop", "current", "--yes"]
        + ["--logs", str(tmp_path / "logs")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    # Where KWin 6 serves no screenshots (no GPU render node), the offline agent works
    # from the tree and keys all the same: the settle then waits out its grace.
    assert done.returncode == 0, done.stdout + done.stderr
    assert target.read_text() == "Hello from roundhouse\n"  # gedit ends a file with \n
    closing = roundhouse("windows", "--desktop", "current", "--json", env=env)
    for window in json.loads(closing.stdout):
        if window["pid"]:
            os.kill(window["pid"], signal.SIGTERM)


@pytest.mark.parametrize("kind", SESSIONS)
def test_stopping_a_session_ends_its_processes_and_its_folder(kind: str) -> None:
    skip_unless_this_release_has(kind)
    done = roundhouse("desktop", "start", "--session", kind, "--json")
    assert done.returncode == 0, done.stderr
    started = json.loads(done.stdout)
    state = json.loads(Path(started["state_file"]).read_text())
    tag, runtime = state["tag"], Path(state["runtime_dir"])
    env = session_env("\n".join(f"export {k}={shlex.quote(v)}" for k, v in started["env"].items()))
    app = subprocess.Popen(
        ["gedit", "--standalone"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: "gedit" in roundhouse("windows", "--desktop", started["display"]).stdout)
        assert len(tagged(tag)) >= 2  # the compositor, the bus (gedit has no tag)
        assert roundhouse("desktop", "stop", started["display"]).returncode == 0
        wait_until(lambda: app.poll() is not None, 15, "gedit, a client of the session, to end")
        left = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in tagged(tag)}
        assert not left, f"left running after the stop: {left}"
        assert not runtime.exists()
    finally:
        kill_session(app)
        for pid in tagged(tag):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("kind", SESSIONS)
def test_a_killed_owner_leaves_no_process_of_its_session(kind: str) -> None:
    """The janitor ends a Wayland desktop whose owner was SIGKILLed, as it does Xvfb's."""
    skip_unless_this_release_has(kind)
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from roundhouse.config import DesktopSettings\n"
            "from roundhouse.devices.linux.desktops.virtual import VirtualDesktop\n"
            f"virtual = VirtualDesktop(DesktopSettings(session={kind!r}))\n"
            "virtual.start()\n"
            "print(virtual.state().tag, flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    tag = ""
    try:
        assert owner.stdout is not None
        tag = owner.stdout.readline().strip()
        assert tag and len(tagged(tag)) >= 2
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 20
        while tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in tagged(tag)}
        assert not left, f"left running after the owner's kill: {left}"
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()
        for pid in tagged(tag) if tag else []:
            os.kill(pid, signal.SIGKILL)


def test_doctor_says_what_is_refused_and_the_fix_and_exits_1(
    started: tuple[str, dict[str, str]],
) -> None:
    """A session that names another family than its compositor's: the routes that family
    needs are refused, and doctor says so, with the fix, instead of reporting "ok"."""
    _, env = started
    other = {"sway": "GNOME", "GNOME": "KDE", "KDE": "sway", "labwc:wlroots": "KDE"}[
        env["XDG_CURRENT_DESKTOP"]
    ]
    done = roundhouse("doctor", "--desktop", "current", env={**env, "XDG_CURRENT_DESKTOP": other})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL display server:" in done.stdout and "fix: " in done.stdout
    assert "the agent cannot work here" in done.stdout
    nowhere = {**env, "WAYLAND_DISPLAY": "wayland-none"}
    done = roundhouse("doctor", "--desktop", "current", env=nowhere)
    assert done.returncode == 1 and "not usable" in done.stderr


def test_the_suites_gedit_and_calculator_tasks_pass_on_labwc(tmp_path: Path) -> None:
    """labwc, added as one folder and one record: the shipped suite's gedit save and
    Calculator 739, replayed by `batch --session labwc`, pass as they do on X11."""
    skip_unless_this_release_has("labwc")
    suite = Path(__file__).parents[2] / "tasks" / "basic"
    done = subprocess.run(
        [ROUNDHOUSE, "batch", str(suite), "--session", "labwc", "--model", "replay"]
        + ["--task", "gedit-type-save", "--task", "calculator-739", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=2 * COMMAND_TIMEOUT,
        env={k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")},
    )
    rows = {row["task"]: row for row in json.loads((tmp_path / "results.json").read_text())}
    assert {task: row["passed"] for task, row in rows.items()} == {
        "gedit-type-save": True,
        "calculator-739": True,
    }, done.stdout + done.stderr
