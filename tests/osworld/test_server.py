"""`roundhouse serve --osworld` driven by OSWorld's own code (PythonController, SetupController
and DesktopEnv, in .venv-osworld): OSWorld's harness on a roundhouse desktop."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.osworld.conftest import EXAMPLES, HERE, run_theirs

START_TIMEOUT = 60.0
READY = re.compile(r"serving OSWorld's routes on (http://\S+)")


class Served:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process, self.url = process, url


def start_server(*extra: str, env: dict[str, str] | None = None) -> Served:
    process = subprocess.Popen(
        [sys.executable, "-m", "roundhouse", "serve", "--osworld", "--port", "0", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, start_new_session=True,
    )  # fmt: skip
    assert process.stderr is not None
    deadline = time.monotonic() + START_TIMEOUT
    seen = ""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        seen += line
        found = READY.search(line)
        if found:
            return Served(process, found.group(1))
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"the server did not start: {seen}")


def stop_server(served: Served) -> None:
    served.process.send_signal(signal.SIGTERM)
    try:
        served.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(served.process.pid, signal.SIGKILL)
        served.process.wait()
        raise AssertionError("the server did not stop on SIGTERM") from None
    finally:
        if served.process.stderr is not None:
            served.process.stderr.close()


@pytest.fixture
def server() -> Iterator[Served]:
    served = start_server()
    yield served
    stop_server(served)


def test_osworlds_controller_drives_a_roundhouse_desktop(
    server: Served, osworld_python: Path, tmp_path: Path
) -> None:
    seen = run_theirs(osworld_python, HERE / "drive_controller.py", {"server": server.url},
                      tmp_path)  # fmt: skip
    assert seen["png"] and seen["png_size"] == [1920, 1080]
    assert seen["screen_size"] == {"width": 1920, "height": 1080}
    assert seen["platform"] == "Linux"
    assert seen["execute"]["status"] == "success" and seen["execute"]["returncode"] == 0
    assert base64.b64decode(seen["file"]) == b"written by OSWorld"
    assert seen["missing_file"] is None
    written = [{"type": "file", "name": "from_osworld.txt"}]
    assert seen["listing"] == {"type": "directory", "name": "Desktop", "children": written}
    assert seen["desktop_path"].endswith("/Desktop")
    assert seen["terminal_before"] is None
    assert seen["launch"] == "gedit launched successfully"
    assert seen["tree_has_gedit"] and seen["tree_namespaces"]
    assert seen["typed"]
    assert seen["window_size"]["width"] > 0
    assert isinstance(seen["cursor"], list) and len(seen["cursor"]) == 2


def files_server(root: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    return http, f"http://127.0.0.1:{http.server_address[1]}"


def example(domain: str, task_id: str, base: str | None = None) -> dict[str, Any]:
    text = (EXAMPLES / "examples" / domain / f"{task_id}.json").read_text()
    if base is not None:
        text = text.replace("https://files.example.org", base)
    task: dict[str, Any] = json.loads(text)
    return task


def test_osworlds_desktop_env_scores_tasks_on_fresh_desktops(
    server: Served, osworld_python: Path, tmp_path: Path
) -> None:
    http, base = files_server(EXAMPLES / "files")
    try:
        lock = example("os", "rh-os-lock")
        photos = example("os", "rh-os-photos", base)  # downloads go through /setup/upload
        gedit = example("gui", "rh-gui-gedit")  # launch and activate_window
        bluetooth = example("os", "rh-os-bluetooth")
        solve_lock = ("import subprocess; subprocess.run(['gsettings', 'set', "
                      "'org.gnome.desktop.screensaver', 'lock-enabled', 'true'])")  # fmt: skip
        solve_photos = ("import subprocess; subprocess.run('mkdir -p ~/Desktop/jpgs && cp "
                        "~/Desktop/photos/trip/*.jpg ~/Desktop/jpgs/', shell=True)")  # fmt: skip
        runs = [
            {"task": lock, "actions": [solve_lock]},
            {"task": lock, "actions": []},  # a fresh desktop: the setting was not kept
            {"task": photos, "actions": [solve_photos]},
            # (without the folder, OSWorld's metric raises: an empty one scores 0)
            {
                "task": photos,
                "actions": ["import os; os.mkdir(os.path.expanduser('~/Desktop/jpgs'))"],
            },
            {"task": gedit, "actions": ["time.sleep(1); pyautogui.write('hello from roundhouse')"]},
            {"task": gedit, "actions": []},
            {"task": bluetooth, "actions": ["FAIL"]},
            {"task": bluetooth, "actions": ["DONE"]},
            {"task": lock, "actions": [solve_lock, "FAIL"]},  # gave up: 0 whatever it did
        ]
        job = {"server": server.url, "runs": runs, "cache": str(tmp_path / "cache")}
        seen = run_theirs(osworld_python, HERE / "drive_env.py", job, tmp_path)
    finally:
        http.shutdown()
        http.server_close()
    assert [run["score"] for run in seen] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    assert all(run["screenshot"] and run["tree"] for run in seen)
    info = httpx.get(server.url + "/roundhouse/info", timeout=10).json()
    assert info["resets"] == len(runs)  # the first task's desktop is the server's first


def test_off_loopback_the_server_wants_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RH_MCP_TOKEN"}
    refused = subprocess.run(
        [sys.executable, "-m", "roundhouse", "serve", "--osworld", "--host", "0.0.0.0"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "refusing to serve on 0.0.0.0 without a token" in refused.stderr


def test_with_a_token_every_request_must_carry_it(osworld_python: Path, tmp_path: Path) -> None:
    token = "s3cret-for-the-test"
    served = start_server(env={"RH_MCP_TOKEN": token})
    try:
        assert httpx.get(served.url + "/platform", timeout=10).status_code == 401
        bearer = {"Authorization": f"Bearer {token}"}
        assert httpx.get(served.url + "/platform", headers=bearer, timeout=10).text == "Linux"
        wrong = httpx.get(served.url + "/platform", auth=("user", "nope"), timeout=10)
        assert wrong.status_code == 401
        # OSWorld's controller sends no header of its own: requests takes the token from a
        # .netrc, as HTTP Basic auth.
        netrc = tmp_path / "netrc"
        netrc.write_text(f"machine 127.0.0.1 login roundhouse password {token}\n")
        netrc.chmod(0o600)
        job = {"server": served.url, "only": "screenshot"}
        script = HERE / "drive_controller.py"
        seen = run_theirs(osworld_python, script, job, tmp_path, {"NETRC": str(netrc)})
        assert seen["png"]
        absent = {"NETRC": str(tmp_path / "absent")}
        assert not run_theirs(osworld_python, script, job, tmp_path, absent)["png"]
    finally:
        stop_server(served)
