"""The process table, read from /proc: what the reaper decides on.

Parsing is pure (a /proc/PID/stat line, an environ block in, values out); `snapshot` is
the one reader. A process's start time (clock ticks after boot) travels with its pid
everywhere, so that a pid the kernel has since handed to another process is never taken
for the one we saw.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessRecord:
    """A process we own. `start` (clock ticks after boot) guards against a recycled pid."""

    name: str
    pid: int
    start: int


@dataclass(frozen=True)
class Stat:
    """The fields of /proc/PID/stat the reaper uses."""

    name: str  # comm, at most 15 characters ("soffice.bin")
    state: str  # R, S, D, T, Z, X, ...
    ppid: int
    sid: int
    start: int


@dataclass(frozen=True, kw_only=True)
class Proc:
    """One row of the process table."""

    pid: int
    ppid: int
    sid: int
    start: int
    name: str
    # The value of the tag variable in the process's environment. None when it is not
    # set, or the environment cannot be read (another user's process), or the process
    # wrote over it: Chromium's setproctitle reuses the environment's memory for its
    # command line, so its processes read as untagged even when they inherited a tag.
    tag: str | None = None

    @property
    def record(self) -> ProcessRecord:
        return ProcessRecord(self.name, self.pid, self.start)


def parse_stat(text: str) -> Stat | None:
    """The fields of a /proc/PID/stat line, or None when it does not parse.

    The name (field 2) is in parentheses and may itself hold spaces and parentheses, so
    the fields after it are counted from the last ')'.
    """
    open_at, close_at = text.find("("), text.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    fields = text[close_at + 2 :].split()
    try:
        # After the name: state(3) ppid(4) pgrp(5) session(6) ... starttime(22).
        return Stat(
            name=text[open_at + 1 : close_at],
            state=fields[0],
            ppid=int(fields[1]),
            sid=int(fields[3]),
            start=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def environ_value(environ: bytes, name: str) -> str | None:
    """The value of `name` in a /proc/PID/environ block (NUL-separated NAME=value)."""
    prefix = f"{name}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def read_stat(pid: int) -> Stat | None:
    try:
        return parse_stat((PROC / str(pid) / "stat").read_text())
    except OSError:  # gone
        return None


def start_time(pid: int) -> int | None:
    """The start time of a live (non-zombie) process, or None."""
    stat = read_stat(pid)
    if stat is None or stat.state in ("Z", "X"):  # a zombie nobody reaped yet
        return None
    return stat.start


def alive(record: ProcessRecord) -> bool:
    """Whether this very process still runs (not a zombie, not a recycled pid)."""
    return start_time(record.pid) == record.start


def snapshot(tag_name: str) -> dict[int, Proc]:
    """Every live process, by pid, with the value of `tag_name` in its environment.

    Zombies are left out: they hold nothing, have no children, and cannot be signalled
    away; their parent reaps them.
    """
    table: dict[int, Proc] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        stat = read_stat(pid)
        if stat is None or stat.state in ("Z", "X"):
            continue
        try:
            tag = environ_value((entry / "environ").read_bytes(), tag_name)
        except OSError:  # gone since, or another user's: its tag cannot be read
            tag = None
        table[pid] = Proc(
            pid=pid, ppid=stat.ppid, sid=stat.sid, start=stat.start, name=stat.name, tag=tag
        )
    return table


def process_age(pid: int) -> float | None:
    """Seconds since the process started; None when it is not running."""
    start = start_time(pid)
    if start is None:
        return None
    uptime = float((PROC / "uptime").read_text().split()[0])
    return uptime - start / os.sysconf("SC_CLK_TCK")
