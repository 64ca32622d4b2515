"""The facts of this machine that a recorded answer must not carry: its names, its kernel
release, its disk and memory sizes, today's date, spelled as people and tools spell them.

`--record` holds what an answer quotes of a step's output as a reference (references.py);
these are what it looks for afterwards, to refuse or redact what could not be held.
"""

from __future__ import annotations

import datetime
import getpass
import math
import os
import platform
import re
import shutil
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from roundhouse.models.references import alone


@dataclass(frozen=True)
class MachineFact:
    what: str  # "the hostname", "the free disk space of /"
    text: str  # as it would be spelled in an answer
    name: bool = False  # one of the machine's names: held wherever an output shows it
    # The user's own name or folder stands in paths the user gives: a leak only where paths
    # are held by placeholders anyway (a suite's recorded answers: batch looks for them).
    personal: bool = False


def this_machine() -> tuple[MachineFact, ...]:
    facts: list[MachineFact] = []
    hostname = socket.gethostname()
    if hostname and hostname != "localhost":
        facts.append(MachineFact("the hostname", hostname, name=True))
    facts.append(MachineFact("the kernel release", platform.release(), name=True))
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (in a container): nothing to quote
        user = ""
    if user:
        facts.append(MachineFact("the user name", user, name=True, personal=True))
    home = os.path.expanduser("~")
    if home not in ("", "/", "~"):
        facts.append(MachineFact("the home folder", home, personal=True))
    disk = shutil.disk_usage("/")
    for what, size in (("size", disk.total), ("free space", disk.free), ("used space", disk.used)):
        facts += [MachineFact(f"the disk {what} of /", text) for text in size_spellings(size)]
    memory = _meminfo()
    for key, what in (
        ("MemTotal", "memory size"),
        ("MemAvailable", "available memory"),
        ("MemFree", "free memory"),
    ):
        if key in memory:
            facts += [MachineFact(f"the {what}", text) for text in size_spellings(memory[key])]
    facts.append(MachineFact("today's date", datetime.date.today().isoformat()))
    return tuple(facts)


def size_spellings(size: int) -> list[str]:
    """How a size in bytes is spelled by people and tools: "77.0 GiB", "77G" (df -h),
    "77Gi" (free -h), rounded either way."""
    spellings: set[str] = set()
    for power, unit in enumerate("KMGT", 1):
        value = size / 1024**power
        if not 1 <= value < 1024:
            continue
        numbers = {f"{value:.1f}", f"{value:.2f}"}
        if value < 10:  # one decimal, as df -h and free -h print small values
            numbers |= {f"{math.floor(value * 10) / 10:.1f}", f"{math.ceil(value * 10) / 10:.1f}"}
        else:
            numbers |= {str(math.floor(value)), str(math.ceil(value)), str(round(value))}
        for number in numbers:
            spellings |= {f"{number} {unit}iB", f"{number}{unit}iB", f"{number}{unit}i"}
            spellings.add(f"{number}{unit}")
    return sorted(spellings)


def quoted_facts(text: str, facts: Iterable[MachineFact]) -> list[MachineFact]:
    """The facts that `text` quotes, each where it stands alone (not inside a longer word),
    the most specific (longest) first: "/home/ada" before "ada"."""
    found = [fact for fact in facts if fact.text and re.search(alone(fact.text), text)]
    return sorted(found, key=lambda fact: len(fact.text), reverse=True)


def redact(text: str, facts: Iterable[MachineFact]) -> str:
    """`text` with each fact it quotes replaced by what it is: "<the hostname>"."""
    for fact in sorted(facts, key=lambda f: len(f.text), reverse=True):
        if fact.text:
            text = re.sub(alone(fact.text), f"<{fact.what}>", text)
    return text


def _meminfo() -> dict[str, int]:
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return {}
    sizes = {}
    for line in lines:
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            sizes[key] = int(fields[0]) * 1024
    return sizes
