"""Shell tools: run_shell and get_system_info, plus the policy for destructive commands.

A command runs in its own process group, so a timeout (or a cancelled round) kills it
and everything it started, not only the shell.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import platform
import re
import signal
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from roundhouse.config import Settings, ShellPolicy
from roundhouse.core.user import NonInteractiveUser, UserChannel, refusal
from roundhouse.devices.base import NOT_RUN, NotRun, Tool, make_tool
from roundhouse.devices.contract import ToolName

KILL_GRACE_SECONDS = 1.0


class ShellOutput(BaseModel):
    exit_code: int
    stdout: str
    stderr: str
    truncated: bool = False
    seconds: float = 0.0


class ShellTimeout(RuntimeError):
    pass


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """Keep the head and the tail of long output, with a marker saying what was cut."""
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}", True


async def run_command(
    command: str,
    cwd: Path | None,
    timeout: float,
    output_limit: int,
    env: Mapping[str, str] | None = None,
) -> ShellOutput:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "/bin/bash",
        "-c",
        command,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group, killed whole on timeout
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        await _kill_group(process)
        raise ShellTimeout(
            f"command timed out after {timeout:g} s; its process group was killed"
        ) from None
    finally:
        if process.returncode is None:  # cancelled (Ctrl-C) or timed out
            await _kill_group(process)
    out, out_cut = truncate(stdout.decode(errors="replace"), output_limit)
    err, err_cut = truncate(stderr.decode(errors="replace"), output_limit)
    return ShellOutput(
        exit_code=process.returncode if process.returncode is not None else -1,
        stdout=out,
        stderr=err,
        truncated=out_cut or err_cut,
        seconds=round(time.monotonic() - started, 3),
    )


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(process.wait(), KILL_GRACE_SECONDS)
            return
        except TimeoutError:
            continue


@dataclass(frozen=True)
class SystemInfo:
    os: str
    kernel: str
    hostname: str
    user: str
    cpus: int
    memory_total_mb: int
    python: str
    cwd: str


def system_info(cwd: Path) -> SystemInfo:
    memory_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kb = int(line.split()[1])
    except OSError:
        pass  # not Linux /proc; memory stays 0, which the tool reports as-is
    return SystemInfo(
        os=_os_name(),
        kernel=platform.release(),
        hostname=socket.gethostname(),
        user=getpass.getuser(),
        cpus=os.cpu_count() or 0,
        memory_total_mb=memory_kb // 1024,
        python=platform.python_version(),
        cwd=str(cwd),
    )


def _os_name() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", platform.system())
    except OSError:
        return platform.system()


class ShellTools:
    """The shell tools, bound to the settings they run under and to the person who is asked
    before a destructive command runs: the policy is checked here, where the command runs,
    whoever sent it (an agent of this process, or an MCP client of `serve`)."""

    def __init__(self, settings: Settings, user: UserChannel | None = None) -> None:
        self.settings = settings
        self.user = user or NonInteractiveUser(settings.assume_yes)
        self.workdir = (settings.workdir or Path.cwd()).resolve()

    async def run_shell(
        self, command: str, cwd: str | None = None, timeout: float | None = None
    ) -> ShellOutput:
        """Run a bash command and return its exit code, stdout and stderr.

        cwd defaults to the working folder; timeout (seconds) to the configured one.
        Long output is cut in the middle with a visible marker.
        """
        if timeout is not None and not timeout >= 0:  # NaN too
            raise ValueError(f"timeout must be a number of seconds, 0 or more, not {timeout}")
        decision = judge_command(command, self.settings.shell_policy)
        if not decision.allowed:
            why = f"refused by the shell policy 'deny': the command {decision.reason}"
            raise NotRun(f"{NOT_RUN}{why}")
        if decision.needs_confirmation:
            refused = await refusal(
                self.user, f"run_shell {command!r}", f"the command {decision.reason}"
            )
            if refused is not None:
                raise NotRun(refused)
        folder = self.workdir / cwd if cwd else self.workdir
        if not folder.is_dir():
            raise NotADirectoryError(f"cwd {folder} is not a folder")
        limit = min(timeout or self.settings.shell_timeout, self.settings.shell_timeout)
        return await run_command(command, folder, limit, self.settings.shell_output_limit)

    def get_system_info(self) -> SystemInfo:
        """Describe this machine: OS, kernel, hostname, user, CPUs, memory, working folder."""
        return system_info(self.workdir)

    def tools(self) -> list[Tool]:
        # The registry's own timeout is a backstop past the command's, so the shell's
        # timeout (which kills the process group) fires first.
        backstop = self.settings.shell_timeout + 2 * KILL_GRACE_SECONDS + 1
        return [
            make_tool(self.run_shell, "action", name=ToolName.RUN_SHELL, timeout=backstop),
            make_tool(
                self.get_system_info,
                "data_collection",
                name=ToolName.GET_SYSTEM_INFO,
                timeout=10,
            ),
        ]


# What a careful person would want to be asked about before it runs.
_DESTRUCTIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), reason)
    for pattern, reason in (
        (r"\brm\s+(-[a-zA-Z]*[rRf][a-zA-Z]*\s+|--recursive\s|--force\s)", "removes files"),
        (r"\bmkfs(\.\w+)?\b", "formats a file system"),
        (r"\bdd\b[^|;&]*\bof=", "writes raw data to a device or file"),
        (r"\b(shutdown|reboot|poweroff|halt)\b", "stops the machine"),
        (r"\bsystemctl\s+(poweroff|reboot|halt)\b", "stops the machine"),
        (
            r"\bch(mod|own|grp)\s+(-[a-zA-Z]*R|--recursive)\b[^;&|]*\s"
            r"/(etc|usr|bin|sbin|boot|lib\w*|var|home|root|opt|srv|sys|proc|dev)?(/|\s|$)",
            "changes the owner or mode of a system tree",
        ),
        (r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", "runs a downloaded script"),
        (r">\s*/dev/(sd|nvme|vd|hd)\w*", "overwrites a disk"),
        (r"\bfind\b[^;&|]*\s-delete\b", "removes files"),
        (r":\(\)\s*\{\s*:\|:&\s*\};:", "fork bomb"),
    )
)


def destructive_reason(command: str) -> str | None:
    """Why this command needs a yes before it runs, or None when it does not."""
    for pattern, reason in _DESTRUCTIVE:
        if pattern.search(command):
            return reason
    return None


@dataclass(frozen=True)
class PolicyDecision:
    allowed: bool
    needs_confirmation: bool
    reason: str | None


def judge_command(command: str, policy: ShellPolicy) -> PolicyDecision:
    reason = destructive_reason(command)
    if reason is None or policy is ShellPolicy.ALLOW:
        return PolicyDecision(allowed=True, needs_confirmation=False, reason=reason)
    if policy is ShellPolicy.DENY:
        return PolicyDecision(allowed=False, needs_confirmation=False, reason=reason)
    return PolicyDecision(allowed=True, needs_confirmation=True, reason=reason)
