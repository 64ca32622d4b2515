"""Thunderbird's metrics: its preferences (prefs.js), its message filters
(msgFilterRules.dat) and the messages of a folder (an mbox file).

- check_thunderbird_prefs(prefs.js, {expect: {key: rule}, unexpect: {key: rule}}): each
  `user_pref("key", value);` line's value (JSON) matches its expect rule, and none matches
  an unexpect rule (rules.py's language); an expected key that is absent fails.
- check_thunderbird_filter(rules file, {expect: [record], unexpect: [record]}): each expected
  record (name, enabled, type, action, actionValue, condition: its clauses) is held by some
  filter, and no unexpected one by any.
- check_thunderbird_folder(result, reference, **options): as OSWorld's, which keeps only
  the empty parts of a folder's text split at "FROM - " (so any two folders compare equal).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.metrics.rules import value_matches
from roundhouse.osworld.registry import Registry

METRICS: Registry[Callable[..., float]] = Registry()
PREF = re.compile(r'^user_pref\("(?P<key>(?:[^"]|\\")+)\", (?P<val>.+)\);$')
CLAUSE = re.compile(
    r"\b(?:AND|OR) \((?:[\w ]+),(?:[\w ']+),(?:\"(?:(?:[^\"]|\")+)\"|(?:[^)]+))\)|\bALL\b"
)
FILTER_KEYS = {"name=": "name", "enabled=": "enabled", "type=": "type", "action=": "action",
               "actionValue=": "actionValue"}  # fmt: skip


@METRICS.add
def check_thunderbird_prefs(result: str | None, rule: dict[str, Any]) -> float:
    if result is None:
        return 0.0
    expect, unexpect = rule.get("expect", {}), rule.get("unexpect", {})
    held = dict.fromkeys(expect, False)
    clean = True
    with open(result) as prefs:
        for line in prefs:
            found = PREF.match(line.strip())
            if found is None:
                continue
            key, value = found.group("key"), json.loads(found.group("val"))
            if key in expect:
                held[key] = value_matches(value, expect[key])
            elif key in unexpect:
                clean = clean and not value_matches(value, unexpect[key])
    return float(all(held.values()) and clean)


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\")


def read_filters(path: str) -> list[dict[str, Any]]:
    """msgFilterRules.dat's filters: each key's quoted value; a filter counts once its
    condition line is read."""
    filters: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    with open(path) as rules:
        for line in rules:
            if line.startswith("name="):
                current = {"name": _unescape(line[6:-2])}
                continue
            key = next((k for k in FILTER_KEYS if line.startswith(k)), None)
            if key is not None:
                current[FILTER_KEYS[key]] = _unescape(line[len(key) + 1 : -2])
            elif line.startswith("condition="):
                current["condition"] = CLAUSE.findall(_unescape(line[11:-2]))
                filters.append(current)
    return filters


def _holds(pattern: dict[str, Any], item: dict[str, Any]) -> bool:
    return all(key in item and item[key] == value for key, value in pattern.items())


@METRICS.add
def check_thunderbird_filter(result: str | None, rules: dict[str, Any]) -> float:
    if result is None:
        return 0.0
    filters = read_filters(result)
    expect, unexpect = rules.get("expect", []), rules.get("unexpect", [])
    held = [any(_holds(wanted, f) for f in filters) for wanted in expect]
    clean = not any(_holds(unwanted, f) for f in filters for unwanted in unexpect)
    return float(all(held) and clean)


@METRICS.add
def check_thunderbird_folder(result: Any, reference: Any, **options: Any) -> float:
    def messages(path: str) -> str:
        with open(path) as folder:
            text = folder.read().strip()
        kept: list[str] | set[str] = []
        for mail in text.split("FROM - "):
            if mail.strip():
                continue  # (OSWorld's test, as it stands: only empty parts are kept)
            if options.get("remove_deleted", True) and re.search(
                r"X-Mozilla-Status: 000[89]", mail
            ):
                continue
            assert isinstance(kept, list)
            kept.append("FROM - " + _normalise(mail, options))
        if options.get("remove_duplicate", True):
            kept = set(kept)
        return "\n".join(sorted(kept))

    if not isinstance(reference, list):
        result, reference = [result], [reference]
    for pred, gold in zip(result, reference, strict=False):
        if pred is None:
            return 0.0
        if messages(pred) != messages(gold):
            return 0.0
    return 1.0


def _normalise(mail: str, options: dict[str, Any]) -> str:
    if options.get("ignore_status", False):
        mail = re.sub(r"X-Mozilla-Status\d?:[\s\d]+", "", mail)
    if options.get("ignore_keys", False):
        mail = re.sub(r"(X-Mozilla-Keys:[^\n]*?)\n(MIME-Version)", r"\2", mail)
    return mail.strip()
