"""Gemini's predefined functions as roundhouse's tool calls (models/gemini/tools.py), and its
0-999 points mapped back within one logical pixel on two monitors, on a monitor at scale
1.5 and on a window's own screenshot. Pure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roundhouse.devices.contract import Rect
from roundhouse.models.computer.screen import screen_map_for
from roundhouse.models.gemini.tools import Unsupported, as_tool_calls, read_answer

DESKTOP = screen_map_for(Rect(0, 0, 1920, 1080), (1920, 1080), "gemini", grid=1000)


def test_the_screenshot_fits_1440_by_900() -> None:
    assert DESKTOP.sent == (1440, 810)
    assert screen_map_for(Rect(0, 0, 1280, 800), (1280, 800), "gemini", grid=1000).sent == (
        1280,
        800,
    )


def test_type_text_at_clicks_clears_types_and_presses_enter_as_asked() -> None:
    calls = as_tool_calls("type_text_at", {"x": 500, "y": 500, "text": "hi"}, DESKTOP)
    assert [f for f, _ in calls] == ["click_coordinates", "press_keys", "type_text", "press_keys"]
    assert calls[1][1] == {"keys": "ctrl+a BackSpace"} and calls[3][1] == {"keys": "Return"}
    plain = {"press_enter": False, "clear_before_typing": False}
    calls = as_tool_calls("type_text_at", {"x": 0, "y": 0, "text": "hi", **plain}, DESKTOP)
    assert [f for f, _ in calls] == ["click_coordinates", "type_text"]


def test_keys_scrolls_drags_and_waits() -> None:
    [(_, keys)] = as_tool_calls("key_combination", {"keys": "control+shift+t"}, DESKTOP)
    assert keys == {"keys": "ctrl+shift+t"}
    [(_, keys)] = as_tool_calls("key_combination", {"keys": "enter"}, DESKTOP)
    assert keys == {"keys": "Return"}
    [(_, scroll)] = as_tool_calls("scroll_document", {"direction": "down"}, DESKTOP)
    assert (scroll["x"], scroll["y"], scroll["direction"]) == (960, 540, "down")
    [(_, scroll)] = as_tool_calls("scroll_at", {"x": 0, "y": 0, "direction": "up"}, DESKTOP)
    assert scroll["amount"] == 8  # magnitude 800 by default
    [(function, drag)] = as_tool_calls(
        "drag_and_drop", {"x": 0, "y": 0, "destination_x": 999, "destination_y": 999}, DESKTOP
    )
    assert function == "drag" and (drag["end_x"], drag["end_y"]) == (1919, 1079)
    assert as_tool_calls("wait_5_seconds", {}, DESKTOP) == [("wait", {"seconds": 5.0})]


@pytest.mark.parametrize(
    ("name", "args", "said"),
    [
        ("click_at", {"x": 1000, "y": 1}, "off the 0-999 grid"),
        ("click_at", {"x": "left"}, "numbers"),
        ("navigate", {"url": "https://example.com"}, "not available"),
        ("key_combination", {"keys": ""}, "needs keys"),
    ],
)
def test_what_cannot_be_done_is_said(name: str, args: dict[str, object], said: str) -> None:
    with pytest.raises(Unsupported, match=said):
        as_tool_calls(name, args, DESKTOP)


def test_a_response_becomes_an_answer_and_keeps_its_parts() -> None:
    parts = [
        {"text": "I click."},
        {
            "functionCall": {"name": "click_at", "args": {"x": 500, "y": 500}},
            "thoughtSignature": "s",
        },
        {"functionCall": {"name": "get_controls", "args": {}, "id": "c2"}},
    ]
    response = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    answer, pending, kept = read_answer(response, DESKTOP, frozenset({"get_controls"}))
    assert answer["thought"] == "I click."
    assert [a["function"] for a in answer["action"]] == ["click_coordinates", "get_controls"]
    assert [(p.name, p.id, p.indices, p.predefined) for p in pending] == [
        ("click_at", None, (0,), True),
        ("get_controls", "c2", (1,), False),
    ]
    assert kept == parts  # the thought signature goes back as it came
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}}
    answer, pending, _ = read_answer(blocked, DESKTOP, frozenset())
    assert answer["action"] == {"status": "FAIL"} and "refused (SAFETY)" in answer["result"]


def test_a_calls_parts_run_as_one_and_the_next_call_on_its_own() -> None:
    """type_text_at's click into a field already focused shows no effect of its own: its
    typing must still run (agents/action_list.py goes on to a joined part)."""
    typed = {"x": 500, "y": 500, "text": "hi", "press_enter": False, "clear_before_typing": False}
    parts = [
        {"functionCall": {"name": "type_text_at", "args": typed}},
        {"functionCall": {"name": "key_combination", "args": {"keys": "control+s"}}},
    ]
    response = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    answer, _, _ = read_answer(response, DESKTOP, frozenset())
    assert [(a["function"], a.get("joined_to_next", False)) for a in answer["action"]] == [
        ("click_coordinates", True),
        ("type_text", False),
        ("press_keys", False),
    ]


SHOTS = {
    "two monitors": (Rect(0, 0, 3200, 1080), (3200, 1080)),
    "a monitor at 1.5": (Rect(1920, 0, 3200, 800), (1920, 1200)),
    "a window": (Rect(300, 200, 1100, 800), (800, 600)),
}


@pytest.mark.parametrize("shot", SHOTS)
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 999), st.integers(0, 999))
def test_a_grid_point_maps_back_within_one_logical_pixel(shot: str, x: int, y: int) -> None:
    region, pixels = SHOTS[shot]
    screen = screen_map_for(region, pixels, "gemini", grid=1000)
    [(_, where)] = as_tool_calls("click_at", {"x": x, "y": y}, screen)
    exact_x = region.left + (x + 0.5) * region.width / 1000
    exact_y = region.top + (y + 0.5) * region.height / 1000
    assert abs(where["x"] + 0.5 - exact_x) <= 1 and abs(where["y"] + 0.5 - exact_y) <= 1
    assert region.left <= where["x"] < region.right and region.top <= where["y"] < region.bottom
