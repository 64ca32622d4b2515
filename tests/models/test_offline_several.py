"""The offline planner's answers of several actions (models/offline/several.py): the actions
its plan is certain of without looking again, in one answer, no more than the agent allows;
a list stopped early is planned on from what really ran."""

from __future__ import annotations

import dataclasses
from typing import Any

from roundhouse.models.observation import (
    NOT_RUN,
    AppObservation,
    HostObservation,
    PastStep,
    ShellObservation,
    SubtaskView,
)
from roundhouse.models.offline.host import parse_request, plan_host
from roundhouse.models.offline.intents import read_request
from roundhouse.models.offline.shell import plan_shell
from roundhouse.models.offline.subtask import Handed
from tests.models.test_offline_gui_apps import app, control


def handed(request: str) -> Handed:
    ops, unknown = parse_request(request)
    assert unknown == []
    return Handed(tuple(op for op in ops if op.kind != "open"))


def several(observation: AppObservation, most: int = 8) -> AppObservation:
    return dataclasses.replace(observation, max_actions=most)


def actions(answer: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(function, status) of each action of an answer."""
    listed = answer["action"] if isinstance(answer["action"], list) else [answer["action"]]
    return [(a["function"], a["status"]) for a in listed]


def entries(answer: dict[str, Any], outcomes: list[str]) -> list[PastStep]:
    """The agent's history entries an answer's actions became: each with its outcome
    ("success" or not run)."""
    listed = answer["action"] if isinstance(answer["action"], list) else [answer["action"]]
    return [
        PastStep(
            a["function"],
            a["arguments"],
            a["status"],
            outcome,
            {"effect": "confirmed", "seen": "x"} if outcome == "success" else None,
            None if outcome == "success" else "the list stopped",
        )
        for a, outcome in zip(listed, outcomes, strict=True)
    ]


KEYPAD = [
    control(n, "push button", name, (40 * n, 10, 40 * n + 30, 40))
    for n, name in enumerate(["7", "3", "9"], 1)
]
CLICKS = "open the calculator, click the 7 button, then click the 3 button, then click the 9 button"


def test_a_run_of_clicks_is_one_answer_that_finishes() -> None:
    work = handed(CLICKS)
    said = work.next(several(app("s", KEYPAD)))
    assert actions(said) == [
        ("click_control", "CONTINUE"),
        ("click_control", "CONTINUE"),
        ("click_control", "FINISH"),
    ]
    assert [a["arguments"]["name"] for a in said["action"]] == ["7", "3", "9"]
    assert said["result"] == "clicked '7'; clicked '3'; clicked '9'"
    assert work.served == [0, 1, 2]  # an entry of the agent's history per action


def test_one_action_per_call_is_one_action_per_answer() -> None:
    work = handed(CLICKS)
    said = work.next(app("s", KEYPAD))  # max_actions 1, the observation's default
    assert actions(said) == [("click_control", "CONTINUE")]
    assert work.served == [0]


def test_no_list_is_longer_than_the_agent_allows() -> None:
    said = handed(CLICKS).next(several(app("s", KEYPAD), most=2))
    assert actions(said) == [("click_control", "CONTINUE")] * 2


def test_a_list_stopped_early_is_planned_on_from_what_ran() -> None:
    work = handed(CLICKS)
    first = work.next(several(app("s", KEYPAD)))
    history = entries(first, ["success", NOT_RUN, NOT_RUN])  # 3 was gone, say
    again = work.next(several(app("s", KEYPAD, history)))
    assert [a["arguments"]["name"] for a in again["action"]] == ["3", "9"]
    assert actions(again)[-1] == ("click_control", "FINISH")
    assert work.served == [0, 1, 2, 1, 2]


def test_typing_then_save_as_stops_where_the_dialog_must_be_seen() -> None:
    work = handed("open gedit, type Hello and save it as /tmp/x/hello.txt")
    document = [control(9, "text", "", (0, 30, 600, 500))]
    first = work.next(several(app("s", document)))
    assert actions(first) == [("type_text", "CONTINUE"), ("press_keys", "CONTINUE")]
    assert first["action"][1]["arguments"] == {"keys": "ctrl+shift+s"}
    history = entries(first, ["success", "success"])
    dialog = [control(1, "text", "Name:", (0, 0, 200, 20))]
    named = work.next(several(app("s", dialog, history, title="Save As", in_dialog=True)))
    assert actions(named) == [("set_text", "CONTINUE"), ("press_keys", "CONTINUE")]
    assert named["action"][1]["arguments"] == {"keys": "Return"}
    history += entries(named, ["success", "success"])
    # Whether it saved shows in the title: looked at, not assumed.
    done = work.next(several(app("s", document, history, title="hello.txt (/tmp/x) - gedit")))
    assert actions(done) == [(None, "FINISH")] and done["result"].endswith("/tmp/x/hello.txt")


def test_the_host_makes_the_folder_in_the_answer_that_assigns() -> None:
    request = "open gedit, type Hello and save it as /tmp/x/hello.txt"
    seen = HostObservation(request, (), ("gedit — Text Editor",), max_actions=8)
    plan = plan_host(seen)
    assert actions(plan.answer) == [("run_shell", "CONTINUE"), ("launch_application", "ASSIGN")]
    assert plan.answer["current_subtask"] == "type Hello, save it as /tmp/x/hello.txt"
    assert plan.assigned is not None
    alone = plan_host(dataclasses.replace(seen, max_actions=1)).answer
    assert actions(alone) == [("run_shell", "CONTINUE")]
    # The list stopped at a mkdir that failed: the host sees it, and fails.
    failed = PastStep(
        "run_shell",
        plan.answer["action"][0]["arguments"],
        "CONTINUE",
        "success",
        {"exit_code": 1, "stdout": "", "stderr": "mkdir: Permission denied"},
        None,
    )
    launch = PastStep("launch_application", {}, "CONTINUE", NOT_RUN, None, "stopped")
    after = plan_host(dataclasses.replace(seen, history=(failed, launch))).answer
    assert actions(after) == [(None, "FAIL")]
    assert after["result"] == "`mkdir -p -- /tmp/x` failed"


def test_the_shell_runs_an_intents_commands_in_one_answer() -> None:
    intent = read_request("create a file notes.txt containing hello").shell_intent()
    assert intent is not None and len(intent.commands) == 2
    said = plan_shell(ShellObservation("r", max_actions=8), intent)
    assert actions(said) == [("run_shell", "CONTINUE"), ("run_shell", "CONTINUE")]
    alone = plan_shell(ShellObservation("r"), intent)
    assert actions(alone) == [("run_shell", "CONTINUE")]


def test_the_hosts_last_assign_finishes_with_its_subtask_where_lists_are_allowed() -> None:
    request = "open gedit and type Hello, then open the calculator and press 7"
    windows = ("gedit — Text Editor", "Calculator")
    first = plan_host(HostObservation(request, (), windows, max_actions=8)).answer
    assert actions(first) == [("launch_application", "ASSIGN")]
    assert "finish_with_subtask" not in first  # another subtask comes after it
    done = (SubtaskView("gedit", "type Hello", "FINISH", "typed"),)
    seen = HostObservation(request, (), windows, subtasks=done, max_actions=8)
    last = plan_host(seen).answer
    assert actions(last) == [("launch_application", "ASSIGN")]
    assert last["finish_with_subtask"] is True
    # One action per call, as before lists: the host says FINISH in an answer of its own.
    assert "finish_with_subtask" not in plan_host(dataclasses.replace(seen, max_actions=1)).answer


def test_entries_down_a_column_go_in_one_list_without_moves_between_them() -> None:
    """Return moves the cursor down a row: the cell below the one just entered needs no
    keys to reach (which would show nothing, and stop the list)."""
    work = handed("open localc, type 12 into cell A1, type 30 into cell A2, type 7 into cell C3")
    said = work.next(several(app("s", [])))
    assert [(a["function"], a["arguments"]) for a in said["action"]] == [
        ("press_keys", {"keys": "ctrl+Home"}),
        ("type_text", {"text": "12\n"}),
        ("type_text", {"text": "30\n"}),  # A2 is below A1: no moves
        ("press_keys", {"keys": "ctrl+Home Right Right Down Down"}),  # C3 is not below A2
        ("type_text", {"text": "7\n"}),
    ]
