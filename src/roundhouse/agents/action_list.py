"""Several actions in one answer: when the list goes on, and what is said of the actions it
did not run. Pure logic: the step (agents/base.py) runs the list and asks these.

An answer's actions run in order. Before each one after the first, its target is checked
against the controls there now (the AppAgent's `recheck`: the same control, by the same
name and role). After each one, the list goes on only when the action did what it was
meant to, as far as the desktop shows: it ran and succeeded, its effect was seen, and no
window came or went (a dialog that opens is a new screen, which the model must see before
it acts in it). A shell command that exits with an error stops it too. The model is then
asked again, and its next prompt says which actions ran and which did not, and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roundhouse.core.commands import Result, ResultStatus
from roundhouse.devices.contract import Control, ToolName

# Tools that are about windows: what the model sees after one of them is another screen.
WINDOW_TOOLS = frozenset(
    {ToolName.LAUNCH_APPLICATION, ToolName.SELECT_WINDOW, ToolName.CLOSE_WINDOW}
)
# Acts on nothing, or shows nothing yet (the pointer moved, a button or keys held down:
# what they do shows at the release, the next actions'): no effect is no reason to stop.
_NO_EFFECT_MEANT = frozenset(
    {ToolName.WAIT, ToolName.MOVE_POINTER, ToolName.MOUSE_DOWN, ToolName.HOLD_KEYS}
)


@dataclass(frozen=True)
class Acted:
    """What ran of an answer's actions: their results in order, and why the rest did not
    run (None: every action ran, or there was none to run)."""

    results: tuple[Result, ...] = ()
    stopped: str | None = None

    @property
    def last(self) -> Result | None:
        return self.results[-1] if self.results else None


def stop_reason(function: str, result: Result, *, joined: bool = False) -> str | None:
    """Why the actions after this one must not run without the model looking first; None
    when the list may go on. joined: the next action is the rest of the same action of the
    model's, which a lack of an effect of this part's own does not stop."""
    if result.status is ResultStatus.SKIPPED:
        return f"it was not run ({result.error or 'declined'})"
    if not result.ok:
        return f"it failed ({result.error or 'no reason given'})"
    if function in WINDOW_TOOLS:
        return "it changes which window is in front"
    output: Any = result.result
    if not isinstance(output, dict):
        return None
    if output.get("window_change"):
        return f"a window {output['window_change']}"
    if output.get("effect") == "not seen" and function not in _NO_EFFECT_MEANT and not joined:
        return "its effect was not seen"
    code = output.get("exit_code")
    if isinstance(code, int) and code != 0:
        return f"it exited with code {code}"
    return None


def stopped_after(number: int, function: str, reason: str) -> str:
    """What the actions not run say, when action `number` (1-based) stopped the list."""
    return f"the list stopped after action {number} ({function}): {reason}"


def stopped_before(number: int, reason: str) -> str:
    """What the actions not run say, when action `number`'s target was not there."""
    return f"the list stopped before action {number}: {reason}"


def target_changed(named: Control, now: Sequence[Control]) -> str | None:
    """Why `named`, the control an action names as the model saw it, is not there to act on
    in `now` (the controls read again before the action): gone, or another control by now
    (its name or role changed). None: it is there as it was."""
    found = next((control for control in now if control.id == named.id), None)
    seen = f"control {named.label} {named.name!r} ({named.role})"
    if found is None:
        return f"{seen} is gone"
    if (found.role, found.name) != (named.role, named.name):
        return f"{seen} is now {found.name!r} ({found.role})"
    return None
