"""Taking control from the watch page: the person's clicks and keys, "hand back" and "stop".

The page's input goes to the desktop through a display connection of its own
(`PersonInput`), not the agent's: to the display server it is another client's input, so
the desk's PersonWatch sees it as the person's, exactly as a person's mouse on their own
desktop (devices/linux/person.py), and the run pauses before its next action through the
same pause (engine/person.py AtTheDesk). "Hand back" ends that pause (`PageHandBack`, the
run's HandBack: the page's button, or what PersonHandBack listens to, a key or
`roundhouse resume`); "stop" cancels the run's task, which the round records as cancelled
(Ctrl-C's way), so `roundhouse resume` carries it on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from roundhouse.devices.linux.display.base import Button, Input
from roundhouse.engine.person import PersonHandBack


class PageClick(BaseModel):
    type: Literal["click"]
    x: int
    y: int
    button: Button = "left"
    count: int = 1


class PageScroll(BaseModel):
    type: Literal["scroll"]
    x: int
    y: int
    dy: int = 0
    dx: int = 0


class PageKeys(BaseModel):
    type: Literal["keys"]
    keys: str  # press_keys' names: "Return", "ctrl+s"


class PageText(BaseModel):
    type: Literal["text"]
    text: str


PageInputMessage = PageClick | PageScroll | PageKeys | PageText
_KINDS: dict[str, type[BaseModel]] = {
    "click": PageClick,
    "scroll": PageScroll,
    "keys": PageKeys,
    "text": PageText,
}


def parse_input(data: Any) -> PageInputMessage | None:
    """A message of the page's, or None for one it cannot have sent (ignored)."""
    kind = _KINDS.get(data.get("type", "")) if isinstance(data, dict) else None
    if kind is None:
        return None
    try:
        parsed = kind.model_validate(data)
    except ValidationError:
        return None
    assert isinstance(parsed, PageClick | PageScroll | PageKeys | PageText)
    return parsed


class PersonInput:
    """The person's input from the page, sent on the watch's own display connection."""

    def __init__(self, input: Input, size: tuple[int, int]) -> None:
        self.input = input
        self.size = size
        self.sent = 0
        self._lock = threading.Lock()  # one input at a time: the page sends as it likes

    async def send(self, message: PageInputMessage) -> None:
        await asyncio.to_thread(self._send, message)

    def _send(self, message: PageInputMessage) -> None:
        with self._lock:
            if isinstance(message, PageClick):
                x, y = self._inside(message.x, message.y)
                self.input.click(x, y, message.button, max(1, min(message.count, 3)))
            elif isinstance(message, PageScroll):
                x, y = self._inside(message.x, message.y)
                self.input.scroll(x, y, message.dx, message.dy)
            elif isinstance(message, PageKeys):
                self.input.press_keys(message.keys)
            else:
                self.input.type_text(message.text)
            self.sent += 1

    def _inside(self, x: int, y: int) -> tuple[int, int]:
        width, height = self.size
        return max(0, min(x, width - 1)), max(0, min(y, height - 1))


class PageHandBack(PersonHandBack):
    """The run's HandBack (engine/person.py) with the page's "hand back" button besides a
    key and `roundhouse resume`."""

    def __init__(self, keys: bool | None = None) -> None:
        super().__init__(keys)
        self.waiting = False
        self._handed: asyncio.Future[str | None] | None = None

    def hand(self) -> bool:
        """The page's button: True when the run was waiting for it."""
        if self._handed is None or self._handed.done():
            return False
        self._handed.set_result("the watch page")
        return True

    async def wait(self, reason: str, timeout: float | None) -> str | None:
        loop = asyncio.get_running_loop()
        handed: asyncio.Future[str | None] = loop.create_future()
        self._handed = handed
        others = asyncio.ensure_future(super().wait(reason, timeout))
        self.waiting = True
        try:
            done, _ = await asyncio.wait({handed, others}, return_when=asyncio.FIRST_COMPLETED)
            return handed.result() if handed in done else others.result()
        finally:
            self.waiting = False
            others.cancel()
            handed.cancel()
            self._handed = None


class RunControl:
    """What the page may do to a run in this process: hand back, and stop it."""

    def __init__(self, hand_back: PageHandBack) -> None:
        self.hand_back = hand_back
        self._stop: Callable[[], object] | None = None
        self.stopped = False

    def attach(self, stop: Callable[[], object]) -> None:
        self._stop = stop

    def stop(self) -> bool:
        if self._stop is None or self.stopped:
            return False
        self.stopped = True
        self._stop()
        return True
