"""Plain helpers the tests share (fixtures live in conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.engine.session import Session


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def write_replay(path: Path, answers: list[Any]) -> Path:
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path


def shell_answer(
    status: str,
    command: str | None = None,
    result: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """A LinuxAgent answer as a model would give it."""
    return {
        "observation": "seen",
        "thought": "thinking",
        "action": {
            "function": "run_shell" if command is not None else None,
            "arguments": {"command": command} if command is not None else {},
            "status": status,
        },
        "plan": ["next"],
        "result": result,
        **extra,
    }


SessionFactory = Callable[..., Awaitable[Session]]


def processes_running(cmdline: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if cmdline in (entry / "cmdline").read_text():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])  # the name may hold spaces and parens


def descendants_running(ancestor: int, cmdline: str) -> list[int]:
    """The processes started (directly or not) by `ancestor` whose command line holds
    `cmdline`: a test's own, never another test's running beside it."""
    found = []
    for pid in processes_running(cmdline):
        parent = _parent(pid)
        while parent not in (None, 0, 1, ancestor):
            parent = _parent(parent)
        if parent == ancestor:
            found.append(pid)
    return found


T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T | None],
    what: str,
    timeout: float = 30.0,
    seen: Callable[[], object] = lambda: "nothing more to say",
) -> T:
    """predicate()'s first truthy value, polled; after `timeout` the test fails naming
    `what` and what `seen()` says of the state then (a condition, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}: {seen()}")
        time.sleep(0.02)
    return value


async def wait_for_async(
    predicate: Callable[[], T | None],
    what: str,
    timeout: float = 30.0,
    seen: Callable[[], object] = lambda: "nothing more to say",
) -> T:
    """wait_for on the event loop: what the test awaits goes on meanwhile."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}: {seen()}")
        await asyncio.sleep(0.02)
    return value


def kill_processes(cmdline: str) -> None:
    """End leftovers of a SIGKILLed run (its command ran in a process group of its own)."""
    for pid in processes_running(cmdline):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# YAML that PyYAML cannot build a document from, and what the ConfigError then says. Each
# raised something other than ConfigError (out of PyYAML or the decoder): a traceback.
UNREADABLE_YAML = [
    (b"max_step: \xff\xfe\n", "not UTF-8 text"),  # UnicodeDecodeError
    (b"max_step: " + b"[" * 1000, "nested too deeply"),  # RecursionError
    (b"max_step: " + b"9" * 5000, "ValueError"),  # past the 4300-digit limit
    (b"max_step: 2001-13-45\n", "ValueError: month"),  # an impossible date
    (b"max_step: !!bool maybe\n", "KeyError"),
    (b"max_step: !!timestamp soon\n", "AttributeError"),
    (b"max_step: !!float x\n", "ValueError"),
]


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def tagged(tag: str) -> list[int]:
    wanted = f"{TAG_ENV}={tag}".encode()
    pids = [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]
    return [pid for pid in pids if wanted in _environ(pid)]


def desktop_tag_of(owner: int) -> str | None:
    """The desktop tag of the Xvfb that `owner` started (its child), if it runs."""
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


async def whole_text(client: AtspiClient, node_id: str) -> str:
    """All of a control's text, as the tests' oracle reads it (the tools read at most a
    stretch around the caret)."""
    return (await client.read_text(node_id, 1_000_000)).text
