"""A janitor: it ends what its owner started when the owner dies without cleaning up.

A SIGKILLed process runs no clean-up, and Ray kills a worker's child processes with it, so
a virtual desktop, its applications and `roundhouse run` would live on for good. Two
owners use this: a Ray worker running a batch attempt (key RH_ATTEMPT) and a process that
owns a virtual desktop (key RH_DESKTOP_TAG). The owner starts this script detached (it
forks and its first process exits at once: not the owner's child, so nothing that kills
the owner's children kills it), and everything the owner starts carries KEY=VALUE in its
environment (re-parented daemons inherit it too). The owner holds the write end of the
janitor's standard input:

- "done": the owner has ended and cleaned up; the janitor kills any marked process still
  left (a backstop) and exits;
- "keep": the owner leaves what it started running on purpose (`roundhouse desktop
  start`); the janitor exits and touches nothing;
- end-of-file without either means the owner died: the janitor sends SIGTERM to every
  marked process (Xvfb and the buses exit cleanly on it), SIGKILL to any still there after
  a grace period, and removes the owner's folder and its desktops' runtime folders.

Run as a script (`python janitor.py KEY VALUE FOLDER`), standard library only: it starts
in milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

MARKER = "RH_ATTEMPT"  # the key of a batch attempt's processes
DONE = b"done\n"
KEEP = b"keep\n"
GRACE = 3.0
DESKTOP_RUNTIME_PREFIX = "roundhouse-desktop-"  # VirtualDesktop's XDG_RUNTIME_DIR


def marked(key: str, marker: str) -> dict[int, dict[str, str]]:
    """Every other process whose environment holds KEY=marker: pid → its environment."""
    wanted = f"{key}={marker}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            items = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        if wanted in items:
            pairs = (item.decode(errors="replace").partition("=") for item in items if item)
            found[int(entry.name)] = {key: value for key, _, value in pairs}
    return found


def sweep(key: str, marker: str, grace: float = GRACE) -> list[int]:
    """End every marked process: SIGTERM, then SIGKILL after `grace`; their runtime folders
    of virtual desktops go too. The pids that were found."""
    found = marked(key, marker)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    # A loop of its own, not core/polling.py: this script imports the standard library only.
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and set(marked(key, marker)) & set(found):
        time.sleep(0.05)
    for pid in set(marked(key, marker)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for environ in found.values():
        runtime = environ.get("XDG_RUNTIME_DIR", "")
        if Path(runtime).name.startswith(DESKTOP_RUNTIME_PREFIX):
            shutil.rmtree(runtime, ignore_errors=True)
    return sorted(found)


def start(key: str, marker: str, folder: str) -> int:
    """Start a janitor for KEY=marker and return the lifeline: the file descriptor to
    write DONE or KEEP to and close (closed by dying, it means: clean up)."""
    lifeline, ours = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-I", __file__, key, marker, folder],
            stdin=lifeline,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,  # returns once the janitor has forked away
        )
    except BaseException:
        os.close(ours)
        raise
    finally:
        os.close(lifeline)
    return ours


def release(lifeline: int, word: bytes = DONE) -> None:
    """Tell the janitor how its owner ended (DONE or KEEP), and let it go."""
    try:
        os.write(lifeline, word)
    finally:
        os.close(lifeline)


def main(argv: list[str]) -> int:
    key, marker, folder = argv[1], argv[2], argv[3]
    if os.fork():
        os._exit(0)  # the worker reaps this one; the other lives on, owned by init
    os.setsid()  # and a signal to the worker's group does not reach it
    said = b""
    while True:
        chunk = os.read(0, 64)
        if not chunk:
            break
        said += chunk
    if said == KEEP:
        return 0
    if said != DONE:  # the owner died without cleaning up
        sweep(key, marker)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # the batch's folder, when this was its last
            Path(folder).parent.rmdir()
    else:
        sweep(key, marker, grace=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
