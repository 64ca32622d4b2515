"""The person at the desktop: who may act on it now, asked before every action.

A person's desktop is theirs: when input that roundhouse did not send arrives (the display
server's PersonWatch sees it: display/base.py), the desk is theirs until they hand it back,
and no action runs meanwhile: each is refused, not run, with a result that says so
(devices/base.py TAKEN_OVER), so nothing is typed into a window the person is using. They
hand it back through the `hand_back` tool (the CLI and an MCP host call it for them), or,
where the settings give an idle time, by leaving it alone that long: the next action then
goes on. A screen that takes no input from us (locked) refuses every action too, naming
why (BLOCKED): the round ends there, in FAIL.

    desk = Desk(display.watch, settings.desktop.hand_back_after)
    desk.before_action()      # raises TakenOver or Blocked
    ...act...
    desk.after_action()       # what came until now was ours
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.base import BLOCKED, HAND_BACK, TAKEN_OVER, NotRun, Tool, make_tool
from roundhouse.devices.linux.display.base import PersonWatch


class TakenOver(NotRun):
    """The person took the desktop over: the action was not run."""


class Blocked(NotRun):
    """The desktop takes no input from us (a locked screen): the action was not run."""


@dataclass
class Takeover:
    """The desk is the person's: since when, why we think so, and when we last saw them."""

    reason: str
    since: float
    last_seen: float


class Desk:
    """Whose the desktop is, asked before each action and told after it. Thread-safe: the
    tools run the watch's calls in threads."""

    def __init__(self, watch: PersonWatch, hand_back_after: float | None = None) -> None:
        self.watch = watch
        self.hand_back_after = hand_back_after  # seconds of the person's quiet; None: never
        self.taken: Takeover | None = None
        self._lock = threading.Lock()

    def before_action(self) -> None:
        """Refuse the action (Blocked, TakenOver) unless the desktop is ours to act on."""
        with self._lock:
            blocked = self.watch.blocked()
            if blocked is not None:
                raise Blocked(f"{BLOCKED}{blocked}; nothing was typed or clicked")
            now = time.monotonic()
            seen = self.watch.foreign()
            if seen is not None:
                if self.taken is None:
                    self.taken = Takeover(seen, now, now)
                self.taken.last_seen = now
            taken = self.taken
            if taken is None:
                return
            quiet = now - taken.last_seen
            if self.hand_back_after is not None and quiet >= self.hand_back_after:
                self.taken = None  # left alone long enough: handed back
                return
        raise TakenOver(takeover_message(taken.reason, self.hand_back_after))

    def after_action(self) -> None:
        with self._lock:
            self.watch.ours()

    def hand_back(self) -> dict[str, Any]:
        """The person hands the desktop back: what they did meanwhile is theirs, not news."""
        with self._lock:
            taken, self.taken = self.taken, None
            self.watch.ours()
        if taken is None:
            return {"handed_back": False, "note": "the desktop was not taken over"}
        return {
            "handed_back": True,
            "taken_over_for_s": round(time.monotonic() - taken.since, 1),
            "reason": taken.reason,
        }


def takeover_message(reason: str, hand_back_after: float | None) -> str:
    """What a refused action's result says: the person, what was seen, how to go on."""
    idle = (
        f", or leave the desktop alone for {hand_back_after:g} s"
        if hand_back_after is not None
        else ""
    )
    return (
        f"{TAKEN_OVER} ({reason}); nothing was done. Call {HAND_BACK} once they hand the "
        f"desktop back{idle}."
    )


def hand_back_tool(desk: Desk) -> Tool:
    """The `hand_back` tool: what the person (or their MCP host, for them) calls to give the
    desktop back to the agent."""

    def hand_back() -> dict[str, Any]:
        """The person hands the desktop back: actions run again (call it only for them)."""
        return desk.hand_back()

    return make_tool(hand_back, "action", name=HAND_BACK)
