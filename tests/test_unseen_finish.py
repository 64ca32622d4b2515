"""No FINISH on an unseen effect (issue 46): a model whose FINISH follows an action of its
own whose effect was not seen is told so once, with a fresh look, before the FINISH stands;
on the fake display, through the real step (agents/base.py) and the real effects. A replay
of a recording made before the question existed stands by its FINISH."""

from __future__ import annotations

import json
from pathlib import Path

from roundhouse.core.messages import Message
from roundhouse.core.states import RoundState, Status
from roundhouse.models.base import DOUBT, ModelRequest
from roundhouse.models.observation import AppObservation
from roundhouse.models.recording import RecordingModel
from roundhouse.models.replay import ReplayModel
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.function_model import FunctionModel
from tests.test_action_lists import Answer, app_steps, click, keypad, keypad_session, said


def doubted(model: FunctionModel) -> list[ModelRequest]:
    return [r for r in model.requests if r.messages and r.messages[-1].text.startswith(DOUBT)]


def last_request(model: FunctionModel) -> ModelRequest:
    return model.requests[-1]


async def test_a_finish_after_a_click_not_seen_is_asked_about_once_with_a_fresh_look(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    window.control("3").on_press = None  # a button that shows nothing when pressed
    model: FunctionModel

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            return said(click(observation, "3"))
        return said({"function": None, "status": "FINISH"}, "pressed 3")  # twice alike

    async with keypad_session(tmp_path, app, fake, max_actions=1) as (session, model):
        outcome = await session.run_round("press 3")
    [told] = doubted(model)  # once: the FINISH given again stands
    assert "click_control" in told.messages[-1].text and "effect not seen" in told.messages[-1].text
    assert isinstance(told.observation, AppObservation)  # looked at again, as it is now
    assert told.observation.history[-1].output["effect"] == "not seen"
    assert outcome.state is RoundState.FINISH
    steps = app_steps(session)
    assert [s.status for s in steps] == [Status.CONTINUE, Status.FINISH]
    assert steps[-1].usage.requests == 2  # the FINISH's step asked twice


async def test_told_of_the_unseen_effect_a_model_that_fails_ends_the_subtask_in_fail(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    window.control("3").on_press = None

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            # The click and the FINISH in one answer: the click's effect is not seen.
            return said([click(observation, "3", "FINISH")], "pressed 3")
        return said({"function": None, "status": "FAIL"}, "3 did nothing")

    async with keypad_session(tmp_path, app, fake) as (session, model):
        outcome = await session.run_round("press 3")
    assert len(doubted(model)) == 1
    first, second = app_steps(session)
    assert first.status is Status.CONTINUE  # its FINISH waits: the next step asks
    assert second.status is Status.FAIL and second.answer == "3 did nothing"
    assert second.actions == []
    assert outcome.state is RoundState.FAIL


async def test_told_a_model_that_acts_again_goes_on_and_its_finish_then_stands(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    window.control("3").on_press = None
    answers = iter(["finish with 3", "press 7 instead", "finish"])

    def app(observation: AppObservation) -> Answer:
        match next(answers):
            case "finish with 3":
                return said([click(observation, "3", "FINISH")], "pressed 3")
            case "press 7 instead":  # told, then asked again: it acts
                return said(click(observation, "7"))
            case _:
                return said({"function": None, "status": "FINISH"}, "pressed 7")

    async with keypad_session(tmp_path, app, fake) as (session, model):
        outcome = await session.run_round("press a digit")
    assert len(doubted(model)) == 1
    assert [s.status for s in app_steps(session)] == [
        Status.CONTINUE,  # its FINISH waits
        Status.CONTINUE,  # told, it acts again
        Status.FINISH,  # after a click seen: no question
    ]
    assert window.control("Display").text == "7"
    assert outcome.state is RoundState.FINISH


async def test_a_finish_after_an_effect_seen_is_not_asked_about(tmp_path: Path) -> None:
    fake = FakeDesktop()
    keypad(fake)

    def app(observation: AppObservation) -> Answer:
        return said([click(observation, "7", "FINISH")], "pressed 7")

    async with keypad_session(tmp_path, app, fake) as (session, model):
        outcome = await session.run_round("press 7")
    assert doubted(model) == []
    assert outcome.state is RoundState.FINISH


def _answer(status: str, result: str) -> dict[str, object]:
    return {
        "observation": "o",
        "thought": "t",
        "action": {"function": None, "arguments": {}, "status": status},
        "result": result,
    }


async def test_a_replay_stands_by_its_finish_unless_the_recording_was_asked_too(
    tmp_path: Path,
) -> None:
    def request(*texts: str) -> ModelRequest:
        return ModelRequest(agent="app", messages=tuple(Message("user", t) for t in texts))

    finish, fail = _answer("FINISH", "done"), _answer("FAIL", "not done")
    clicked = {
        **finish,
        "action": [
            {"function": "click_control", "arguments": {"id": 3, "name": "3"}, "status": "FINISH"}
        ],
    }
    made_before = tmp_path / "before.json"
    made_before.write_text(json.dumps([clicked, fail]))
    replay = ReplayModel(made_before)
    assert json.loads((await replay.complete(request("look"))).text)["result"] == "done"
    again = json.loads((await replay.complete(request("look", f"{DOUBT} not seen"))).text)
    # The recorded model's word stands, its click done already: not done again.
    assert again["result"] == "done"
    assert again["action"] == {"function": None, "arguments": {}, "status": "FINISH"}
    assert replay.remaining == 1
    asked_too = tmp_path / "asked.json"
    asked_too.write_text(json.dumps([{"answer": finish, "refused": True}, {"answer": fail}]))
    replay = ReplayModel(asked_too)
    await replay.complete(request("look"))
    second = await replay.complete(request("look", f"{DOUBT} not seen"))
    assert json.loads(second.text)["result"] == "not done"  # its second word, recorded


async def test_a_recording_marks_the_finish_it_was_asked_about_again(tmp_path: Path) -> None:
    answers = iter([_answer("FINISH", "done"), _answer("FAIL", "not done")])
    inner = FunctionModel(lambda request: next(answers))
    recording = RecordingModel(inner, tmp_path / "r.json", facts=())

    def request(*texts: str) -> ModelRequest:
        return ModelRequest(agent="app", messages=tuple(Message("user", t) for t in texts))

    await recording.complete(request("look"))
    await recording.complete(request("look", f"{DOUBT} not seen"))
    first, second = json.loads((tmp_path / "r.json").read_text())
    assert first.get("refused") is True and "refused" not in second
