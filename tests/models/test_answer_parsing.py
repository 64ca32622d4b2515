"""Tolerant answer parsing: what the judge (and every agent) may wrap its JSON in."""

from __future__ import annotations

import pytest

from roundhouse.agents.parsing import AnswerFormatError, extract_json_object


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2,],}\n```', {"a": [1, 2]}),
        ('Sure! {"a": "}"} hope that helps', {"a": "}"}),
        ('Here is {the plan}: {"a": 1}', {"a": 1}),
        ('```\n{"a": 1}\n``` and ```json\n{"b": 2}\n```', {"a": 1}),
        ('Answer:\n```json\n{"a": 1}', {"a": 1}),  # an unclosed fence
        ('```JSON {"a": 1} ```', {"a": 1}),
    ],
)
def test_json_is_found_in_what_models_write(text: str, expected: dict[str, object]) -> None:
    assert extract_json_object(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1',  # cut at the token limit
        '{"a": {"b": 1}, "c": ',  # cut: its inner object is not the answer
        '{"a": {"b": 1}, oops}',  # broken: neither is it here
        "no json at all",
        "[1, 2]",
    ],
)
def test_what_is_not_an_answer_is_refused(text: str) -> None:
    with pytest.raises(AnswerFormatError, match="not a JSON object"):
        extract_json_object(text)
