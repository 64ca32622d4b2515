"""Spreadsheet metrics: compare_table (its rules below) and compare_csv.

compare_table(result, expected, rules=[...]) passes when every rule does, in order:
- sheet_name: both workbooks have the same sheet names, in order;
- sheet_data {sheet_idx0, sheet_idx1, precision=4}: the two sheets as pandas reads them,
  rounded to `precision` digits, are equal;
- sheet_print {sheet_idx0, sheet_idx1, ignore_case}: the sheets as printed to CSV (the
  files BOOK-SHEET.csv beside each workbook, which the task's postconfig makes), trailing
  empty lines dropped, are equal;
- sheet_fuzzy {sheet_idx0, sheet_idx1, rules: [{range, type, ...}]}: cell by cell in the
  ranges, after normalization, trimming and dropping characters: includes, included_by,
  exact_match, or fuzzy_match above a threshold;
- freeze {sheet_idx0, sheet_idx1}: the same frozen panes; zoom {sheet_idx, method, ref}:
  the sheet's zoom matches the rule;
- check_cell {sheet_idx, coordinate, props: {value | a style: rule}}: the cell's stored
  value (or style) matches each rule;
- data_validation {sheet_idx, dv_props}: each validation of the sheet matches one of the
  listed property sets.
A sheet is named as OSWorld names it: 0 / "RI0" (the result's first), "RNName" (the
result's sheet Name), "EI0" / "ENName" (the expected workbook's). The other rule types
(sparkline, chart, style, row_props, col_props, filter, pivot_table) are not written here:
a task that uses one is "not runnable here" (check.py asks `unsupported`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roundhouse.osworld.metrics import table_rules
from roundhouse.osworld.metrics.cells import cell_style, cell_value
from roundhouse.osworld.metrics.rules import value_matches
from roundhouse.osworld.registry import Registry

SUPPORTED_RULES = frozenset(
    {"sheet_name", "sheet_data", "sheet_print", "sheet_fuzzy", "freeze", "zoom", "check_cell",
     "data_validation", "chart", "pivot_table", "style", "row_props", "col_props", "filter",
     "sparkline"}
)  # fmt: skip
# The rules table_rules.py judges (it loads with the first of them).
TABLE_RULES = frozenset({"chart", "pivot_table", "style", "row_props", "col_props", "filter",
                         "sparkline"})  # fmt: skip
ENCODINGS = ("utf-8", "utf-8-sig", "latin-1", "windows-1252", "gbk", "cp1251", "iso-8859-1")


def unsupported(options: dict[str, Any]) -> list[str]:
    rules = options.get("rules", [])
    return sorted(
        {f"compare_table rule {r.get('type')!r}" for r in rules}
        - {f"compare_table rule {t!r}" for t in SUPPORTED_RULES}
    )


def read_lines(path: str) -> list[str]:
    """A text file's lines, in the first encoding that reads it (as OSWorld tries them)."""
    for encoding in ENCODINGS:
        try:
            return Path(path).read_text(encoding=encoding).splitlines()
        except UnicodeDecodeError:
            continue
    return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()


METRICS: Registry[Callable[..., float]] = Registry()


@METRICS.add
def compare_csv(result: str | None, expected: str | list[str], **options: Any) -> float:
    """The result's lines equal one expected file's (stripped unless `strict`, case folded
    with `ignore_case`)."""
    if result is None:
        return 0.0
    try:
        ours = read_lines(result)
    except OSError:
        return 0.0
    for candidate in [expected] if isinstance(expected, str) else expected:
        try:
            theirs = read_lines(candidate)
        except OSError:
            continue
        a, b = ours, theirs
        if not options.get("strict", True):
            a, b = [s.strip() for s in a], [s.strip() for s in b]
        if options.get("ignore_case", False):
            a, b = [s.lower() for s in a], [s.lower() for s in b]
        if a == b:
            return 1.0
    return 0.0


# ---------------------------------------------------------------- compare_table


class _Books:
    """The two workbooks, each as openpyxl and pandas read it, and by path."""

    def __init__(self, result: str, expected: str | None) -> None:
        import openpyxl
        import pandas as pd

        self.paths = (result, expected)
        self.xl: tuple[Any, Any] = (openpyxl.load_workbook(result), None)
        self.pd: tuple[Any, Any] = (pd.ExcelFile(result), None)
        if expected is not None:
            self.xl = (self.xl[0], openpyxl.load_workbook(expected))
            self.pd = (self.pd[0], pd.ExcelFile(expected))
        self.names = (
            list(self.pd[0].sheet_names),
            list(self.pd[1].sheet_names) if self.pd[1] is not None else None,
        )

    def sheet(self, index: int | str) -> tuple[int, str]:
        """Which workbook (0 result, 1 expected) and which sheet name an index means."""
        if isinstance(index, int):
            names = self.names[0]
            return 0, names[index] if names and index < len(names) else ""
        kinds = {"RI": (0, True), "RN": (0, False), "EI": (1, True), "EN": (1, False)}
        if index[:2] not in kinds:
            raise ValueError("Unrecognized sheet index")
        book, by_number = kinds[index[:2]]
        if not by_number:
            return book, index[2:]
        try:
            return book, (self.names[book] or [])[int(index[2:])]
        except (IndexError, ValueError):
            return book, ""

    def frame(self, index: int | str) -> Any:
        import pandas as pd

        book, name = self.sheet(index)
        try:
            return pd.read_excel(self.pd[book], name)
        except Exception:  # noqa: BLE001 - a sheet that cannot be read is "no sheet", as in OSWorld
            return None

    def worksheet(self, index: int | str) -> Any:
        book, name = self.sheet(index)
        try:
            return self.xl[book][name]
        except Exception:  # noqa: BLE001 - likewise
            return None

    def printed(self, index: int | str) -> list[str] | None:
        book, name = self.sheet(index)
        path = self.paths[book]
        if path is None:
            return None
        try:
            lines = read_lines(f"{os.path.splitext(path)[0]}-{name}.csv")
        except OSError:
            return None
        stripped = [line.strip() for line in reversed(lines)]
        while stripped and not stripped[0]:
            stripped.pop(0)
        return stripped

    def path(self, index: int | str) -> tuple[str | None, str]:
        book, name = self.sheet(index)
        return self.paths[book], name

    def close(self) -> None:
        for frame in self.pd:
            if frame is not None:
                frame.close()
        for workbook in self.xl:
            if workbook is not None:
                workbook.close()


@METRICS.add
def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    if result is None or not os.path.exists(result):
        return 0.0
    try:
        _Books(result, None).close()
    except Exception:  # noqa: BLE001 - a result that does not open as a workbook scores 0
        return 0.0
    books = _Books(result, expected)
    try:
        return 1.0 if all(_rule(books, rule) for rule in options["rules"]) else 0.0
    finally:
        books.close()


def _rule(books: _Books, rule: dict[str, Any]) -> bool | None:
    """Whether the rule holds; None where OSWorld gives up on the whole table (0)."""
    kind = rule["type"]
    on_one_sheet = _ONE_SHEET_RULES.get(kind)
    if on_one_sheet is not None:
        sheet = books.worksheet(rule["sheet_idx"])
        return None if sheet is None else on_one_sheet(sheet, rule)
    if kind == "sheet_name":
        return books.names[0] == books.names[1]
    if kind == "sheet_data":
        digits = rule.get("precision", 4)
        first = books.frame(rule["sheet_idx0"])
        if first is None:
            return None
        second = books.frame(rule["sheet_idx1"])
        return bool(first.round(digits).equals(second.round(digits)))
    if kind == "sheet_print":
        first_lines = books.printed(rule["sheet_idx0"])
        if first_lines is None:
            return None
        second_lines = books.printed(rule["sheet_idx1"])
        if rule.get("ignore_case", False):
            first_lines = [line.lower() for line in first_lines]
            second_lines = [line.lower() for line in second_lines or []]
        return first_lines == second_lines
    if kind == "sheet_fuzzy":
        return _fuzzy(books, rule)
    if kind == "freeze":
        first_sheet = books.worksheet(rule["sheet_idx0"])
        if first_sheet is None:
            return None
        second_sheet = books.worksheet(rule["sheet_idx1"])
        return bool(first_sheet.freeze_panes == second_sheet.freeze_panes)
    if kind == "check_cell":
        return _check_cell(books, rule)
    if kind in TABLE_RULES:
        return _described(books, rule)
    raise NotImplementedError(f"Unimplemented sheet check: {kind}")


def _described(books: _Books, rule: dict[str, Any]) -> bool:
    """The two sheets' descriptions (table_rules.py) are equal."""
    kind = rule["type"]
    options = {k: v for k, v in rule.items() if k not in ("sheet_idx0", "sheet_idx1")}
    seen: list[Any] = []
    for index in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.sheet(index)
        path = books.paths[book]
        if kind == "sparkline":
            seen.append(table_rules.sparklines(path, name))
            continue
        sheet = table_rules.sheet_of(books.xl[book], name)
        if sheet is None:
            seen.append({})
        elif kind == "style":
            seen.append(table_rules.styles(sheet, name, path, **options))
        elif kind in ("row_props", "col_props"):
            obj = "row" if kind == "row_props" else "column"
            seen.append(table_rules.dimensions(sheet, obj, **options))
        else:
            read = {"chart": table_rules.charts, "pivot_table": table_rules.pivots,
                    "filter": table_rules.filters}[kind]  # fmt: skip
            seen.append(read(sheet, **options))
    return bool(seen[0] == seen[1])


def _zoom(sheet: Any, rule: dict[str, Any]) -> bool:
    return value_matches(sheet.sheet_view.zoomScale or 100.0, rule)


def _data_validation(sheet: Any, rule: dict[str, Any]) -> bool:
    validations = sheet.data_validations.dataValidation
    if len(validations) < len(rule["dv_props"]):
        return False
    return all(
        any(
            all(value_matches(getattr(dv, key), how) for key, how in props.items())
            for props in rule["dv_props"]
        )
        for dv in validations
    )


# The rules that judge the one worksheet `sheet_idx` names (an openpyxl sheet), by kind. A
# sheet that is not there gives up on the whole table, as OSWorld's does.
_ONE_SHEET_RULES: dict[str, Callable[[Any, dict[str, Any]], bool]] = {
    "zoom": _zoom,
    "data_validation": _data_validation,
}


def _fuzzy(books: _Books, rule: dict[str, Any]) -> bool:
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import MultiCellRange
    from rapidfuzz import fuzz

    first, second = books.path(rule["sheet_idx0"]), books.path(rule["sheet_idx1"])
    for part in rule["rules"]:
        for cells in MultiCellRange(part["range"]):
            for row, column in cells.cells:
                where = f"{get_column_letter(column)}{row}"
                one = str(cell_value(first[0], first[1], where))
                two = str(cell_value(second[0], second[1], where))
                for old, new in part.get("normalization", []):
                    one, two = one.replace(old, new), two.replace(old, new)
                if "trim_leadings" in part:
                    one, two = one.lstrip(part["trim_leadings"]), two.lstrip(part["trim_leadings"])
                if "trim_trailings" in part:
                    trail = part["trim_trailings"]
                    one, two = one.rstrip(trail), two.rstrip(trail)
                if "ignore_chars" in part:
                    drop = set(part["ignore_chars"])
                    one = "".join(ch for ch in one if ch not in drop)
                    two = "".join(ch for ch in two if ch not in drop)
                if part.get("ignore_case", False):
                    one, two = one.lower(), two.lower()
                how = part["type"]
                if how == "includes":
                    ok = two in one
                elif how == "included_by":
                    ok = one in two
                elif how == "fuzzy_match":
                    ok = fuzz.ratio(one, two) >= part.get("threshold", 85.0)
                elif how == "exact_match":
                    ok = one == two
                else:
                    raise NotImplementedError(f"sheet_fuzzy rule {how!r}")
                if not ok:
                    return False
    return True


def _check_cell(books: _Books, rule: dict[str, Any]) -> bool | None:
    try:
        sheet = books.worksheet(rule["sheet_idx"])
        if sheet is None:
            return None
        cell = sheet[rule["coordinate"]]
        holds = True
        for prop, how in rule["props"].items():
            if prop == "value":
                try:
                    path, name = books.path(rule["sheet_idx"])
                    value = cell_value(path, name, rule["coordinate"])
                except Exception:  # noqa: BLE001 - an unreadable value is None, as OSWorld's
                    value = None
            else:
                try:
                    value = cell_style(prop, cell)
                except Exception:  # noqa: BLE001 - likewise for a style
                    value = None
            holds = holds and value_matches(value, how)
        return holds
    except Exception:  # noqa: BLE001 - OSWorld gives a check it cannot make 0
        return None


@METRICS.add
def compare_conference_city_in_order(path: str, expected: dict[str, Any]) -> float:
    """C2:C22 of the active sheet holds, row by row, the expected city (or one of a list
    of them); any failure to read or compare scores 0, as in OSWorld's."""
    import openpyxl

    cities = expected["expected"]
    sheet: Any = openpyxl.load_workbook(path).active
    found = [cell.value for row in sheet["C2:C22"] for cell in row]
    try:
        for index, value in enumerate(found):
            wanted = cities[index]
            if isinstance(wanted, str):
                if wanted not in value:
                    return 0.0
            elif isinstance(wanted, list):
                if not any(option in value for option in wanted):
                    return 0.0
            else:
                raise TypeError("Expected city should be a string or a list of strings")
    except Exception:  # noqa: BLE001 - OSWorld's scores any failure here 0
        return 0.0
    return 1.0
