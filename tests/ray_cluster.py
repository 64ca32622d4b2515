"""Real Ray for the batch tests, off the network: each test runs Ray inside network
namespaces it makes (only `lo` up, or a veth pair between two), and deletes them after.

Everything a test starts carries RH_TEST_MARK=<uuid> in its environment (Ray's daemons,
its workers, the tasks' desktops and runs inherit it), so a test can tell that nothing of
its batch is left running, and end what is left — by pid, only its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import shell_answer, write_replay

REPO = Path(__file__).parents[1]
BIN = Path(sys.executable).parent
MARK = "RH_TEST_MARK"


def ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@dataclass
class Lab:
    """The namespaces, the marker and the environment of one test."""

    mark: str = field(default_factory=lambda: uuid.uuid4().hex)
    namespaces: list[str] = field(default_factory=list)
    ray_tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="rhray-")))

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUNDHOUSE_", "RAY_"))}
        env.update(
            {
                MARK: self.mark,
                "RH_LOOPBACK_ONLY": "1",
                # Ray's sockets and session files, apart from any other Ray on the machine
                # (a short path: Unix socket names are limited to 107 bytes).
                "RAY_TMPDIR": str(self.ray_tmp),
                # One token for the test's nodes and driver; ~/.ray is left alone.
                "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN": self.token,
                "RAY_USAGE_STATS_ENABLED": "0",
            }
        )
        env.update(extra)
        return env

    @property
    def token(self) -> str:
        return self.mark  # a random 32-hex string, as Ray's own tokens are

    def namespace(self) -> str:
        name = f"rh{os.getpid()}-{len(self.namespaces)}"
        made = ip("netns", "add", name)
        if made.returncode != 0:
            pytest.skip(f"cannot make a network namespace here: {made.stderr.strip()}")
        self.namespaces.append(name)
        up = ip("-n", name, "link", "set", "lo", "up")
        assert up.returncode == 0, up.stderr
        return name

    def link(self, first: str, second: str, addresses: tuple[str, str]) -> None:
        """A veth pair between two namespaces, with these addresses (CIDR)."""
        a, b = f"rhv{secrets.token_hex(3)}", f"rhv{secrets.token_hex(3)}"
        made = ip(
            "link", "add", a, "netns", first, "type", "veth", "peer", "name", b, "netns", second
        )
        assert made.returncode == 0, made.stderr
        for name, device, address in ((first, a, addresses[0]), (second, b, addresses[1])):
            for command in (("addr", "add", address, "dev", device), ("link", "set", device, "up")):
                done = ip("-n", name, *command)
                assert done.returncode == 0, done.stderr

    def inside(self, namespace: str, *argv: str, hide: tuple[Path, ...] = ()) -> list[str]:
        """The command, run in the namespace with a /tmp/.X11-unix of its own, and the
        `hide` folders covered by empty ones (each made first where it is missing).

        Why the X11 folder: X servers in different network namespaces do not see each
        other's abstract sockets, so one starting here would take a display number in use
        outside and unlink that server's socket file — breaking the other's display."""
        covered = (Path("/tmp/.X11-unix"), *hide)
        # A fresh machine's /tmp has no .X11-unix until an X server makes one: a mount point
        # is made first (as X makes it, 1777), else the mount fails on an empty /tmp.
        mounts = " && ".join(
            f"mkdir -p -m 1777 {path} && mount -t tmpfs -o mode=1777 none {path}"
            for path in covered
        )
        return [
            *("ip", "netns", "exec", namespace),
            *("unshare", "--mount", "--propagation", "private"),
            *("sh", "-c", f'{mounts} && exec "$@"', "sh", *argv),
        ]

    def marked(self) -> dict[int, str]:
        """This test's processes still running: pid → command line."""
        found = {}
        wanted = f"{MARK}={self.mark}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                    if not _zombie(int(entry.name)):
                        found[int(entry.name)] = cmdline.strip()
            except OSError:
                continue
        return found

    def wait_until_nothing_runs(self, timeout: float = 20.0) -> dict[int, str]:
        """What of this test still runs after `timeout` ({} when nothing)."""
        deadline = time.monotonic() + timeout
        while (left := self.marked()) and time.monotonic() < deadline:
            time.sleep(0.2)
        return left

    def close(self) -> None:
        for pid in self.marked():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for name in self.namespaces:
            ip("netns", "del", name)
        shutil.rmtree(self.ray_tmp, ignore_errors=True)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


@contextlib.contextmanager
def lab() -> Iterator[Lab]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2's `ip`")
    made = Lab()
    try:
        yield made
    finally:
        made.close()


def roundhouse(*args: str) -> list[str]:
    return [str(BIN / "python"), "-m", "roundhouse", *args]


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def slow_suite(folder: Path, spec: dict[str, tuple[str, float]]) -> Path:
    """A suite of tasks that each sleep, then make a file the checks look for:
    id → (agent, seconds). The sleeping command names the task, to be found by it."""
    folder.mkdir(parents=True)
    for task, (agent, seconds) in spec.items():
        (folder / f"{task}.yaml").write_text(
            f"id: {task}\nagent: {agent}\nrequest: wait, then make done.txt\n"
            "checks: {file_exists: '{workdir}/done.txt'}\n"
        )
        command = f"sleep {seconds}; touch {{workdir}}/done.txt # rh-sleeper-{task}"
        write_replay(
            folder / f"{task}.answers.json",
            [shell_answer("CONTINUE", command), shell_answer("FINISH", result="done")],
        )
    return folder
