"""Fuzz the model-answer parser: whatever a model writes, only the documented error escapes.

extract_json_object raises AnswerFormatError; parse_answer (and the agents' own checks
after it) raise InvalidAnswer, whose message goes back to the model; the evaluation
agent's parser raises AnswerFormatError or ValidationError. Anything else would end the
round in a traceback instead of a retry.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from roundhouse.agents import evaluation
from roundhouse.agents.parsing import AnswerFormatError, extract_json_object
from roundhouse.agents.responses import (
    AppAnswer,
    HostAnswer,
    InvalidAnswer,
    LinuxAnswer,
    check_control,
    check_host,
    parse_answer,
)
from roundhouse.core.states import AgentKind, Status
from tests.fuzz.common import (
    DEEP,
    FUZZ,
    HUGE,
    HUGE_DIGITS,
    deep_json,
    dumps,
    json_values,
    mutate,
    scalars,
)

FUNCTIONS = ("run_shell", "click_input", "set_edit_text", "select_window", "launch_application")
CONTROLS = [(1, "OK"), (2, "Cancel"), (17, "File name")]


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    """A step answer near the valid ones: each field right, or replaced by anything."""

    def field(right: st.SearchStrategy[Any]) -> Any:  # mostly right: the checks behind run
        return draw(json_values if draw(st.integers(min_value=0, max_value=9)) == 0 else right)

    control_ids = st.one_of(st.integers(0, 20), st.floats(), st.just(HUGE), scalars)
    arguments = st.one_of(
        st.fixed_dictionaries({"id": control_ids, "name": st.sampled_from(["OK", "Cancel", "x"])}),
        st.dictionaries(st.sampled_from(["id", "name", "command", "text", "x"]), scalars),
    )
    action = {
        "function": field(st.sampled_from([*FUNCTIONS, "", "rm_everything"])),
        "arguments": field(arguments),
        "status": field(st.sampled_from([*Status, "continue ", "MAYBE", HUGE])),
    }
    answer = {
        "observation": field(st.text(max_size=20)),
        "thought": field(st.text(max_size=20)),
        "action": field(st.just(action)),
        "plan": field(st.one_of(st.text(max_size=30), st.lists(st.text(max_size=10)))),
        "result": field(st.text(max_size=10)),
        "question": field(st.none() | st.text(max_size=10)),
        "current_subtask": field(st.text(max_size=10)),
        "save_screenshot": field(st.booleans()),
    }
    dropped = draw(st.sets(st.sampled_from(sorted(answer)), max_size=2))
    return {key: value for key, value in answer.items() if key not in dropped}


@st.composite
def answer_texts(draw: st.DrawFn) -> str:
    """An answer as a model may send it: bare, in a code fence, or with prose around it;
    now and then mutated."""
    body = dumps(draw(answers()))
    if draw(st.booleans()):
        body = mutate(draw, body)
    prose = st.text(max_size=20)
    fence = draw(st.sampled_from(["", "```", "```json\n", "```JSON"]))
    closing = "```" if fence and draw(st.booleans()) else ""
    return draw(prose) + fence + body + closing + draw(prose)


model_texts = st.one_of(
    answer_texts(),
    st.text(),
    json_values.map(dumps),
    st.builds(deep_json, st.integers(1, DEEP), st.sampled_from(["list", "object"])),
)


def parse_every_way(text: str) -> None:
    """Every parser an answer meets; each may only raise its documented error."""
    try:
        assert isinstance(extract_json_object(text), dict)
    except AnswerFormatError:
        pass
    try:
        parse_answer(text, LinuxAnswer, agent=AgentKind.LINUX, functions=FUNCTIONS)
    except InvalidAnswer:
        pass
    try:
        check_host(parse_answer(text, HostAnswer, agent=AgentKind.HOST, functions=FUNCTIONS))
    except InvalidAnswer:
        pass
    try:
        app = parse_answer(text, AppAnswer, agent=AgentKind.APP, functions=FUNCTIONS)
        for action in app.actions:
            check_control(action.arguments, CONTROLS)
    except InvalidAnswer:
        pass
    try:
        evaluation.parse_answer(text)
    except (AnswerFormatError, ValidationError):
        pass


VALID = (
    '{"observation": "o", "thought": "t", "action": {"function": "click_input", '
    '"arguments": {"id": %s, "name": "OK"}, "status": "CONTINUE"}}'
)


@FUZZ
@given(model_texts)
# An integer past Python's 4300-digit limit raised ValueError from json.loads.
@example('{"observation": "o", "thought": "t", "action": {"status": ' + HUGE_DIGITS + "}}")
# Nesting past the recursion limit raised RecursionError from json.loads.
@example('{"a": ' + deep_json(DEEP, "list") + "}")
# An infinite control id raised OverflowError from int().
@example(VALID % "Infinity")
@example(VALID % "NaN")
@example(VALID % "1e999")
def test_any_model_text_is_an_answer_or_the_documented_error(text: str) -> None:
    parse_every_way(text)


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["id", "name", "x"]), st.one_of(scalars, json_values), max_size=3
    )
)
def test_any_control_arguments_are_checked_or_refused(arguments: dict[str, Any]) -> None:
    try:
        check_control(arguments, CONTROLS)
    except InvalidAnswer:
        pass
