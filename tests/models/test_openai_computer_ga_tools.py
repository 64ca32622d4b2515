"""The GA tool's answer read (models/openai_computer/tools.py): a call's batch of actions
becomes the answer's list, its safety check asked before the first. Pure."""

from __future__ import annotations

from roundhouse.devices.contract import Rect
from roundhouse.models.computer.screen import ScreenMap
from roundhouse.models.openai_computer.tools import computer_tool, read_answer

SCREEN = ScreenMap(Rect(0, 0, 1920, 1080), (1365, 768))
CHECK = {"id": "sc_1", "code": "irrelevant_domain", "message": "Check the file name."}


def test_a_batch_is_the_answers_list_and_one_pending_call() -> None:
    call = {
        "type": "computer_call",
        "call_id": "call_1",
        "actions": [
            {"type": "click", "x": 682, "y": 384, "button": "left"},
            {"type": "screenshot"},
            {"type": "keypress", "keys": ["CTRL", "S"]},
        ],
        "pending_safety_checks": [CHECK],
    }
    answer, pending = read_answer({"output": [call], "status": "completed"}, SCREEN)
    assert [a["function"] for a in answer["action"]] == ["click_coordinates", "press_keys"]
    assert [a["status"] for a in answer["action"]] == ["CONFIRM", "CONTINUE"]
    assert answer["safety_checks"] == ["Check the file name."]
    [one] = pending
    assert (one.call_id, list(one.indices), one.checks) == ("call_1", [0, 1], (CHECK,))


def test_the_ga_tool_declares_no_display() -> None:
    assert computer_tool(SCREEN, ga=True) == {"type": "computer"}
    assert computer_tool(SCREEN)["display_width"] == 1365
