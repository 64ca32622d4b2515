"""A `roundhouse run --desktop virtual` SIGKILLed mid-round leaves nothing running: its
desktop's janitor ends Xvfb, the buses, the window manager and the applications."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import desktop_tag_of, tagged

ROUNDHOUSE = str(Path(sys.executable).with_name("roundhouse"))


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
            tag = tag or desktop_tag_of(run.pid)
            steps = list(tmp_path.glob("*/response.log"))
            if tag and steps and len(steps[0].read_text().splitlines()) >= 2:
                break  # the editor has been launched: an application runs on the desktop
            assert run.poll() is None, "the run ended before it could be killed"
            time.sleep(0.1)
        assert tag is not None, "no Xvfb of the run was found"
        assert len(tagged(tag)) >= 4  # Xvfb, the buses, openbox, the editor...
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=10)
        deadline = time.monotonic() + 15
        while tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in tagged(tag)}
        assert not left, f"left running after the kill: {left}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for pid in tagged(tag) if tag else []:
            os.kill(pid, signal.SIGKILL)
