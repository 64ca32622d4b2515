"""References to what a step printed: how a recorded answer replays on any machine.

An answer recorded on one machine must not carry that machine's facts (its kernel, hostname,
disk and memory sizes, the date): replayed on another, it would state them as facts there,
and the checks would rightly fail it. So a recorded answer says where a fact came from
instead of what it was:

    {{step 2 line 1}}          the whole first line of what step 2 printed
    {{step 2 line 1 word 4}}   the fourth word of that line

Steps are numbered as the agent's prompt numbers them ("Your steps so far: 1. ..."). On
replay, each reference is filled from what the same step printed in the run being replayed,
so the answer states the facts of the machine it runs on.

A model that knows what it quotes says so exactly: the offline planner builds its answers
from `Quote`s (`said`). For any other model the recorder finds the quotes by matching
(`hold`): lines and words of the outputs that carry a digit, or that are one of the
machine's names; where the same text stands at several places, the most recent step and
then the first place in it is taken.

Pure functions: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from roundhouse.models.observation import (
    AppObservation,
    HostObservation,
    PastStep,
    ShellObservation,
)

REFERENCE = re.compile(r"\{\{step (\d+) line (\d+)(?: word (\d+))?\}\}")
# Punctuation that ends a sentence or wraps a value, not part of the value: "6.1.0." is 6.1.0.
_WRAPPING = "\"'`.,;:!?()[]{}<>"


# A model that knows what its result quotes gives it held, under this key of Completion.extra.
HELD_RESULT = "held_result"


class UnfillableReference(ValueError):
    """A recorded reference names an output this run does not have."""


def step_outputs(observation: object) -> list[str]:
    """What each of the agent's earlier steps printed, numbered as its prompt numbers them."""
    if not isinstance(observation, ShellObservation | HostObservation | AppObservation):
        return []  # a judge's request: no steps of its own
    return [printed(step) for step in observation.history]


def printed(step: PastStep) -> str:
    """What a step printed: a command's stdout, a tool's text or value (as JSON), or the
    error it failed with."""
    output = step.output
    if output is None:
        return step.error or ""
    if isinstance(output, dict) and "stdout" in output:
        return str(output["stdout"])
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False)


def words(line: str) -> list[str]:
    return [word.strip(_WRAPPING) for word in line.split()]


# --- quoting exactly (a model that knows what it quotes) ---------------------------------


@dataclass(frozen=True)
class Quote:
    value: str
    reference: str


@dataclass(frozen=True)
class Said:
    """An answer as text, and as the same text with its quotes held as references."""

    text: str
    held: str


def said(*parts: str | Quote) -> Said:
    return Said(
        "".join(p.value if isinstance(p, Quote) else p for p in parts),
        "".join(p.reference if isinstance(p, Quote) else p for p in parts),
    )


@dataclass(frozen=True)
class StepOutput:
    """What one step printed, with quotes that know where they came from."""

    step: int  # as the prompt numbers it
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def line(self, number: int) -> Quote:
        """Line `number` (1-based; a negative one counts from the end), stripped."""
        at = self._at(number)
        return Quote(self.lines[at - 1].strip(), f"{{{{step {self.step} line {at}}}}}")

    def word(self, number: int, index: int) -> Quote:
        """Word `index` (1-based) of line `number` (a negative one counts from the end)."""
        at = self._at(number)
        return Quote(
            words(self.lines[at - 1])[index - 1],
            f"{{{{step {self.step} line {at} word {index}}}}}",
        )

    def every_line(self) -> list[str | Quote]:
        """Every line, as quotes joined by newlines (trailing blank lines dropped)."""
        count = len(self.text.rstrip().splitlines())
        return joined([self.line(n) for n in range(1, count + 1)], "\n")

    def _at(self, number: int) -> int:
        return number if number > 0 else len(self.lines) + number + 1


def joined(quotes: list[Quote], separator: str) -> list[str | Quote]:
    """Quotes with `separator` between them, as parts of said()."""
    parts: list[str | Quote] = []
    for index, quote in enumerate(quotes):
        parts += [separator, quote] if index else [quote]
    return parts


# --- quoting found by matching (any other model) --------------------------------------------


def hold(text: str, outputs: Sequence[str], names: Iterable[str] = ()) -> str:
    """`text` with every volatile fragment it quotes from `outputs` replaced by a reference:
    whole lines first (longest first), then single words."""
    known = frozenset(names)
    references: list[str] = []
    # A held fragment stands as a sentinel until the end, so that a shorter fragment never
    # matches inside a reference already made (the "2" of "{{step 2 line 1}}").
    for table in _quotable(outputs, known):
        for fragment in sorted(table, key=len, reverse=True):
            sentinel = f"\x00{chr(0xE000 + len(references))}\x00"
            text, count = re.subn(alone(fragment), sentinel, text)
            if count:
                references.append(table[fragment])
    return _SENTINEL.sub(lambda m: references[ord(m.group(1)) - 0xE000], text)


_SENTINEL = re.compile("\x00(.)\x00")


def _quotable(outputs: Sequence[str], names: frozenset[str]) -> tuple[dict[str, str], ...]:
    """What an answer may quote of the outputs, with its reference: whole lines, and words;
    the most recent step first, as an answer most likely quotes what it saw last."""
    lines: dict[str, str] = {}
    single: dict[str, str] = {}
    for step in range(len(outputs), 0, -1):
        for number, line in enumerate(outputs[step - 1].splitlines(), 1):
            stripped = line.strip()
            if len(stripped) > 1 and _volatile(stripped, names):
                lines.setdefault(stripped, f"{{{{step {step} line {number}}}}}")
            for index, word in enumerate(words(line), 1):
                if word and _volatile(word, names):
                    single.setdefault(word, f"{{{{step {step} line {number} word {index}}}}}")
    return lines, single


def _volatile(fragment: str, names: frozenset[str]) -> bool:
    """What varies between machines: a number in it, or one of the machine's names."""
    return any(ch.isdigit() for ch in fragment) or fragment in names


def alone(fragment: str) -> str:
    """A regular expression for `fragment` where no word character touches it."""
    return rf"(?<!\w){re.escape(fragment)}(?!\w)"


# --- replaying -------------------------------------------------------------------------------


def fill(text: str, outputs: Sequence[str], *, escape: bool = False) -> str:
    """`text` with each reference replaced by what that step printed in this run; `escape`
    writes the value as it stands inside a JSON string (for an answer kept as raw text)."""

    def one(match: re.Match[str]) -> str:
        value = _referenced(match, outputs)
        return json.dumps(value, ensure_ascii=False)[1:-1] if escape else value

    return REFERENCE.sub(one, text)


def _referenced(match: re.Match[str], outputs: Sequence[str]) -> str:
    step, line = int(match.group(1)), int(match.group(2))
    word = int(match.group(3)) if match.group(3) else None
    if not 1 <= step <= len(outputs):
        raise UnfillableReference(
            f"{match.group(0)} refers to step {step}, but this run has taken "
            f"{len(outputs)} step(s) so far"
        )
    lines = outputs[step - 1].splitlines()
    if not 1 <= line <= len(lines):
        raise UnfillableReference(
            f"{match.group(0)} refers to line {line}, but step {step} printed "
            f"{len(lines)} line(s) in this run"
        )
    if word is None:
        return lines[line - 1].strip()
    found = words(lines[line - 1])
    if not 1 <= word <= len(found):
        raise UnfillableReference(
            f"{match.group(0)} refers to word {word}, but line {line} of step {step} has "
            f"{len(found)} word(s) in this run: {lines[line - 1].strip()!r}"
        )
    return found[word - 1]


def fill_answer(answer: str, outputs: Sequence[str]) -> str:
    """fill() on every string of an answer given as JSON, or on the raw text."""
    if REFERENCE.search(answer) is None:
        return answer
    try:
        value = json.loads(answer)
    except json.JSONDecodeError:
        # References only ever stand where a fact stood: inside a JSON string.
        return fill(answer, outputs, escape=True)
    return json.dumps(map_strings(value, lambda text: fill(text, outputs)), ensure_ascii=False)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (parsed JSON) with `change` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: map_strings(item, change) for key, item in value.items()}
    return value
