"""Whether a left click goes to the pointer instead of the control's accessibility action.

The action works wherever the control is (covered, off screen), and is the default. Two
toolkits make it slow: Qt's action (animateClick) holds the button pressed 100 ms before it
clicks, GTK 4's (GtkButton activate) 250 ms, drawing and announcing nothing meanwhile,
and the settle must wait that out. Their pointer click is done at once: measured on X11,
a Qt button 153 ms by action against 69 by the pointer, GNOME Calculator's keypad (GTK 4)
273 against 248 (its hover animation is most of the rest; docs/bench.md). GTK 3's action
is as fast as a click (gedit's Save, 74 ms), so it keeps its action.

The pointer goes only where a click there is sure to land on the control: its window is
the active one, the control lies wholly inside the window and on the screen, and nothing
is known to lie over it. What lies over a window is what the session says: X11 gives its
stacking order, windows and the menus and tooltips that are no managed windows alike
(Windows.above); a session that gives no order counts every other window whose rectangle
meets the control as over it. Where the session does not say where its windows are (a
person's GNOME as shipped), the pointer is not used at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from roundhouse.devices.contract import Control, Rect, WindowInfo

# Toolkit names (AT-SPI's Application.ToolkitName, lowered) whose click action holds a press.
PRESS_HOLDING = {"qt", "gtk 4"}


def holds_press(toolkit: str, version: str) -> bool:
    """Whether the toolkit's click action holds the button pressed before it clicks:
    "Qt" (Qt 5 and 6); "GTK" at version 4 (GTK 3's bridge also says "gtk", version 3)."""
    name = toolkit.lower()
    if name == "gtk":
        name = f"gtk {version.split('.', 1)[0]}"
    return name in PRESS_HOLDING


def pointer_refusal(
    control: Control,
    window: WindowInfo,
    windows: Sequence[WindowInfo],
    screen: tuple[int, int],
    above: Sequence[Rect] | None,
) -> str | None:
    """Why the pointer may not click `control` of `window` in place of its action, or None
    where it may. `windows` are those listed now; `above` what the session says lies over
    `window` (None: it does not say, and every other window may)."""
    if not window.active:
        return "its window is not the active one"
    if control.rect.area == 0:
        return "it has no area on the screen"
    if not window.rect.contains(control.rect):
        return "it is not wholly inside its window"
    width, height = screen
    if not Rect(0, 0, width, height).contains(control.rect):
        return "it is not wholly on the screen"
    if above is None:
        above = [other.rect for other in windows if other.xid != window.xid]
    if any(rect.overlap(control.rect) for rect in above):
        return "something may lie over it"
    return None


def under(controls: Sequence[Control], x: int, y: int) -> Control | None:
    """The control at (x, y): the smallest whose rectangle holds the point (a button over
    the toolbar that holds it), None where none does."""
    holding = [
        c for c in controls if c.rect.left <= x < c.rect.right and c.rect.top <= y < c.rect.bottom
    ]
    return min(holding, key=lambda control: control.rect.area, default=None)
