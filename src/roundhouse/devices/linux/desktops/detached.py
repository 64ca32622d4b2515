"""Started desktops that outlive the process that started them (`roundhouse desktop start`):
what stops one later, kept in a state file per desktop, where `desktop stop` and `desktop
status` find it from another process."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from roundhouse.devices.linux.desktops import janitor
from roundhouse.devices.linux.system.procfs import ProcessRecord, alive

log = logging.getLogger(__name__)


@dataclass
class DesktopState:
    """What `roundhouse desktop stop/status` needs from another process."""

    display: str
    width: int
    height: int
    bus_address: str | None  # None only while a start is cut short
    a11y_address: str | None
    runtime_dir: str
    processes: list[ProcessRecord]
    tag: str | None = None  # None in the state files of desktops started before tags
    session: str = "x11"  # its session kind: its display backend's (display/backends.py)
    wayland_display: str | None = None  # the socket's name in runtime_dir
    server: str = "Xvfb"  # the process that is the display server: alive while it runs
    extra_env: dict[str, str] = field(default_factory=dict)  # what the compositor added

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> DesktopState:
        data = json.loads(text)
        data["processes"] = [ProcessRecord(**item) for item in data["processes"]]
        return cls(**data)


def state_dir() -> Path:
    """Where started desktops are listed: the user's runtime folder, whichever session
    this runs in (a shell in a Wayland desktop of ours has that desktop's runtime folder,
    and must still find the others), else ~/.cache."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).name.startswith(janitor.DESKTOP_RUNTIME_PREFIX):
        runtime = f"/run/user/{os.getuid()}"
    base = Path(runtime) if runtime and os.path.isdir(runtime) else Path.home() / ".cache"
    return base / "roundhouse" / "desktops"


def detached_states() -> list[tuple[Path, DesktopState]]:
    found = []
    for path in sorted(state_dir().glob("*.json")):
        try:
            found.append((path, DesktopState.from_json(path.read_text())))
        except (OSError, ValueError, TypeError, KeyError) as error:
            log.warning("ignoring unreadable desktop state %s: %s", path, error)
    return found


def state_alive(state: DesktopState) -> bool:
    return any(alive(record) for record in state.processes if record.name == state.server)


def unused_name(kind: str) -> str:
    """A name for a Wayland desktop, "sway-1", not taken by a started one's state file."""
    taken = {path.stem for path in state_dir().glob("*.json")}
    number = 1
    while f"{kind}-{number}" in taken:
        number += 1
    return f"{kind}-{number}"
