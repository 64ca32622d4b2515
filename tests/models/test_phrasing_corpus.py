"""The phrasing corpus (tests/phrasing/corpus.yaml), read as `roundhouse bench phrasing`
reads it: at least 90% of the requests with a plan read as exactly that plan, none read
as another, and every request outside the grammar FAILs."""

from __future__ import annotations

from pathlib import Path

import pytest

from roundhouse.bench.phrasing import (
    CORPUS,
    CorpusError,
    judge,
    load_corpus,
    render,
    shares,
)

PHRASINGS = load_corpus(CORPUS)


def test_the_corpus_is_large_and_varied_enough_to_mean_something() -> None:
    outside = [p for p in PHRASINGS if p.plan is None]
    assert len(PHRASINGS) >= 200 and len(outside) >= 40
    categories = {p.category for p in PHRASINGS}
    assert {"shell", "editor", "browser", "files", "spreadsheet", "calculator"} <= categories
    assert len({p.say for p in PHRASINGS}) == len(PHRASINGS), "a request listed twice"


def test_nine_in_ten_are_understood_none_misread_and_every_outsider_fails() -> None:
    verdicts = [judge(p) for p in PHRASINGS]
    everything = shares(verdicts)[-1]
    assert everything.understood >= 0.9 * everything.planned, render(
        shares(verdicts), verdicts, True
    )
    wrong = [v for v in verdicts if v.outcome in ("misread", "acted on")]
    assert not wrong, render(shares(verdicts), wrong, False)


def test_a_corpus_that_is_not_one_is_refused_saying_where(tmp_path: Path) -> None:
    bad = tmp_path / "corpus.yaml"
    for text, says in (
        ("- say: x\n  plan: FAIL\n", "expected categories"),
        ("shell: {say: x}\n", "category 'shell' is not a list"),
        ("shell:\n  - say: x\n", "shell #1: expected exactly the keys say and plan"),
        ("shell:\n  - say: x\n    plan: maybe\n", "plan must be FAIL or a list of steps"),
        ("shell:\n  - say: ''\n    plan: FAIL\n", "say must be a request"),
        ("shell: [", "the corpus: cannot read it: while parsing"),
        ("a: " + "[" * 200 + "]" * 200, "nested too deeply"),  # read as any file a user gives
        ("shell: caf\udce9", "not UTF-8 text"),
    ):
        bad.write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(CorpusError, match=says):
            load_corpus(bad)
