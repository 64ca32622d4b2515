"""Answers of several actions on a real desktop (Xvfb, AT-SPI, the Qt test app and gedit):
a list runs whole in one model call where each action shows its effect, and stops where a
window opens; the offline planner puts together what it is sure of."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.models.base import DOUBT, ModelRequest
from roundhouse.models.observation import NOT_RUN, AppObservation, HostObservation
from roundhouse.testing.function_model import FunctionModel
from tests.gui.conftest import QT_COMMAND, GuiSession
from tests.gui.test_gui_rounds import controls_of

Answer = dict[str, Any]
AppAnswers = list[Callable[[AppObservation], Answer]]


def answer(action: list[Answer] | Answer, result: str = "") -> Answer:
    return {"observation": "seen", "thought": "go", "plan": [], "action": action, "result": result}


def on(observation: AppObservation, name: str, function: str, **arguments: Any) -> Answer:
    """An action on the control named `name`, by its number and name as listed."""
    control = next(c for c in observation.controls if c.name == name)
    named = {"id": control.label, "name": control.name, **arguments}
    return {"function": function, "arguments": named, "status": "CONTINUE"}


def host_and_app(application: str, app_answers: AppAnswers) -> FunctionModel:
    """Host: launch `application`, then end as its subtask ended. App: the answers."""
    queue = list(app_answers)

    def reply(request: ModelRequest) -> Answer:
        observation = request.observation
        if isinstance(observation, HostObservation):
            if not observation.subtasks:
                launch = {
                    "function": "launch_application",
                    "arguments": {"name": application},
                    "status": "ASSIGN",
                }
                return answer(launch) | {"current_subtask": "do it"}
            last = observation.subtasks[-1]
            return answer({"function": None, "status": last.status}, last.result)
        assert isinstance(observation, AppObservation)
        if not queue and any(DOUBT in m.text for m in request.messages[-1:]):
            # Its FINISH came with an action whose effect was not seen (as fast as the app
            # drew): the model is asked once more (agents/base.py), and stands by it.
            return answer({"function": None, "status": "FINISH"}, "done")
        return queue.pop(0)(observation)

    return FunctionModel(reply)


async def test_a_list_of_three_actions_runs_in_one_model_call_in_qt(
    gui_session: GuiSession,
) -> None:
    def all_at_once(observation: AppObservation) -> Answer:
        finish = on(observation, "Remember me", "click_control") | {"status": "FINISH"}
        return answer(
            [
                on(observation, "Your name", "set_text", text="Ada"),
                on(observation, "Press me", "click_control"),
                finish,
            ],
            "named, pressed and remembered",
        )

    model = host_and_app(QT_COMMAND, [all_at_once])
    async with gui_session(model="function", models={"function": model}) as session:
        outcome = await session.run_round("fill the Qt form")
        qt = await controls_of(session, "Roundhouse Qt test")
    assert outcome.state is RoundState.FINISH, outcome.error
    shown = {c.name: c for c in qt.controls}
    assert shown["Your name"].text == "Ada"
    assert "checked" in shown["Remember me"].states
    assert any(item.text == "Pressed 1 times" for item in qt.context)
    [step] = [s for s in session.store.read_steps() if s.agent is AgentKind.APP]
    assert step.status is Status.FINISH and step.usage.requests == 1
    assert [a.function for a in step.ran] == ["set_text", "click_control", "click_control"]
    for action in step.ran:  # each one's effect was seen on the real desktop
        assert action.result is not None and action.result.result["effect"] == "confirmed"


async def test_a_list_stops_where_a_dialog_opens_in_gedit(gui_session: GuiSession) -> None:
    def type_save_type(observation: AppObservation) -> Answer:
        document = max(
            (c for c in observation.controls if c.role == "text"),
            key=lambda c: c.rect.width * c.rect.height,
        )

        def typing(text: str) -> Answer:
            named = {"id": document.label, "name": document.name, "text": text}
            return {"function": "type_text", "arguments": named, "status": "CONTINUE"}

        keys = {"function": "press_keys", "arguments": {"keys": "ctrl+shift+s"}}
        return answer([typing("first"), keys | {"status": "CONTINUE"}, typing("never typed")])

    def told(observation: AppObservation) -> Answer:
        assert [entry.result_status for entry in observation.history] == [
            "success",
            "success",
            NOT_RUN,
        ]
        return answer({"function": None, "status": "FAIL"}, "the Save dialog opened")

    model = host_and_app("gedit", [type_save_type, told])
    async with gui_session(model="function", models={"function": model}) as session:
        await session.run_round("type, save, type")
    first = next(s for s in session.store.read_steps() if s.agent is AgentKind.APP)
    assert first.status is Status.CONTINUE
    typed, saved, never = first.actions
    assert saved.result is not None and saved.result.result["window_change"] == "opened"
    assert never.not_run == "the list stopped after action 2 (press_keys): a window opened"
    prompts = [r for r in model.requests if r.agent == "app"]
    assert "-> not run: the list stopped after action 2 (press_keys)" in (
        prompts[1].messages[-1].text
    )


async def test_the_offline_planner_saves_in_gedit_with_fewer_model_calls(
    gui_session: GuiSession, tmp_path: Path
) -> None:
    calls = {}
    for most in (1, 8):
        target = tmp_path / f"out-{most}" / "hello.txt"
        request = f"open gedit, type Hello from roundhouse and save it as {target}"
        async with gui_session(model="offline", max_actions=most, task=f"most-{most}") as session:
            outcome = await session.run_round(request)
        assert outcome.state is RoundState.FINISH, outcome.result
        assert target.read_text().rstrip("\n") == "Hello from roundhouse"
        steps = session.store.read_steps()
        calls[most] = sum(step.usage.requests for step in steps)
        if most > 1:
            lists = [[a.function for a in s.ran] for s in steps if len(s.actions) > 1]
            assert lists == [
                ["run_shell", "launch_application"],  # the folder, in the answer that ASSIGNs
                ["type_text", "press_keys"],  # the text, then ctrl+shift+s
                ["set_text", "press_keys"],  # the dialog's name, then Return
            ]
    assert calls[8] < calls[1], calls
