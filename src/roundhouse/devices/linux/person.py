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
    input = SentAsOurs(display.input, desk)
    input.click(x, y)         # then desk.after_action(): what came until now was ours

"Ours" ends as soon as our input has been handled (each Input call returns after the
display server handled it: an XTest request and its sync, a Wayland roundtrip, Mutter's
word), not when the action's settle and look end: a person who moves the mouse while the
screen settles has moved it, and the next action is refused.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.base import BLOCKED, HAND_BACK, TAKEN_OVER, NotRun, Tool, make_tool
from roundhouse.devices.linux.display.base import Button, Input, PersonWatch


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


class SentAsOurs:
    """The display's Input (display.base.Input), each call followed by the desk's
    after_action: the input that came until it returned was ours, any after it the
    person's."""

    def __init__(self, input: Input, desk: Desk) -> None:
        self._input = input
        self._desk = desk

    def move(self, x: int, y: int) -> None:
        try:
            self._input.move(x, y)
        finally:
            self._desk.after_action()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        try:
            self._input.click(x, y, button, count)
        finally:
            self._desk.after_action()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        try:
            self._input.scroll(x, y, dx, dy)
        finally:
            self._desk.after_action()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        try:
            self._input.drag(start, end, button)
        finally:
            self._desk.after_action()

    def type_text(self, text: str) -> None:
        try:
            self._input.type_text(text)
        finally:
            self._desk.after_action()

    def press_keys(self, keys: str) -> None:
        try:
            self._input.press_keys(keys)
        finally:
            self._desk.after_action()

    def button_down(self, button: Button = "left") -> None:
        try:
            self._input.button_down(button)
        finally:
            self._desk.after_action()

    def button_up(self, button: Button = "left") -> None:
        try:
            self._input.button_up(button)
        finally:
            self._desk.after_action()

    def position(self) -> tuple[int, int] | None:
        return self._input.position()  # sends nothing

    def keys_down(self, keys: str) -> None:
        try:
            self._input.keys_down(keys)
        finally:
            self._desk.after_action()

    def keys_up(self, keys: str) -> None:
        try:
            self._input.keys_up(keys)
        finally:
            self._desk.after_action()

    def close(self) -> None:
        self._input.close()


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
