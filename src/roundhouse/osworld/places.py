"""Where an OSWorld task's words point on a roundhouse desktop (pure).

OSWorld's VM is one Ubuntu user, `user`, whose home is /home/user, with the password given
as {CLIENT_PASSWORD}; its screen is SCREEN_WIDTH x SCREEN_HEIGHT. Tasks hard-code that home
in paths and in shell commands, and fill the placeholders only in `execute` commands.

A roundhouse desktop gives each task a fresh home of its own (tasks run side by side), so
/home/user at the start of a path, or standing as a path inside a command, is read as that
home; /run/user/1000, the VM user's runtime folder, as the desktop's (its session bus lives
there, as the VM's does). A file fetched from the dataset that names /home/user inside itself
is not rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OSWORLD_HOME = "/home/user"
_END = r"(?=$|[/\s'\";:|&)<>`,\]}])"
# /home/user as a whole path element: not /home/username, not /home/user2.
_HOME = re.compile(r"(?<![\w./-])/home/user" + _END)
_RUNTIME = re.compile(r"(?<![\w./-])/run/user/1000" + _END)


@dataclass(frozen=True)
class Places:
    """The desktop's answers to OSWorld's placeholders."""

    home: str
    width: int
    height: int
    password: str = "password"
    runtime: str | None = None  # the desktop's XDG_RUNTIME_DIR, for OSWorld's /run/user/1000

    def fill(self, text: str) -> str:
        """The placeholders of an `execute` command, as OSWorld's setup controller fills them."""
        for token, value in (
            ("{CLIENT_PASSWORD}", self.password),
            ("{SCREEN_WIDTH_HALF}", str(self.width // 2)),
            ("{SCREEN_HEIGHT_HALF}", str(self.height // 2)),
            ("{SCREEN_WIDTH}", str(self.width)),
            ("{SCREEN_HEIGHT}", str(self.height)),
        ):
            text = text.replace(token, value)
        return text

    def local(self, text: str) -> str:
        """OSWorld's home, /home/user, read as this desktop's home; its runtime folder
        /run/user/1000 (where `export DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus`
        finds the session bus) as this desktop's."""
        if self.home != OSWORLD_HOME:
            text = _HOME.sub(lambda _: self.home, text)
        if self.runtime is not None:
            text = _RUNTIME.sub(lambda _: str(self.runtime), text)
        return text

    def local_all(self, value: Any) -> Any:
        """`local` on every string of a JSON-like value."""
        if isinstance(value, str):
            return self.local(value)
        if isinstance(value, list):
            return [self.local_all(item) for item in value]
        if isinstance(value, dict):
            return {key: self.local_all(item) for key, item in value.items()}
        return value

    def osworld(self, text: str) -> str:
        """This desktop's home written back as OSWorld's (for what a harness reads back)."""
        if self.home == OSWORLD_HOME:
            return text
        return re.sub(rf"(?<![\w./-]){re.escape(self.home)}(?=$|[/\s'\"])", OSWORLD_HOME, text)
