"""The janitor of one attempt on a Ray node: it ends what the attempt started when the Ray
worker running the attempt dies under it.

A dead worker runs no clean-up, and Ray kills a worker's child processes with it (force
cancel on Ctrl-C does both), so the attempt's virtual desktop, applications and
`roundhouse run` would live on. The worker therefore starts this script detached (it
forks and its first process exits at once: not the worker's child, Ray does not kill it),
and marks everything the attempt starts with MARKER in its environment (re-parented
daemons inherit it too). The worker holds the write end of the janitor's standard input:

- the worker writes "done" when the attempt has ended and cleaned up: the janitor kills
  any marked process still left (a backstop) and exits;
- end-of-file without "done" means the worker died: the janitor sends SIGTERM to every
  marked process (Xvfb and the buses exit cleanly on it), SIGKILL to any still there after
  a grace period, and removes the attempt's folder and its desktops' runtime folders.

Run as a script (`python janitor.py MARKER FOLDER`), standard library only: it starts
in milliseconds, for every attempt.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from pathlib import Path

MARKER = "RH_ATTEMPT"
DONE = b"done\n"
GRACE = 3.0
DESKTOP_RUNTIME_PREFIX = "roundhouse-desktop-"  # VirtualDesktop's XDG_RUNTIME_DIR


def marked(marker: str) -> dict[int, dict[str, str]]:
    """Every other process whose environment holds MARKER=marker: pid → its environment."""
    wanted = f"{MARKER}={marker}".encode()
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


def sweep(marker: str, grace: float = GRACE) -> list[int]:
    """End every marked process: SIGTERM, then SIGKILL after `grace`; their runtime folders
    of virtual desktops go too. The pids that were found."""
    found = marked(marker)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and set(marked(marker)) & set(found):
        time.sleep(0.05)
    for pid in set(marked(marker)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for environ in found.values():
        runtime = environ.get("XDG_RUNTIME_DIR", "")
        if Path(runtime).name.startswith(DESKTOP_RUNTIME_PREFIX):
            shutil.rmtree(runtime, ignore_errors=True)
    return sorted(found)


def main(argv: list[str]) -> int:
    marker, folder = argv[1], argv[2]
    if os.fork():
        os._exit(0)  # the worker reaps this one; the other lives on, owned by init
    os.setsid()  # and a signal to the worker's group does not reach it
    said = b""
    while True:
        chunk = os.read(0, 64)
        if not chunk:
            break
        said += chunk
    if said != DONE:  # the worker died under the attempt
        sweep(marker)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # the batch's folder, when this was its last
            Path(folder).parent.rmdir()
    else:
        sweep(marker, grace=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
