"""Several actions in one answer, on the fake display: the real step (agents/base.py), the
real desktop tools and their effects (testing/tools.py), a host that hands the window
over and an AppAgent whose model answers lists. The list runs while each action does what
it meant to, and stops at a gone or changed target, an effect not seen, or a window that
opens; the model is then asked again, and its prompt says what ran and what did not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.agents.responses import (
    AppAnswer,
    HostAnswer,
    InvalidAnswer,
    check_host,
    parse_answer,
)
from roundhouse.config import Settings
from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.tools import desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.models.base import ModelRequest
from roundhouse.models.observation import NOT_RUN, AppObservation, HostObservation
from roundhouse.testing.display import FakeControl, FakeDesktop, FakeWindow
from roundhouse.testing.function_model import FunctionModel
from roundhouse.testing.tools import fake_tools
from tests.helpers import read_jsonl

Answer = dict[str, Any]


def keypad(fake: FakeDesktop) -> FakeWindow:
    """A window with a display and the buttons 7, 3 and 9, each adding its digit."""
    display = FakeControl.text_field("Display", Rect(left=60, top=70, right=400, bottom=100))
    window = fake.open_window("Keypad", "keypad", controls=[display])

    def digit(name: str) -> Callable[[], None]:
        def press() -> None:
            display.text += name

        return press

    for column, name in enumerate("739"):
        left = 60 + 80 * column
        rect = Rect(left=left, top=120, right=left + 60, bottom=160)
        window.add(FakeControl.button(name, rect, digit(name)))
    return window


def click(observation: AppObservation, name: str, status: str = "CONTINUE") -> Answer:
    control = next(c for c in observation.controls if c.name == name)
    return {
        "function": "click_control",
        "arguments": {"id": control.label, "name": control.name},
        "status": status,
    }


def said(actions: list[Answer] | Answer, result: str = "") -> Answer:
    return {"observation": "seen", "thought": "go", "action": actions, "result": result}


AppScript = Callable[[AppObservation], Answer]


@asynccontextmanager
async def keypad_session(
    tmp_path: Path,
    app: AppScript,
    fake: FakeDesktop,
    finish_with_subtask: bool = False,
    **settings: Any,
) -> AsyncIterator[tuple[Session, FunctionModel]]:
    """A host that selects the keypad and hands it `app`'s subtask, then finishes (after a
    failed subtask: fails)."""

    def answer(request: ModelRequest) -> Answer:
        observation = request.observation
        if isinstance(observation, HostObservation):
            if observation.subtasks:
                ended = observation.subtasks[-1].status
                return said({"function": None, "status": ended}, f"host: {ended}")
            window = next(w for w in observation.windows if w.title == "Keypad")
            select = {
                "function": "select_window",
                "arguments": {"window_id": window.xid},
                "status": "ASSIGN",
            }
            return said(select) | {
                "current_subtask": "press 7, 3 and 9",
                "finish_with_subtask": finish_with_subtask,
            }
        assert isinstance(observation, AppObservation)
        return app(observation)

    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "model": "function",
            "agent": "host",
            "desktop": {"effect_grace": 0},
            **settings,
        }
    )
    model = FunctionModel(answer)
    async with fake_tools(fake, config) as tools:
        async with compose_session(
            config,
            dispatcher=LocalDispatcher(desktop_registry(tools)),
            models={"function": model},
            snapshots=NoSnapshots(),
        ) as session:
            yield session, model


def host_requests(model: FunctionModel) -> list[HostObservation]:
    return [r.observation for r in model.requests if isinstance(r.observation, HostObservation)]


def app_requests(model: FunctionModel) -> list[AppObservation]:
    return [r.observation for r in model.requests if isinstance(r.observation, AppObservation)]


def app_steps(session: Session) -> list[Any]:
    return [s for s in session.store.read_steps() if s.agent is AgentKind.APP]


async def test_a_list_runs_whole_in_one_model_call(tmp_path: Path) -> None:
    fake = FakeDesktop()
    window = keypad(fake)

    def app(observation: AppObservation) -> Answer:
        return said(
            [click(observation, "7"), click(observation, "3"), click(observation, "9", "FINISH")],
            "pressed 7, 3 and 9",
        )

    async with keypad_session(tmp_path, app, fake) as (session, model):
        outcome = await session.run_round("press 7, 3 and 9 on the keypad")
    assert outcome.state is RoundState.FINISH, outcome.result
    assert window.control("Display").text == "739"
    [step] = app_steps(session)
    assert step.status is Status.FINISH and step.usage.requests == 1
    assert [a.arguments["name"] for a in step.ran] == ["7", "3", "9"]
    assert all(a.result is not None and a.result.ok for a in step.actions)
    assert len(app_requests(model)) == 1  # one model call, three actions
    line = read_jsonl(session.store.folder / "response.log")[1]
    assert [a["arguments"]["name"] for a in line["actions"]] == ["7", "3", "9"]
    assert line["usage"]["requests"] == 1


async def test_an_assign_that_finishes_with_its_subtask_ends_the_round_without_a_host_call(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    keypad(fake)

    def app(observation: AppObservation) -> Answer:
        return said([click(observation, "7"), click(observation, "3", "FINISH")], "pressed 73")

    async with keypad_session(tmp_path, app, fake, finish_with_subtask=True) as (session, model):
        outcome = await session.run_round("press 7 and 3 on the keypad")
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "keypad: pressed 73"  # the subtasks' results, as the host's would
    assert len(host_requests(model)) == 1  # the ASSIGN; its FINISH came with it
    last = session.store.read_steps()[-1]
    assert (last.agent, last.status, last.usage.requests) == (AgentKind.HOST, Status.FINISH, 0)


async def test_a_failed_subtask_goes_back_to_the_host_though_it_was_to_finish_the_round(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    keypad(fake)

    def app(observation: AppObservation) -> Answer:
        return said({"function": None, "status": "FAIL"}, "no keypad here")

    async with keypad_session(tmp_path, app, fake, finish_with_subtask=True) as (session, model):
        outcome = await session.run_round("press 7 and 3 on the keypad")
    assert (outcome.state, outcome.result) == (RoundState.FAIL, "host: FAIL")
    assert len(host_requests(model)) == 2  # asked again after the FAIL


async def test_finish_with_subtask_goes_with_an_assign_only() -> None:
    answer = said({"function": None, "status": "FINISH"}) | {"finish_with_subtask": True}
    with pytest.raises(InvalidAnswer, match="'finish_with_subtask' goes with ASSIGN, not FINISH"):
        check_host(parse_answer(json.dumps(answer), HostAnswer, agent=AgentKind.HOST, functions=()))


async def test_a_list_stops_before_a_target_that_is_gone_and_the_model_is_told(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    three = window.control("3")
    seven = window.control("7")
    pressed_seven = seven.on_press
    assert pressed_seven is not None

    def press_and_remove() -> None:  # 7 takes the 3 away (a panel that changes)
        pressed_seven()
        window.controls.remove(three)

    seven.on_press = press_and_remove

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            return said([click(observation, "7"), click(observation, "3"), click(observation, "9")])
        return said({"function": None, "status": "FINISH"}, "the 3 is gone")

    async with keypad_session(tmp_path, app, fake) as (session, model):
        outcome = await session.run_round("press 7, 3 and 9 on the keypad")
    assert outcome.state is RoundState.FINISH, outcome.result
    assert window.control("Display").text == "7"  # neither 3 nor 9 ran
    first = app_steps(session)[0]
    assert first.status is Status.CONTINUE  # asked again, whatever the list meant to end on
    assert [a.ran for a in first.actions] == [True, False, False]
    gone = "the list stopped before action 2: control 3 '3' (push button) is gone"
    assert [a.not_run for a in first.actions] == [None, gone, gone]
    # The next prompt says what ran and what did not, an entry per action.
    again = app_requests(model)[1]
    assert [(h.arguments["name"], h.result_status) for h in again.history] == [
        ("7", "success"),
        ("3", NOT_RUN),
        ("9", NOT_RUN),
    ]
    prompt = read_jsonl(session.store.folder / "request.log")
    text = [p for p in prompt if p["agent"] == "keypad"][1]["messages"][1]["text"]
    assert "1. [CONTINUE] (1 of 3 in one answer) click_control(" in text
    assert "3. [CONTINUE] (3 of 3 in one answer) click_control({" in text
    assert f"-> not run: {gone}" in text


async def test_a_list_stops_at_a_renamed_target(tmp_path: Path) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    three = window.control("3")

    def rename() -> None:
        three.name = "8"

    window.control("7").on_press = rename

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            return said([click(observation, "7"), click(observation, "3")])
        return said({"function": None, "status": "FAIL"}, "the 3 became 8")

    async with keypad_session(tmp_path, app, fake) as (session, _):
        await session.run_round("press 7 and 3")
    first = app_steps(session)[0]
    assert [a.ran for a in first.actions] == [True, False]
    assert first.actions[1].not_run is not None
    assert "control 3 '3' (push button) is now '8' (push button)" in first.actions[1].not_run


async def test_a_list_stops_after_an_effect_not_seen(tmp_path: Path) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    window.control("3").on_press = None  # a button that shows nothing when pressed

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            return said([click(observation, "3"), click(observation, "9", "FINISH")], "done")
        return said({"function": None, "status": "FAIL"}, "3 did nothing")

    async with keypad_session(tmp_path, app, fake) as (session, model):
        await session.run_round("press 3 and 9")
    assert window.control("Display").text == ""
    first = app_steps(session)[0]
    assert first.status is Status.CONTINUE
    assert first.actions[0].result is not None and first.actions[0].result.result["effect"] == (
        "not seen"
    )
    assert first.actions[1].not_run == (
        "the list stopped after action 1 (click_control): its effect was not seen"
    )
    assert [h.result_status for h in app_requests(model)[1].history] == ["success", NOT_RUN]


async def test_a_part_joined_to_the_next_goes_on_though_its_effect_was_not_seen(
    tmp_path: Path,
) -> None:
    """One action of the model's made of parts (Gemini's type_text_at: a click, then the
    typing): the click into a field already focused shows nothing, and the typing runs."""
    fake = FakeDesktop()
    window = keypad(fake)
    window.control("3").on_press = None  # shows nothing, as a click into a focused field

    def app(observation: AppObservation) -> Answer:
        joined = click(observation, "3") | {"joined_to_next": True}
        return said([joined, click(observation, "9", "FINISH")], "done")

    async with keypad_session(tmp_path, app, fake) as (session, _):
        await session.run_round("press 3 and 9")
    assert window.control("Display").text == "9"
    first = app_steps(session)[0]
    assert [a.ran for a in first.actions] == [True, True]


async def test_a_list_stops_after_an_action_that_opens_a_window(tmp_path: Path) -> None:
    fake = FakeDesktop()
    window = keypad(fake)
    opened: list[FakeWindow] = []

    def open_dialog() -> None:
        rect = Rect(left=200, top=200, right=500, bottom=400)
        opened.append(fake.open_window("Are you sure?", "keypad", rect))

    window.add(FakeControl.button("Clear", Rect(left=300, top=120, right=360, bottom=160)))
    window.control("Clear").on_press = open_dialog

    def app(observation: AppObservation) -> Answer:
        if not observation.history:
            return said([click(observation, "Clear"), click(observation, "9")])
        return said({"function": None, "status": "FAIL"}, "a dialog asks")

    async with keypad_session(tmp_path, app, fake) as (session, _):
        await session.run_round("clear, then press 9")
    assert opened and window.control("Display").text == ""  # 9 never ran
    first = app_steps(session)[0]
    [cleared, nine] = first.actions
    assert cleared.result is not None and cleared.result.result["window_change"] == "opened"
    assert nine.not_run == "the list stopped after action 1 (click_control): a window opened"


async def test_one_action_per_call_offers_no_list_and_refuses_one(tmp_path: Path) -> None:
    fake = FakeDesktop()
    window = keypad(fake)

    def app(observation: AppObservation) -> Answer:
        if observation.history:
            return said({"function": None, "status": "FINISH"}, "pressed")
        return said(click(observation, "7"))

    async with keypad_session(tmp_path, app, fake, max_actions=1) as (session, model):
        outcome = await session.run_round("press 7")
    assert outcome.state is RoundState.FINISH
    assert window.control("Display").text == "7"
    assert {o.max_actions for o in app_requests(model)} == {1}
    prompts = read_jsonl(session.store.folder / "request.log")
    system = next(p for p in prompts if p["agent"] == "keypad")["messages"][0]["text"]
    assert "may also be a list" not in system
    listed = said([{"function": "wait", "arguments": {}, "status": "CONTINUE"}] * 2)
    with pytest.raises(InvalidAnswer, match="holds 2 actions; give one action"):
        parse_answer(
            json.dumps(listed), AppAnswer, agent=AgentKind.APP, functions=["wait"], max_actions=1
        )
