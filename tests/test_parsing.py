from __future__ import annotations

import json

import pytest

from roundhouse.agents.parsing import MAX_DEPTH, AnswerFormatError, extract_json_object
from roundhouse.agents.responses import InvalidAnswer, LinuxAnswer, check_control, parse_answer
from roundhouse.core.states import AgentKind, Status

GOOD = (
    '{"observation": "o", "thought": "t", "plan": "- a\\n- b", "result": "",'
    ' "action": {"function": "run_shell", "arguments": {"command": "ls"}, "status": "continue"}}'
)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        'Sure! Here it is:\n```json\n{"a": 1}\n```\nAnything else?',
        '```\n{"a": 1,}\n```',
        'The answer is {"a": 1, "b": [1, 2,],} as asked.',
        'prefix {"a": 1, "s": "a } inside a string"} suffix',
    ],
)
def test_tolerant_extraction(text: str) -> None:
    assert extract_json_object(text)["a"] == 1


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2]", '{"a": 1', "{'a': 1}"])
def test_what_is_not_an_object_is_an_error(text: str) -> None:
    with pytest.raises(AnswerFormatError):
        extract_json_object(text)


def parse(text: str) -> LinuxAnswer:
    return parse_answer(text, LinuxAnswer, agent=AgentKind.LINUX, functions={"run_shell"})


def test_a_valid_answer_is_typed() -> None:
    answer = parse(GOOD)
    assert answer.status is Status.CONTINUE
    assert [a.arguments for a in answer.actions] == [{"command": "ls"}]
    assert answer.plan == ["a", "b"]


def test_missing_fields_are_named() -> None:
    with pytest.raises(InvalidAnswer, match="thought"):
        parse('{"observation": "o", "action": {"status": "FINISH"}}')


def test_unknown_function_names_the_known_ones() -> None:
    with pytest.raises(InvalidAnswer, match="unknown function 'rm_everything'.*run_shell"):
        parse(GOOD.replace('"run_shell"', '"rm_everything"'))


def test_a_status_the_agent_cannot_answer_is_refused() -> None:
    with pytest.raises(InvalidAnswer, match="cannot answer ASSIGN"):
        parse(GOOD.replace('"continue"', '"ASSIGN"'))
    with pytest.raises(InvalidAnswer, match="status"):
        parse(GOOD.replace('"continue"', '"MAYBE"'))


def test_pending_needs_a_question() -> None:
    with pytest.raises(InvalidAnswer, match="question"):
        parse(GOOD.replace('"continue"', '"PENDING"'))
    assert (
        parse(
            GOOD.replace('"continue"', '"PENDING"').replace('"result": ""', '"question": "which?"')
        ).question
        == "which?"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": ' + "9" * 5000 + "}", "too many digits"),  # was ValueError from json.loads
        ('{"a": ' + "[" * 3000 + "]" * 3000 + "}", "nested too deeply"),  # was RecursionError
    ],
)
def test_json_too_big_to_read_is_an_answer_error_that_says_why(text: str, why: str) -> None:
    with pytest.raises(AnswerFormatError, match=why):
        extract_json_object(text)
    with pytest.raises(InvalidAnswer, match=why):
        parse(text)


def test_the_nesting_limit_is_ours_on_every_python() -> None:
    """3.11's json gave up near 1,000 levels, 3.13's reads 3,000: the limit is MAX_DEPTH."""
    nested = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert extract_json_object('{"a": ' + nested + "}") == {"a": json.loads(nested)}
    with pytest.raises(AnswerFormatError, match=f"more than {MAX_DEPTH} levels"):
        extract_json_object('{"a": [' + nested + "]}")
    # brackets inside a string are text, not nesting
    deep_text = "[" * (2 * MAX_DEPTH)
    assert extract_json_object(json.dumps({"a": deep_text})) == {"a": deep_text}


@pytest.mark.parametrize("label", [float("inf"), float("nan"), "17x", None, [17]])
def test_a_control_id_that_is_no_integer_goes_back_to_the_model(label: object) -> None:
    with pytest.raises(InvalidAnswer, match="is not a number"):  # inf was an OverflowError
        check_control({"id": label, "name": "OK"}, [(17, "OK")])
