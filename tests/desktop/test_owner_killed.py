"""A `roundhouse run --desktop virtual` SIGKILLed mid-round leaves nothing running: its
desktop's janitor ends Xvfb, the buses, the window manager and the applications."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from roundhouse.devices.linux.reaper import TAG_ENV

ROUNDHOUSE = str(Path(sys.executable).with_name("roundhouse"))


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def _tagged(tag: str) -> list[int]:
    wanted = f"{TAG_ENV}={tag}".encode()
    pids = [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]
    return [pid for pid in pids if wanted in _environ(pid)]


def _desktop_tag_of(owner: int) -> str | None:
    """The tag of the Xvfb that `owner` started (its child)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, _, rest = stat.partition(") ")
        if name.endswith("(Xvfb") and int(rest.split()[1]) == owner:
            for item in _environ(int(entry.name)):
                if item.startswith(f"{TAG_ENV}=".encode()):
                    return item.split(b"=", 1)[1].decode()
    return None


def test_a_killed_run_leaves_no_process_of_its_desktop(tmp_path: Path) -> None:
    target = tmp_path / "out" / "notes.txt"
    request = f"Launch the text editor, write 'one two three' and save the document to {target}"
    run = subprocess.Popen(
        [ROUNDHOUSE, "run", request, "--desktop", "virtual", "--yes", "--logs", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tag = None
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            tag = tag or _desktop_tag_of(run.pid)
            steps = list(tmp_path.glob("*/response.log"))
            if tag and steps and len(steps[0].read_text().splitlines()) >= 2:
                break  # the editor has been launched: an application runs on the desktop
            assert run.poll() is None, "the run ended before it could be killed"
            time.sleep(0.1)
        assert tag is not None, "no Xvfb of the run was found"
        assert len(_tagged(tag)) >= 4  # Xvfb, the buses, openbox, the editor...
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in _tagged(tag)}
        assert not left, f"left running after the kill: {left}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for pid in _tagged(tag) if tag else []:
            os.kill(pid, signal.SIGKILL)
