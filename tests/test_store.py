from __future__ import annotations

import json
from pathlib import Path

import pytest

from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.store import LogStore, safe_task_name
from tests.helpers import SessionFactory, read_jsonl, shell_answer, write_replay


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../x", "x"),
        ("/etc", "etc"),
        ("../../../../etc/passwd", "etc_passwd"),
        ("my task", "my_task"),
        ("..", "task"),
        ("", "task"),
        ("ok-name_1.2", "ok-name_1.2"),
        ("a/../../b", "a_b"),
    ],
)
def test_task_names_are_sanitised(name: str, expected: str) -> None:
    assert safe_task_name(name) == expected


@pytest.mark.parametrize("hostile", ["../escape", "/etc", "..", "a/../../b", "~root"])
def test_a_hostile_task_name_stays_inside_the_logs_folder(tmp_path: Path, hostile: str) -> None:
    logs = tmp_path / "logs"
    store = LogStore.create(logs, hostile)
    assert store.folder.resolve().parent == logs.resolve()


def test_an_existing_session_folder_is_never_written_over(tmp_path: Path) -> None:
    first = LogStore.create(tmp_path, "t")
    (first.folder / "response.log").write_text("old\n")
    second = LogStore.create(tmp_path, "t")
    assert second.folder.name == "t-2"
    assert (first.folder / "response.log").read_text() == "old\n"


def test_snapshot_paths_cannot_leave_the_folder(tmp_path: Path) -> None:
    store = LogStore.create(tmp_path, "t")
    assert store.path("ui_trees/ui_tree_round_0_final.json").parent.name == "ui_trees"
    with pytest.raises(ValueError):
        store.path("../outside.png")


async def test_the_log_folder_has_the_files_of_the_design(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", "echo hi"), shell_answer("FINISH", result="hi")],
    )
    keys = {
        section: {"api_key": f"sk-{section}-secret"}
        for section in ("openai", "anthropic", "gemini")
    }
    session = await make_session(model=f"replay:{replay}", eva_round=True, task="named", **keys)
    await session.run_round("say hi")
    folder = session.store.folder
    assert folder.name == "named"
    for written in folder.iterdir():  # no key reaches the log folder, whichever vendor's
        assert "-secret" not in written.read_text(), written.name
    assert {p.name for p in folder.iterdir()} == {
        "response.log",
        "request.log",
        "evaluation.log",
        "rounds.jsonl",
        "blackboard.json",
        "session.json",
    }
    steps = read_jsonl(folder / "response.log")
    assert len(steps) == 2
    [echo] = steps[0]["actions"]  # each action with its result, or why it did not run
    assert {k: echo[k] for k in ("function", "arguments")} == {
        "function": "run_shell",
        "arguments": {"command": "echo hi"},
    }
    assert echo["result"]["result"]["stdout"] == "hi\n" and echo["not_run"] is None
    assert steps[1]["actions"] == []  # FINISH calls no tool
    assert {"agent", "status", "thought", "usage", "model_ms", "action_ms"} <= set(steps[0])
    rounds = read_jsonl(folder / "rounds.jsonl")
    assert [r["record_state"] for r in rounds] == ["running", "finished"]
    assert [r["state"] for r in rounds] == ["START", "FINISH"]  # the round's own, and TaskWeaver's
    assert rounds[-1]["user_query"] == "say hi"
    assert len(rounds[-1]["post_list"]) == 2
    assert "steps" not in rounds[-1]  # response.log holds them
    board = json.loads((folder / "blackboard.json").read_text())
    assert board == {"questions": [], "screenshots": []}
    # The checkpoint holds the session whole: the round with its steps and its judge.
    checkpoint = json.loads((folder / "session.json").read_text())
    [round_] = checkpoint["rounds"]
    assert [s["status"] for s in round_["steps"]] == ["CONTINUE", "FINISH"]
    assert round_["result"] == "hi" and round_["evaluation"]["round_id"] == 0
    assert "post_list" not in round_ and "api_key" not in json.dumps(checkpoint["settings"])


async def test_read_steps_skips_a_line_a_kill_cut_short(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("FINISH", result="ok")])
    session = await make_session(model=f"replay:{replay}")
    await session.run_round("x")
    with open(session.store.folder / "response.log", "a") as log:
        log.write('{"session_step": 2, "round_id": 0, "ro')  # the process died mid-write
    steps = session.store.read_steps()
    assert [s.session_step for s in steps] == [1]


def test_a_step_written_before_answers_held_lists_reads_as_one_action() -> None:
    """response.log and session.json of an older version: one "action" and its "result"."""
    old = {
        "session_step": 1,
        "round_id": 0,
        "round_step": 1,
        "agent": "linux",
        "agent_name": "linux",
        "status": "CONTINUE",
        "action": {"function": "run_shell", "arguments": {"command": "echo hi"}},
        "result": {"status": "success", "result": {"stdout": "hi\n", "exit_code": 0}},
    }
    [action] = StepRecord.model_validate(old).actions
    assert (action.function, action.arguments) == ("run_shell", {"command": "echo hi"})
    assert action.result is not None and action.result.result["stdout"] == "hi\n"
    finished = {**old, "status": "FINISH", "action": {"function": None}, "result": None}
    assert StepRecord.model_validate(finished).actions == []
