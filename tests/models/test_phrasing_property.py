"""Generated requests, read by the offline planner: each is clauses it knows or does not,
joined as people join them (commas, "and", "then", ";", sentences), with polite openings.

The property the issue asks for: no argument of a launch or of typing spans a clause
boundary or holds a verb of another clause. Stronger, and checked with it: a request of
known clauses reads as exactly their steps, and one with any unknown clause FAILs, naming
one of those, with no step at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from roundhouse.models.offline.intents import read_request
from tests.fuzz.common import FUZZ


@dataclass(frozen=True)
class Clause:
    text: str
    steps: tuple[str, ...]  # intents.describe of what it means; () for a clause not known

    @property
    def verb(self) -> str:
        return self.text.split()[0]


# Words of a typed text or a name: none is a verb, a filler, or a clause boundary.
NOUNS = (
    "milk eggs bread butter sky blue harbour Ada Lovelace letter summer garden lamp river"
    " north tea apples pears Grüße 東京 budget invoice"
).split()
words = st.lists(st.sampled_from(NOUNS), min_size=1, max_size=4)


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A text to type: nouns, sometimes listed with commas and "and" ("milk, eggs and tea")."""
    chosen = draw(words)
    if len(chosen) > 2 and draw(st.booleans()):
        return ", ".join(chosen[:-1]) + " and " + chosen[-1]
    return " ".join(chosen)


APPLICATIONS = {
    "gedit": "gedit",
    "the text editor": "text editor",
    "a web browser": "web browser",
    "the file manager": "file manager",
    "the calculator": "calculator",
    "the spreadsheet": "spreadsheet",
    "the terminal": "terminal",
    "mousepad": "mousepad",
}


@st.composite
def known(draw: st.DrawFn) -> Clause:
    kind = draw(
        st.sampled_from(
            ["open", "type", "field", "click", "keys", "save_as", "save", "close", "cell", "goto"]
        )
    )
    if kind == "open":
        verb = draw(st.sampled_from(["open", "launch", "start", "run", "bring up"]))
        said, meant = draw(st.sampled_from(sorted(APPLICATIONS.items())))
        return Clause(f"{verb} {said}", (f"open {meant!r}",))
    if kind in ("type", "field", "cell"):
        verb = draw(st.sampled_from(["type", "write", "enter", "put"]))
        text = draw(texts())
        if kind == "type":
            return Clause(f"{verb} {text}", (f"type {text!r}",))
        if kind == "field":
            field = draw(st.sampled_from(["Name", "Email", "Your name", "City"]))
            return Clause(
                f"{verb} {text} into the {field} field", (f"type {text!r} into {field!r}",)
            )
        cell = draw(st.sampled_from(["A1", "B2", "C10"]))
        number = str(draw(st.integers(0, 999)))
        return Clause(f"{verb} {number} in cell {cell}", (f"cell {number!r} into {cell!r}",))
    if kind == "click":
        verb = draw(st.sampled_from(["click", "click on", "press", "hit"]))
        name = draw(st.sampled_from(["OK", "Submit", "Press me", "7"]))
        return Clause(f"{verb} the {name} button", (f"click {name!r}",))
    if kind == "keys":
        verb = draw(st.sampled_from(["press", "hit"]))
        keys = draw(st.sampled_from(["ctrl+s", "Return", "Tab", "ctrl+shift+t"]))
        return Clause(f"{verb} {keys}", (f"keys {keys!r}",))
    if kind == "save_as":
        verb = draw(st.sampled_from(["save", "store", "keep"]))
        what = draw(st.sampled_from(["it", "the file", "the document"]))
        how = draw(st.sampled_from(["as", "to", "under"]))
        path = f"/tmp/{draw(st.sampled_from(NOUNS[:10]))}.txt"
        return Clause(f"{verb} {what} {how} {path}", (f"save_as {path!r}",))
    if kind == "save":
        return Clause("save it", ("save",))
    if kind == "close":
        return Clause(draw(st.sampled_from(["close the window", "quit"])), ("close",))
    url = f"http://127.0.0.1:8000/{draw(st.sampled_from(NOUNS[:10]))}.html"
    return Clause(f"go to {url}", (f"goto {url!r}",))


# Clauses outside what the planner does, each begun by a verb it does not act on.
UNKNOWN = [
    Clause(text, ())
    for text in (
        "paint a sunset",
        "compute 12*7",
        "delete the file",
        "send an email to Bob",
        "translate it to French",
        "download the report",
        "make the text bold",
        "search for cheap flights",
        "play some music",
    )
]
JOINS = [", ", " and ", ", and ", ", then ", " then ", " and then ", "; ", ". "]
OPENINGS = ["", "", "please ", "could you ", "I'd like you to ", "now ", "then "]


@st.composite
def requests(draw: st.DrawFn, unknown: bool) -> tuple[str, list[Clause]]:
    clauses = draw(st.lists(known(), min_size=1, max_size=4))
    if unknown:
        at = draw(st.integers(0, len(clauses)))
        clauses.insert(at, draw(st.sampled_from(UNKNOWN)))
    request = draw(st.sampled_from(OPENINGS)) + clauses[0].text
    for clause in clauses[1:]:
        join = draw(st.sampled_from(JOINS))
        said = clause.text[0].upper() + clause.text[1:] if join == ". " else clause.text
        request += join + draw(st.sampled_from(OPENINGS)) + said
    return request + draw(st.sampled_from(["", ".", "?", " please", ", thanks"])), clauses


def held_within_one_clause(request: str, clauses: list[Clause]) -> None:
    """What is launched or typed lies inside one clause and names no other clause's verb."""
    reading = read_request(request)
    for op in reading.ops:
        if op.kind not in ("open", "type"):
            continue
        homes = [c for c in clauses if op.text.casefold() in c.text.casefold()]
        assert homes, f"{op.text!r} spans clauses of {request!r}"
        others = {c.verb.casefold() for c in clauses if c not in homes}
        assert not others & set(op.text.casefold().split()), (op, request)


@FUZZ
@given(requests(unknown=False))
def test_known_clauses_read_as_exactly_their_steps(generated: tuple[str, list[Clause]]) -> None:
    request, clauses = generated
    held_within_one_clause(request, clauses)
    assert read_request(request).plan() == [step for c in clauses for step in c.steps], request


@FUZZ
@given(requests(unknown=True))
def test_an_unknown_clause_fails_the_whole_request_naming_it(
    generated: tuple[str, list[Clause]],
) -> None:
    request, clauses = generated
    held_within_one_clause(request, clauses)
    reading = read_request(request)
    assert reading.plan() is None, request
    problem = reading.problem() or ""
    assert any(c.text.casefold() in problem.casefold() for c in UNKNOWN), (request, problem)


@FUZZ
@given(st.text(max_size=80))
def test_any_text_is_read_or_refused_without_an_error(request: str) -> None:
    reading = read_request(request)
    assert (reading.plan() is None) == (reading.problem() is not None)
