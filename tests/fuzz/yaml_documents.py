"""Strategies for hostile YAML files: random bytes, random text, and documents near the
valid ones (dumped by PyYAML, then mutated with tags, anchors, dates and huge numbers)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st

from tests.fuzz.common import HOSTILE_PIECES, HUGE_DIGITS, json_values, mutate, scalars

# Pieces that reach PyYAML's constructors with something they cannot build.
YAML_PIECES = [
    "!!bool maybe",
    "!!int x",
    "!!int 0b",
    "!!float x",
    "!!timestamp soon",
    "!!binary @@@",
    "!!set ",
    "!!omap ",
    "!!python/object:os.system ",
    "!!str ",
    "2001-13-45",
    "2001-02-29 25:61:61",
    "&a ",
    "*a",
    "*missing",
    "<<: ",
    "<<: *a",
    "? ",
    "- ",
    ": ",
    "\t",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "---\n",
    "...\n",
    ".nan",
    ".inf",
    "-.inf",
    "0x" + "f" * 4000,
    "0o" + "7" * 5000,
    HUGE_DIGITS,
    "[" * 700,
    "- " * 600,
    "a: " * 600,
    "\x00",
    "\x85",
]


# Nesting past ~500 makes PyYAML's composer recurse out, and PyYAML's scanner takes time
# quadratic in the depth (over a second a file at 2000): the strategies stop at 700.
SHALLOW_PIECES = [
    piece for piece in YAML_PIECES + HOSTILE_PIECES if piece.count("[") + piece.count("{") <= 700
]


def encode(text: str) -> bytes:
    """UTF-8, except that lone surrogates become the bytes that are not UTF-8."""
    return text.encode("utf-8", "surrogatepass")


def dump(value: Any) -> str:
    """YAML for value; libyaml's emitter when it can (PyYAML's own spends most of a test
    writing), PyYAML's for what libyaml refuses (lone surrogates, which it escapes)."""
    for dumper in (getattr(yaml, "CSafeDumper", yaml.SafeDumper), yaml.SafeDumper):
        try:
            return yaml.dump(value, Dumper=dumper, allow_unicode=True, sort_keys=False)
        except (yaml.YAMLError, UnicodeEncodeError):
            continue
    return repr(value)  # nothing writes it: the text alone then


@st.composite
def mutated_documents(draw: st.DrawFn, near: st.SearchStrategy[dict[str, Any]]) -> str:
    text = dump(draw(near))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        where = draw(st.integers(min_value=0, max_value=len(text)))
        text = text[:where] + draw(st.sampled_from(SHALLOW_PIECES)) + text[where:]
    return mutate(draw, text, SHALLOW_PIECES)


def documents(near: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """Files: random bytes, random text, hostile structures, and `near` dumped and mutated."""
    return st.one_of(
        near.map(dump).map(encode),
        mutated_documents(near).map(encode),
        st.binary(max_size=200),
        st.text(max_size=200).map(encode),
        json_values.map(dump).map(encode),
        st.builds(
            lambda key, depth, piece: encode(f"{key}: {piece * depth}"),
            st.sampled_from(["id", "checks", "max_step", "openai"]),
            st.integers(min_value=1, max_value=700),
            st.sampled_from(["[", "{a: ", "- "]),
        ),
        st.sampled_from(SHALLOW_PIECES).map(encode),
    )


def chance(draw: st.DrawFn, tenths: int) -> bool:
    return draw(st.integers(min_value=0, max_value=9)) < tenths


@st.composite
def near(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    """A document with the keys of `fields`, mostly holding what each field's strategy
    draws (plausible values, valid or nearly so), sometimes anything, a key sometimes
    missing, an unknown key sometimes added."""
    document: dict[Any, Any] = {}
    for key, plausible in fields.items():
        if chance(draw, 1):
            continue
        document[key] = draw(json_values if chance(draw, 1) else plausible)
    if chance(draw, 1):
        document.update(draw(st.dictionaries(scalars, json_values, max_size=2)))
    return document
