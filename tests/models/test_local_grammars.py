"""The open families' grammars (models/local/): UI-TARS, Qwen-VL and OpenCUA answers read
into roundhouse's tool calls, a grammar break named, and each family's point mapped back
within one logical pixel on two monitors, on a monitor at scale 1.5 and on a window's own
screenshot. Pure: no server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roundhouse.config import LocalSettings
from roundhouse.devices.contract import Rect
from roundhouse.models.computer.screen import ScreenMap, screen_map_for
from roundhouse.models.local import qwen, uitars
from roundhouse.models.local.actions import GrammarError, Parsed, Pointer, Points
from roundhouse.models.local.family import Grammar, grammar_for

DESKTOP = Rect(0, 0, 1920, 1080)


def reader(kind: str, model: str, **local: str) -> tuple[Grammar, ScreenMap, Points]:
    grammar = grammar_for(kind, model, LocalSettings.model_validate(local))
    screen = screen_map_for(DESKTOP, (1920, 1080), grammar.target, grid=grammar.grid)
    return grammar, screen, Points(screen, grammar.fractions)


def read(kind: str, model: str, text: str, pointer: Pointer | None = None) -> Parsed:
    grammar, _, points = reader(kind, model)
    return grammar.read(text, points, pointer or Pointer(), frozenset())


# ------------------------------------------------------------------ which grammar


def test_the_model_name_decides_ui_tars_pixels_or_its_0_1000_scale() -> None:
    assert uitars.uses_pixels("ui-tars-1.5-7b")
    assert uitars.uses_pixels("ByteDance-Seed/UI-TARS-1.5-7B")
    assert not uitars.uses_pixels("ui-tars-7b-dpo")
    assert not uitars.uses_pixels("bytedance-research/UI-TARS-72B-SFT")
    assert not uitars.uses_pixels("ui-tars-2b-sft")
    assert uitars.uses_pixels("ui-tars") and uitars.uses_pixels("my-local-tars")
    old = grammar_for("uitars", "ui-tars-7b-sft", LocalSettings())
    new = grammar_for("uitars", "ui-tars-1.5-7b", LocalSettings())
    assert (old.grid, new.grid) == (1000, None)
    assert old.target == new.target == "qwen25"  # both sent smart-resized, factor 28


def test_the_model_name_decides_qwen_2_5_or_3_and_an_unclear_one_is_refused() -> None:
    assert qwen.version("Qwen/Qwen2.5-VL-7B-Instruct") == "2.5"
    assert qwen.version("qwen2.5vl:7b") == "2.5"
    assert qwen.version("Qwen/Qwen3-VL-8B-Instruct") == "3"
    three = grammar_for("qwen-vl", "qwen3-vl-8b", LocalSettings())
    assert (three.target, three.grid) == ("qwen3", 1000)
    with pytest.raises(ValueError, match="neither Qwen2.5-VL nor Qwen3-VL"):
        grammar_for("qwen-vl", "llava-13b", LocalSettings())


def test_opencua_coordinates_follow_the_model_unless_the_settings_say() -> None:
    assert grammar_for("opencua", "OpenCUA-7B", LocalSettings()).fractions == "small"
    assert grammar_for("opencua", "opencua-a3b", LocalSettings()).fractions == "always"
    absolute = grammar_for("opencua", "OpenCUA-7B", LocalSettings(coordinates="absolute"))
    assert (absolute.target, absolute.fractions) == ("as_taken", "never")


def test_qwen_is_told_the_size_of_the_image_or_its_1000_grid() -> None:
    grammar, screen, _ = reader("qwen-vl", "qwen2.5-vl-7b")
    assert "The screen's resolution is 1932x1092." in (grammar.system(screen, ()) or "")
    grammar, screen, _ = reader("qwen-vl", "qwen3-vl-8b")
    prompt = grammar.system(screen, ()) or ""
    assert "The screen's resolution is 1000x1000." in prompt
    assert "<tools>" in prompt and "triple_click" in prompt and "hscroll" in prompt


# ------------------------------------------------------------------ UI-TARS


def test_ui_tars_actions_become_roundhouse_tool_calls() -> None:
    text = (
        "Thought: The editor is open; I type and save.\n"
        "Action: click(start_box='<|box_start|>(966,546)<|box_end|>')\n\n"
        "type(content='native hello\\n')\n\n"
        "hotkey(key='ctrl s')"
    )
    parsed = read("uitars", "ui-tars-1.5-7b", text)
    assert parsed.thought == "The editor is open; I type and save."
    [(click, where), typed, pressed] = parsed.calls
    assert click == "click_coordinates" and abs(where["x"] - 960) <= 1
    assert abs(where["y"] - 540) <= 1
    assert typed == ("type_text", {"text": "native hello\n"})
    assert pressed == ("press_keys", {"keys": "ctrl+s"})
    assert parsed.end is None


def test_ui_tars_point_forms_and_the_other_actions() -> None:
    def one(action: str) -> tuple[str, dict[str, object]]:
        [call] = read("uitars", "ui-tars-1.5-7b", f"Thought: t\nAction: {action}").calls
        return call

    assert one("left_double(point='<point>966 546</point>')")[1]["double"] is True
    assert one("right_single(start_box='(966,546)')")[1]["button"] == "right"
    assert one("click(start_box='[960, 540, 972, 552]')")[1]["x"] in (959, 960, 961, 962)
    assert one("hotkey(key='alt f4')") == ("press_keys", {"keys": "alt+F4"})
    assert one("hotkey(key='enter')") == ("press_keys", {"keys": "Return"})
    assert one("wait()") == ("wait", {"seconds": 5.0})
    function, arguments = one("scroll(start_box='(966,546)', direction='down')")
    assert function == "scroll" and arguments["direction"] == "down"
    function, arguments = one("drag(start_box='(0,0)', end_box='(1931,1091)')")
    assert function == "drag" and (arguments["start_x"], arguments["end_x"]) == (0, 1919)


def test_ui_tars_finished_and_call_user_end_the_round() -> None:
    done = read("uitars", "ui-tars-1.5-7b", "Thought: saved\nAction: finished(content='Saved.')")
    assert (done.end, done.result, done.calls) == ("FINISH", "Saved.", ())
    stuck = read("uitars", "ui-tars-1.5-7b", "Thought: a password is asked\nAction: call_user()")
    assert stuck.end == "FAIL" and "a password is asked" in stuck.result


def test_ui_tars_reads_the_action_line_whatever_the_text_typed_says() -> None:
    text = "Thought: I type it.\nAction: type(content='Thought: x\\nAction: y')"
    [call] = read("uitars", "ui-tars-1.5-7b", text).calls
    assert call == ("type_text", {"text": "Thought: x\nAction: y"})
    [call] = read("uitars", "ui-tars-1.5-7b", "Thought: go. Action: wait()").calls
    assert call == ("wait", {"seconds": 5.0})


def test_ui_tars_text_with_an_unescaped_quote_is_typed_as_meant() -> None:
    [call] = read("uitars", "ui-tars-1.5-7b", "Thought: t\nAction: type(content='it's here')").calls
    assert call == ("type_text", {"text": "it's here"})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("I will click the button.", "no 'Action:' line"),
        ("Thought: t\nAction: tap(start_box='(1,1)')", "'tap' is not an action"),
        ("Thought: t\nAction: click(start_box='(1,1)', force=True)", "no argument 'force'"),
        ("Thought: t\nAction: click(start_box='somewhere')", "needs start_box"),
        ("Thought: t\nAction: click(start_box='(5000,10)')", "off the screen"),
        ("Thought: t\nAction: hotkey(key=open('/etc/passwd'))", "plain values"),
        ("Thought: t\nAction: os.system('rm -rf /')", "not an action call"),
    ],
)
def test_ui_tars_answers_outside_the_grammar_are_named(text: str, said: str) -> None:
    with pytest.raises(GrammarError, match=said):
        read("uitars", "ui-tars-1.5-7b", text)


def test_older_ui_tars_points_on_0_1000() -> None:
    [(_, where)] = read(
        "uitars", "ui-tars-7b-dpo", "Thought: t\nAction: click(start_box='(500,500)')"
    ).calls
    assert abs(where["x"] - 960) <= 2 and abs(where["y"] - 540) <= 1


# ------------------------------------------------------------------ Qwen-VL


def call(action: str, **arguments: object) -> str:
    import json

    body = json.dumps({"name": "computer_use", "arguments": {"action": action, **arguments}})
    return f"<tool_call>\n{body}\n</tool_call>"


def test_qwen_tool_calls_become_roundhouse_tool_calls_in_order() -> None:
    text = (
        "I click the editor, then type.\n"
        + call("left_click", coordinate=[966, 546])
        + call("type", text="native hello")
        + call("key", keys=["ctrl", "s"])
    )
    parsed = read("qwen-vl", "qwen2.5-vl-7b", text)
    assert parsed.thought == "I click the editor, then type."
    assert [f for f, _ in parsed.calls] == ["click_coordinates", "type_text", "press_keys"]
    assert parsed.calls[2][1] == {"keys": "ctrl+s"}


def test_qwen_mouse_move_places_the_pointer_for_a_drag_and_a_scroll() -> None:
    pointer = Pointer()
    parsed = read(
        "qwen-vl",
        "qwen2.5-vl-7b",
        call("mouse_move", coordinate=[100, 100]) + call("left_click_drag", coordinate=[300, 100]),
        pointer,
    )
    [(function, arguments)] = parsed.calls
    assert function == "drag" and arguments["start_x"] < arguments["end_x"]
    [(function, arguments)] = read(
        "qwen-vl", "qwen2.5-vl-7b", call("scroll", pixels=-3), pointer
    ).calls
    assert (function, arguments["direction"], arguments["amount"]) == ("scroll", "down", 3)
    assert (arguments["x"], arguments["y"]) == pointer.at


def test_qwen_terminate_and_qwen3_answer_end_the_round() -> None:
    done = read("qwen-vl", "qwen2.5-vl-7b", "Saved.\n" + call("terminate", status="success"))
    assert (done.end, done.result) == ("FINISH", "Saved.")
    failed = read("qwen-vl", "qwen2.5-vl-7b", call("terminate", status="failure"))
    assert failed.end == "FAIL"
    said = read("qwen-vl", "qwen3-vl-8b", call("answer", text="739"))
    assert (said.end, said.result) == ("FINISH", "739")


@pytest.mark.parametrize(
    ("model", "text", "said"),
    [
        ("qwen2.5-vl-7b", "The task is done.", "calls no function"),
        ("qwen2.5-vl-7b", "<tool_call>{not json}</tool_call>", "not JSON"),
        ("qwen2.5-vl-7b", call("triple_click", coordinate=[1, 1]), "not an action"),
        ("qwen2.5-vl-7b", call("left_click_drag", coordinate=[1, 1]), "mouse_move first"),
        ("qwen3-vl-8b", call("left_click", coordinate=[1200, 10]), "off the screen"),
        ("qwen3-vl-8b", call("triple_click", coordinate=[10, 10]), "cannot be done"),
    ],
)
def test_qwen_answers_outside_the_function_are_named(model: str, text: str, said: str) -> None:
    with pytest.raises(GrammarError, match=said):
        read("qwen-vl", model, text)


# ------------------------------------------------------------------ OpenCUA


def code(*lines: str) -> str:
    body = "\n".join(lines)
    said = "## Thought\nThe editor is open.\n\n## Action\nType and save.\n\n"
    return f"{said}## Code\n```python\n{body}\n```"


def test_opencua_code_becomes_roundhouse_tool_calls() -> None:
    parsed = read(
        "opencua",
        "OpenCUA-7B",
        code(
            "pyautogui.click(x=966, y=546)",
            "pyautogui.write(message='native hello')",
            "pyautogui.hotkey('ctrl', 's')",
            "pyautogui.press('enter', presses=2)",
            "computer.wait()",
        ),
    )
    assert "The editor is open." in parsed.thought and "Type and save." in parsed.thought
    assert [f for f, _ in parsed.calls] == [
        "click_coordinates", "type_text", "press_keys", "press_keys", "wait",
    ]  # fmt: skip
    assert parsed.calls[2][1] == {"keys": "ctrl+s"}
    assert parsed.calls[3][1] == {"keys": "Return Return"}


def test_opencua_terminate_ends_the_round_with_its_answer() -> None:
    done = read("opencua", "OpenCUA-7B", code("computer.terminate(status='success', answer='739')"))
    assert (done.end, done.result) == ("FINISH", "739")
    failed = read("opencua", "OpenCUA-7B", code("computer.terminate(status='failure')"))
    assert failed.end == "FAIL"


def test_opencua_qwen25_reads_fractions_as_its_authors_do() -> None:
    [(_, where)] = read("opencua", "OpenCUA-7B", code("pyautogui.click(0.5, 0.5)")).calls
    assert abs(where["x"] - 960) <= 1 and abs(where["y"] - 540) <= 1


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("## Thought\nI click.\n## Action\nClick.", "no code"),
        (code("import os"), "is not one call"),
        (code("__import__('os').system('touch /tmp/x')"), "not one of the calls allowed"),
        (code("os.system('touch /tmp/x')"), "not one of the calls allowed"),
        (code("pyautogui.click(x=1+1, y=2)"), "plain values"),
        (code("pyautogui.click(x=10, y=10, clicks=3)"), "3 clicks"),
        (code("pyautogui.dragTo(10, 10)"), "moveTo first"),
        (code("computer.triple_click(10, 10)"), "cannot be done"),
        (code("pyautogui.click(x=10, y=10"), "not Python"),
    ],
)
def test_opencua_code_outside_the_list_is_named_and_never_run(text: str, said: str) -> None:
    with pytest.raises(GrammarError, match=said):
        read("opencua", "OpenCUA-7B", text)


# ------------------------------------------------------------------ points, per family

# The model writes its point in its own grammar; `exact` is where it lies on the desktop.
Writer = Callable[[float, float], str]


def clicked(x: float, y: float) -> str:
    return code(f"pyautogui.click({x!r}, {y!r})")


FAMILIES: dict[str, tuple[str, str, Writer]] = {
    "ui-tars-1.5": (
        "uitars", "ui-tars-1.5-7b",
        lambda x, y: f"Action: click(start_box='<|box_start|>({x:g},{y:g})<|box_end|>')",
    ),
    "ui-tars-0-1000": (
        "uitars", "ui-tars-7b-dpo",
        lambda x, y: f"Thought: t\nAction: click(start_box='({x:g},{y:g})')",
    ),
    "qwen2.5-vl": ("qwen-vl", "qwen2.5-vl-7b", lambda x, y: call("left_click", coordinate=[x, y])),
    "qwen3-vl": ("qwen-vl", "qwen3-vl-8b", lambda x, y: call("left_click", coordinate=[x, y])),
    "opencua-qwen25": ("opencua", "OpenCUA-7B", clicked),
    "opencua-relative": ("opencua", "OpenCUA-A3B", clicked),
}  # fmt: skip
SHOTS = {
    # Two monitors, 1920x1080 at 1 and 1280x800 logical at 1.5 on its right: the whole desktop.
    "two monitors": (Rect(0, 0, 3200, 1080), (3200, 1080)),
    # The second of them, shot in its own pixels (1920x1200 for its 1280x800 place).
    "a monitor at 1.5": (Rect(1920, 0, 3200, 800), (1920, 1200)),
    # A window's own screenshot, its corner at (300, 200).
    "a window": (Rect(300, 200, 1100, 800), (800, 600)),
}


@pytest.mark.parametrize("shot", SHOTS)
@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=40, deadline=None)
@given(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True))
def test_a_families_point_maps_back_within_one_logical_pixel(
    family: str, shot: str, fx: float, fy: float
) -> None:
    kind, model, write = FAMILIES[family]
    region, pixels = SHOTS[shot]
    grammar = grammar_for(kind, model, LocalSettings())
    screen = screen_map_for(region, pixels, grammar.target, grid=grammar.grid)
    width, height = screen.space
    if grammar.fractions == "always":  # fractions of the screen, as the model writes them
        x, y = round(fx, 4), round(fy, 4)
        exact = (region.left + x * region.width, region.top + y * region.height)
    else:  # a pixel (or grid cell) of its space: its centre is where it points
        x, y = int(fx * width), int(fy * height)
        exact = (
            region.left + (x + 0.5) * region.width / width,
            region.top + (y + 0.5) * region.height / height,
        )
    [(function, where)] = grammar.read(
        write(x, y), Points(screen, grammar.fractions), Pointer(), frozenset()
    ).calls
    assert function == "click_coordinates"
    assert region.left <= where["x"] < region.right and region.top <= where["y"] < region.bottom
    assert abs(where["x"] + 0.5 - exact[0]) <= 1 and abs(where["y"] + 0.5 - exact[1]) <= 1


def test_opencua_absolute_points_are_pixels_of_the_screenshot_as_taken() -> None:
    grammar = grammar_for("opencua", "OpenCUA-7B", LocalSettings(coordinates="absolute"))
    region, pixels = SHOTS["a monitor at 1.5"]
    screen = screen_map_for(region, pixels, grammar.target, grid=grammar.grid)
    assert screen.sent == pixels
    text = code("pyautogui.click(960, 600)")  # the middle of its 1920x1200 pixels
    [(_, where)] = grammar.read(
        text, Points(screen, grammar.fractions), Pointer(), frozenset()
    ).calls
    assert (where["x"], where["y"]) == (2560, 400)


def test_qwen_takes_calls_of_roundhouse_tools_as_they_are() -> None:
    text = (
        '<tool_call>\n{"name": "launch_application", "arguments": {"name": "gedit"}}\n</tool_call>'
    )
    grammar, _, points = reader("qwen-vl", "qwen2.5-vl-7b")
    parsed = grammar.read(text, points, Pointer(), frozenset({"launch_application"}))
    assert parsed.calls == (("launch_application", {"name": "gedit"}),)
    with pytest.raises(GrammarError, match="no function 'launch_application'"):
        grammar.read(text, points, Pointer(), frozenset())
