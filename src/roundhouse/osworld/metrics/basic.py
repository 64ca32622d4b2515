"""Metrics over text, lists and JSON, and the os domain's: what most of OSWorld's os tasks
and many of the others score with."""

from __future__ import annotations

import ast
import csv
import difflib
import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roundhouse.osworld.metrics.rules import value_matches
from roundhouse.osworld.namespaces import NS
from roundhouse.osworld.registry import Registry

ONE, ZERO = 1.0, 0.0


def _score(ok: bool) -> float:
    return ONE if ok else ZERO


METRICS: Registry[Callable[..., float]] = Registry()


@METRICS.add
def exact_match(result: Any, rules: dict[str, Any]) -> float:
    return _score(result == rules["expected"])


@METRICS.add
def match_in_list(result: Any, rules: dict[str, Any]) -> float:
    return _score(result in rules["expected"])


@METRICS.add
def is_in_list(result: Any, rules: dict[str, Any]) -> float:
    return _score(rules["expected"] in result)


@METRICS.add
def literal_match(result: Any, expected: Any, **options: Any) -> float:
    kind = options.get("type", "str")
    fold: Callable[[str], str] = str.lower if options.get("ignore_case", False) else str
    if kind == "str":
        return _score(fold(str(result)) == fold(str(expected)))
    if kind == "list":
        if not isinstance(result, list | tuple) or not isinstance(expected, list | tuple):
            return ZERO
        if len(result) != len(expected):
            return ZERO
        return _score([fold(str(r)) for r in result] == [fold(str(e)) for e in expected])
    raise NotImplementedError(f"literal_match of type {kind!r}")


@METRICS.add
def check_include_exclude(result: str | None, rules: dict[str, list[str]]) -> float:
    if result is None:
        return ZERO
    wanted = all(text in result for text in rules.get("include", []))
    unwanted = any(text in result for text in rules.get("exclude", []))
    return _score(wanted and not unwanted)


@METRICS.add
def check_list(result: str | None, rules: dict[str, list[str]]) -> float:
    """Every `expect` pattern found on some line of the file, no `unexpect` on any."""
    if result is None:
        return ZERO
    expect = [re.compile(p) for p in rules.get("expect", [])]
    unexpect = [re.compile(p) for p in rules.get("unexpect", [])]
    lines = Path(result).read_text().splitlines(keepends=True)
    found = all(any(p.search(line) for line in lines) for p in expect)
    clean = not any(p.search(line) for line in lines for p in unexpect)
    return _score(found and clean)


@METRICS.add
def check_csv(result: str | None, rules: dict[str, list[dict[str, str]]]) -> float:
    """Every `expect` record matched by some row, no `unexpect` record by any."""
    if result is None:
        return ZERO
    with open(result, newline="") as handle:
        rows = list(csv.DictReader(handle))

    def matched(pattern: dict[str, str], row: dict[str, str]) -> bool:
        return all(key in row and row[key] == value for key, value in pattern.items())

    found = all(any(matched(p, row) for row in rows) for p in rules.get("expect", []))
    clean = not any(matched(p, row) for row in rows for p in rules.get("unexpect", []))
    return _score(found and clean)


@METRICS.add
def file_contains(file_path: str | None, config: dict[str, Any]) -> float:
    if not file_path:
        return ZERO
    try:
        text = Path(file_path).read_text()
        return _score(all(part in text for part in config["expected"]))
    except (OSError, UnicodeDecodeError, KeyError, TypeError):
        return ZERO


TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")


@METRICS.add
def check_line_number(file_path: str | None, line_number: dict[str, Any]) -> float:
    """How many lines hold a time of day (hh:mm:ss) equals the expected count."""
    if file_path is None or not Path(file_path).is_file():
        return ZERO
    try:
        with open(file_path) as handle:
            count = sum(1 for line in handle if TIME_OF_DAY.search(line))
        return _score(count == int(line_number["expected"]))
    except (OSError, UnicodeDecodeError, KeyError, TypeError, ValueError):
        return ZERO


@METRICS.add
def diff_text_file(result: str | None, expect: str) -> float:
    if result is None:
        return ZERO
    ours = Path(result).read_text().splitlines()
    theirs = Path(expect).read_text().splitlines()
    return difflib.SequenceMatcher(a=ours, b=theirs).ratio()


@METRICS.add
def compare_text_file(actual: str | None, expected: str | None, **options: Any) -> float:
    if not actual or not expected:
        return ZERO
    ours, theirs = Path(actual).read_text(), Path(expected).read_text()
    if options.get("ignore_blanks", False):
        ours, theirs = _squash(ours), _squash(theirs)
    if options.get("ignore_case", False):
        ours, theirs = ours.lower(), theirs.lower()
    return _score(ours == theirs)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", text)).strip()


# ---------------------------------------------------------------- JSON


@METRICS.add
def check_json(result: str | None, rules: dict[str, Any], is_yaml: bool = False) -> float:
    """Each `expect` rule's key path leads to a value the rule matches; no `unexpect` rule's
    does. A file that is missing or does not parse scores 0."""
    if result is None or not Path(result).exists():
        return ZERO
    try:
        text = Path(result).read_text(encoding="utf-8")
        if is_yaml:
            import yaml

            data = yaml.safe_load(text)
            if data is None:
                return ZERO
        else:
            data = json.loads(text)
    except Exception:  # noqa: BLE001 - OSWorld scores any unreadable file 0; so do we
        return ZERO
    try:
        for rule in rules.get("expect", {}):
            value = _at(data, rule["key"])
            if value is _MISSING or not value_matches(value, rule):
                return ZERO
        for rule in rules.get("unexpect", {}):
            value = _at(data, rule["key"])
            if value_matches(None if value is _MISSING else value, rule):
                return ZERO
    except Exception:  # noqa: BLE001 - a rule that cannot be applied scores 0, as OSWorld's
        return ZERO
    return ONE


_MISSING = object()


def _at(data: Any, keys: list[Any]) -> Any:
    """The value at the path of keys into nested JSON, or _MISSING where it stops short."""
    value = data
    for key in keys:
        try:
            value = value[key]
        except (KeyError, TypeError):  # an index past the end raises: scored 0 by the caller
            return _MISSING
    return value


@METRICS.add
def check_direct_json_object(result: Any, rules: dict[str, Any]) -> float:
    """The result (a dict, or JSON text with ' for ") holds the expected values: equal ones,
    or with `expect_in_result` an expected string inside the result's, or one of an
    expected list equal to (or in) the result's."""
    if isinstance(result, str):
        result = json.loads(result.strip().replace("'", '"'))
    if result is None:
        return ZERO
    try:
        expected = rules.get("expected", {})
        if expected and any(value == "__EVALUATION_FAILED__" for value in expected.values()):
            return ZERO
        expected = rules["expected"]
        if not rules.get("expect_in_result", False):
            for key, want in expected.items():
                if expected.get("ignore_list_order", False):
                    if sorted(want) != sorted(result.get(key)):
                        return ZERO
                elif want != result.get(key):
                    return ZERO
            return ONE
        for key, want in expected.items():
            have = result.get(key)
            if isinstance(want, list):
                if not any(
                    (isinstance(have, list) and option in have)
                    or (isinstance(have, str) and option == have)
                    for option in want
                ):
                    return ZERO
            elif isinstance(want, str):
                if want not in have:
                    return ZERO
            else:
                return ZERO
        return ONE
    except Exception:  # noqa: BLE001 - OSWorld scores a result it cannot compare 0
        return ZERO


# ---------------------------------------------------------------- the os domain


@METRICS.add
def check_gnome_favorite_apps(apps_str: str, rule: dict[str, Any]) -> float:
    """gsettings' favourite apps (a Python list literal) are exactly the expected ones."""
    apps = ast.literal_eval(apps_str)
    expected = rule["expected"]
    return _score(len(apps) == len(expected) and set(apps) == set(expected))


@METRICS.add
def is_utc_0(timedatectl_output: str) -> float:
    """timedatectl's fourth line ("Time zone: ... +0000)") says the zone is UTC+0."""
    return _score(timedatectl_output.split("\n")[3].endswith("+0000)"))


@METRICS.add
def check_text_enlarged(scaling_factor_str: str) -> float:
    return _score(float(scaling_factor_str) > 1.0)


@METRICS.add
def check_moved_jpgs(directory_list: dict[str, Any], rule: dict[str, Any]) -> float:
    names = [node["name"] for node in directory_list["children"]]
    expected = rule["expected"]
    return _score(len(names) == len(expected) and set(names) == set(expected))


@METRICS.add
def is_in_vm_clickboard(config: dict[str, Any], terminal_output: str) -> float:
    expected = config["expected"]
    if not isinstance(expected, list):
        return _score(expected in terminal_output)
    return _score(all(item in terminal_output for item in expected))


@METRICS.add
def run_sqlite3(result: str, rules: dict[str, Any]) -> float:
    connection = sqlite3.connect(result)
    try:
        row = connection.execute(rules["sql"]).fetchone()
    finally:
        connection.close()
    return float(row[0] or 0)


# ---------------------------------------------------------------- the accessibility tree


@METRICS.add
def check_accessibility_tree(
    result: str, rules: list[dict[str, Any]], osname: str = "ubuntu"
) -> float:
    """Each rule's elements (an XPath, or CSS selectors) exist, and hold the rule's text
    (exactly, or scored by fuzzy ratio); the scores multiply."""
    import lxml.etree
    from lxml.cssselect import CSSSelector
    from rapidfuzz import fuzz

    if osname != "ubuntu":
        raise NotImplementedError(f"accessibility trees of {osname}")
    tree = lxml.etree.fromstring(result.encode())
    total = 1.0
    for rule in rules:
        if "xpath" in rule:
            elements = tree.xpath(rule["xpath"], namespaces=NS)
        elif "selectors" in rule:
            elements = CSSSelector(", ".join(rule["selectors"]), namespaces=NS)(tree)
        else:
            raise ValueError("At least one of xpath and selectors is required")
        if len(elements) == 0:
            return ZERO
        if "text" in rule:
            want, exact = rule["text"], rule["exact"]
            scores = [
                float(want == (e.text or None))
                if exact
                else fuzz.ratio(want, e.text or None) / 100.0  # type: ignore[arg-type]
                for e in elements
            ]
            total *= max([0.0, *scores])
    return float(total)
