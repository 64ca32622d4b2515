"""Recorded answers hold a step's output by reference and fill it on replay: pure functions."""

from __future__ import annotations

import json

import pytest

from roundhouse.models.references import (
    StepOutput,
    UnfillableReference,
    fill,
    fill_answer,
    hold,
    said,
)

DF_HERE = "Filesystem Size Used Avail Capacity Mounted on\noverlay 252G 175G 78G 70% /\n"
DF_THERE = "Filesystem Size Used Avail Capacity Mounted on\n/dev/sda1 20G 5.1G 14G 27% /\n"


def test_an_exact_quote_holds_the_place_it_came_from() -> None:
    df = StepOutput(1, DF_HERE)
    spoken = said(df.word(-1, 4), " free of ", df.word(-1, 2), " on ", df.word(-1, 6), ".")
    assert spoken.text == "78G free of 252G on /."
    assert spoken.held == (
        "{{step 1 line 2 word 4}} free of {{step 1 line 2 word 2}} on {{step 1 line 2 word 6}}."
    )
    assert fill(spoken.held, [DF_THERE]) == "14G free of 20G on /."


def test_every_line_quotes_lines_one_by_one() -> None:
    spoken = said("Head:\n", *StepOutput(2, "row 1\nrow 2\n\n").every_line())
    assert spoken.held == "Head:\n{{step 2 line 1}}\n{{step 2 line 2}}"
    assert fill(spoken.held, ["", "a\nb\n"]) == "Head:\na\nb"


def test_matching_holds_volatile_lines_and_words_and_leaves_the_rest() -> None:
    outputs = ["6.18.44-fc-v445\n", "vm\n", "2\n"]
    text = "Kernel 6.18.44-fc-v445. Host vm has 2 CPUs and the word vm stays in vmstat."
    held = hold(text, outputs, names=["vm"])
    assert held == (
        "Kernel {{step 1 line 1}}. Host {{step 2 line 1}} has {{step 3 line 1 word 1}} CPUs "
        "and the word {{step 2 line 1}} stays in vmstat."
    )
    assert fill(held, ["6.1.0-18-amd64", "box", "16"]).startswith("Kernel 6.1.0-18-amd64. Host box")


def test_matching_prefers_the_most_recent_step_and_never_matches_inside_a_reference() -> None:
    held = hold("There are 2 of 12.", ["2 12\n", "12 2\n"])
    assert held == "There are {{step 2 line 1 word 2}} of {{step 2 line 1 word 1}}."


def test_a_reference_this_run_cannot_fill_is_a_clear_error() -> None:
    with pytest.raises(UnfillableReference, match="step 3, but this run has taken 1 step"):
        fill("{{step 3 line 1}}", ["x"])
    with pytest.raises(UnfillableReference, match="line 2, but step 1 printed 1 line"):
        fill("{{step 1 line 2}}", ["x"])
    with pytest.raises(UnfillableReference, match="word 9, but line 1 of step 1 has 2 word"):
        fill("{{step 1 line 1 word 9}}", ["a b"])


def test_filling_a_json_answer_keeps_it_json_whatever_the_output_holds() -> None:
    answer = json.dumps({"result": "This is {{step 1 line 1}}."})
    filled = fill_answer(answer, ['Debian "GNU" \\ Linux'])
    assert json.loads(filled)["result"] == 'This is Debian "GNU" \\ Linux.'
    fenced = "```json\n" + answer + "\n```"  # a raw answer: filled inside its JSON string
    inner = fill_answer(fenced, ['say "hi"']).removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(inner)["result"] == 'This is say "hi".'
    assert fill_answer("no references", []) == "no references"
