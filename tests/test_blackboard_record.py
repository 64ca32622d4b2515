"""The round and session records, and what is derived from them: TaskWeaver's posts and
states, the subtasks the host sees, the blackboard as a prompt shows it, the checkpoint."""

from __future__ import annotations

from roundhouse.agents.prompting import blackboard_text
from roundhouse.core.blackboard import Blackboard
from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.context import RoundContext
from roundhouse.core.record import RecordState, RoundRecord, SessionRecord
from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.core.usage import Usage


def step(
    round_step: int,
    agent: AgentKind,
    name: str,
    status: Status | None,
    answer: str = "",
    subtask: str | None = None,
) -> StepRecord:
    return StepRecord(
        session_step=round_step,
        round_id=3,
        round_step=round_step,
        agent=agent,
        agent_name=name,
        status=status,
        thought=f"thought {round_step}",
        plan=["open the editor", "type"],
        actions=[
            ActionRecord(
                function="type_text",
                arguments={"text": "x"},
                result=Result(status=ResultStatus.SUCCESS, result="typed"),
            )
        ],
        answer=answer,
        send_to="host" if agent is AgentKind.APP else "user",
        subtask=subtask,
        usage=Usage(requests=1, cost=0.25),
    )


def test_posts_subtasks_and_usage_are_derived_from_the_steps() -> None:
    record = RoundRecord(id=3, user_query="copy a line")
    record.write_board("host", "request: copy a line\nplan: 1. open editor")
    record.write_board("app:mousepad", "typing")
    assert record.read_board("host").startswith("request: copy a line")
    assert record.read_board("nobody") == ""
    assert "[host]" in record.read_board() and "[app:mousepad]" in record.read_board()
    record.steps += [
        step(1, AgentKind.HOST, "host", Status.ASSIGN, subtask="type the line"),
        step(2, AgentKind.APP, "mousepad", Status.CONTINUE),
        step(3, AgentKind.APP, "mousepad", Status.FINISH, "typed it", "type the line"),
        step(4, AgentKind.HOST, "host", None),  # cut short: no post, no subtask
    ]
    posts = record.post_list
    assert [(p.send_from, p.send_to) for p in posts] == [
        ("host", "user"),
        ("mousepad", "host"),
        ("mousepad", "host"),
    ]
    assert [a.type for a in posts[0].attachments] == ["thought", "plan", "action", "result"]
    assert posts[2].message == "typed it"
    [ended] = record.subtasks
    assert (ended.sub_round_id, ended.agent_name, ended.status) == (1, "mousepad", "FINISH")
    assert record.subtask_ends == 2  # the host's ASSIGN ends one too (the hand-over)
    assert record.usage.requests == 4 and record.usage.cost == 1.0


def test_the_taskweaver_state_is_derived_from_the_rounds_own() -> None:
    record = RoundRecord(id=0, user_query="x")
    assert record.record_state is RecordState.RUNNING and not record.ended
    record.state = RoundState.FINISH
    assert record.record_state is RecordState.FINISHED and record.finished
    record.state = RoundState.ERROR
    assert record.record_state is RecordState.FAILED
    record.cancelled = True
    assert record.record_state is RecordState.CANCELLED
    record.error, record.device_lost, record.cancelled = "display lost", True, False
    assert record.to_run_again
    record.run_again_as = 1
    assert not record.to_run_again
    assert [p.message for p in record.post_list] == [
        "error: display lost",
        "its device was lost; run again as round 1",
    ]


def test_the_checkpoint_round_trips_without_what_it_derives() -> None:
    session = SessionRecord(agent=AgentKind.LINUX, settings={"max_step": 3})
    session.rounds.append(RoundRecord(id=0, user_query="x", state=RoundState.FINISH))
    session.rounds[0].steps.append(step(1, AgentKind.LINUX, "linux", Status.FINISH, "done"))
    session.blackboard.add_question("Which folder?", "/tmp")
    derived = {"rounds": {"__all__": {"post_list", "record_state"}}}
    text = session.model_dump_json(exclude=derived)
    assert "post_list" not in text and "record_state" not in text
    again = SessionRecord.model_validate_json(text)
    assert again == session
    assert again.requests == ["x"] and again.session_step == 1 and again.next_round_id == 1


def test_the_blackboard_renders_earlier_requests_questions_and_recent_steps() -> None:
    session = SessionRecord(agent=AgentKind.LINUX, settings={})
    earlier = RoundRecord(id=0, user_query="list /tmp", state=RoundState.FINISH)
    earlier.steps = [step(n, AgentKind.LINUX, "linux", Status.CONTINUE) for n in range(1, 31)]
    superseded = RoundRecord(id=1, user_query="the killed one", cancelled=True, run_again_as=2)
    superseded.steps = [step(1, AgentKind.LINUX, "linux", Status.CONTINUE)]
    current = RoundRecord(id=2, user_query="the killed one")
    session.rounds += [earlier, superseded, current]
    session.blackboard.add_question("Which folder?", "/tmp")
    session.blackboard.add_question("Overwrite?", None)
    session.blackboard.add_screenshot("action_round_0_final.png")
    text = blackboard_text(RoundContext(current, session), max_steps=5)
    assert "request_0: list /tmp" in text
    assert "request_1" not in text and "request_2" not in text  # run again; still running
    assert "Q: Which folder? A: /tmp" in text and "Q: Overwrite? A: (no answer)" in text
    assert '"step": 30' in text and '"step": 26' in text and '"step": 25' not in text
    assert "action_round_0_final.png" in text
    assert (
        blackboard_text(RoundContext(earlier, SessionRecord(agent=AgentKind.LINUX, settings={})))
        == ""
    )
    assert Blackboard.from_json(session.blackboard.to_json()) == session.blackboard
