"""How the person hands the desktop back to a paused run: `roundhouse resume` on its log
folder signals the waiting process, which the CLI's hand-back is listening for."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from roundhouse.cli import app
from roundhouse.config import Settings
from roundhouse.core.record import Pause, RoundRecord, SessionRecord
from roundhouse.core.states import AgentKind
from roundhouse.engine.person import PersonHandBack
from roundhouse.logs.store import LogStore

WAITER = """
import signal, sys, time
signal.signal(signal.SIGUSR1, lambda *_: (open(sys.argv[1], "w").write("handed"), sys.exit(0)))
print("ready", flush=True)
time.sleep(60)
"""


async def test_the_runs_hand_back_listens_for_the_signal_resume_sends() -> None:
    waiting = asyncio.create_task(PersonHandBack(keys=False).wait("the pointer moved", 10))
    await asyncio.sleep(0.1)
    os.kill(os.getpid(), 10)  # SIGUSR1, as `roundhouse resume` sends it
    assert await waiting == "roundhouse resume"
    assert await PersonHandBack(keys=False).wait("the pointer moved", 0.05) is None


def test_resume_on_a_paused_runs_folder_hands_back_to_it(tmp_path: Path) -> None:
    marker = tmp_path / "handed"
    waiter = subprocess.Popen(
        [sys.executable, "-c", WAITER, str(marker)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert waiter.stdout is not None and waiter.stdout.readline() == "ready\n"
        store = LogStore.create(tmp_path / "logs", "paused")
        record = SessionRecord.describe(Settings(logs=tmp_path / "logs"), AgentKind.HOST)
        paused = RoundRecord(id=0, user_query="type hello into gedit")
        paused.pauses.append(
            Pause(
                step=2,
                tool="type_text",
                reason="the pointer moved",
                pid=waiter.pid,
                since=time.time(),
            )
        )
        record.rounds.append(paused)
        store.write_checkpoint(record)

        done = CliRunner().invoke(app, ["resume", str(store.folder)])
        assert done.exit_code == 0, done.output
        assert f"handed the desktop back to the run (pid {waiter.pid})" in done.output
        assert waiter.wait(timeout=10) == 0
        assert marker.read_text() == "handed"
    finally:
        waiter.kill()
        waiter.wait()
        assert waiter.stdout is not None
        waiter.stdout.close()
