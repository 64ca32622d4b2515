"""A window sway lists before it has laid it out is not yet viewable (wlroots/sway.py)."""

from __future__ import annotations

from typing import Any

from roundhouse.devices.linux.display.wlroots.sway import laid_out, window_info


def gedit(border: str, width: int, y: int) -> dict[str, Any]:
    """gedit's container as sway 1.7 gave it, just listed and once laid out."""
    return {
        "id": 7,
        "pid": 17703,
        "app_id": "gedit",
        "name": "Untitled Document 1 - gedit",
        "border": border,
        "current_border_width": width,
        "rect": {"x": 1280, "y": y, "width": 1280, "height": 800 - y},
        "window_rect": {"x": 2, "y": 0, "width": 1276, "height": 773},
    }


def test_a_window_just_listed_is_not_laid_out_and_sits_higher_than_it_will() -> None:
    early, placed = gedit("none", 0, 0), gedit("normal", 2, 25)
    assert not laid_out(early)
    assert laid_out(placed)
    assert window_info(placed).rect.top - window_info(early).rect.top == 25


def test_a_decoration_chosen_is_laid_out() -> None:
    for border, width in (("none", 2), ("pixel", 0), ("csd", 0), ("normal", 2)):
        assert laid_out(gedit(border, width, 0)), border
