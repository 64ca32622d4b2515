"""compare_table's rules that compare what openpyxl reads of two sheets beyond their cells:
each loads the same description of both sheets and holds when they are equal, as OSWorld's
rule of the same type does.

- chart {chart_props}: the sheet's charts by their series ("values,categories;..."), each
  with the properties asked (title, legend, anchor, width, height, type, direction, x/y/z
  axis titles);
- pivot_table {pivot_props}: the pivot tables by their source, with the properties asked
  (name, totals, empty rows and columns, headers, location, selection and filter, row,
  column and data fields);
- style {props}: per cell, the styles asked (style names as check_cell's), a cell that a
  conditional format's rule holds for taking the format's style (its formulas evaluated
  with `formulas`, as OSWorld's);
- row_props / col_props {props}: each row's (column's) dimension properties asked;
- filter: the autofilter's range, its columns' filters and its sort state;
- sparkline: the sparklines by their cells (read from the sheet's XML).
A sheet that is not there gives an empty description.
"""

from __future__ import annotations

import itertools
import logging
import re
import zipfile
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.metrics.cells import cell_style, cell_value

log = logging.getLogger(__name__)
NS = {
    "oo": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "x14": "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main",
    "xm": "http://schemas.microsoft.com/office/excel/2006/main",
}
ABSOLUTE = re.compile(
    r"\$(?P<col1>[A-Z]{1,3})\$(?P<row1>\d+)(?::\$(?P<col2>[A-Z]{1,3})\$(?P<row2>\d+))?"
)


def sheet_of(book: Any, name: str) -> Any:
    """The workbook's sheet of that name; None where it has none (every reader of it then
    describes it as nothing: {})."""
    try:
        return book[name]
    except KeyError:
        return None


def _title(holder: Any) -> Any:
    try:
        return holder.title.tx.rich.p[0].r[0].t
    except Exception:  # noqa: BLE001 - no title (or not a rich one) is None, as OSWorld's
        return None


def charts(sheet: Any, **options: Any) -> dict[str, Any]:
    wanted = set(options.get("chart_props", []))
    found: dict[str, Any] = {}
    for chart in sheet._charts:
        key = ";".join(f"{_series_ref(s.val)},{_series_ref(s.cat)}" for s in chart.series)
        info: dict[str, Any] = {}
        if "title" in wanted:
            info["title"] = _title(chart)
        if "legend" in wanted:
            info["legend"] = chart.legend.position if chart.legend is not None else None
        if "anchor" in wanted:
            anchor = chart.anchor  # (OSWorld's list: the end row where the start row goes)
            info["anchor"] = [anchor.editAs, anchor._from.col, anchor.to.row, anchor.to.col,
                              anchor.to.row]  # fmt: skip
        for prop, attribute in (("width", "width"), ("height", "height"), ("type", "tagname"),
                                ("direction", "barDir")):  # fmt: skip
            if prop in wanted:
                info[prop] = getattr(chart, attribute)
        for axis in ("x", "y", "z"):
            if f"{axis}title" in wanted:
                info[f"{axis}title"] = _title(getattr(chart, f"{axis}_axis"))
        found[key] = info
    return found


def _series_ref(data: Any) -> str:
    """A series' values or categories as OSWorld names them: the number or string
    reference's formula ("" when it has neither)."""
    if hasattr(data, "numRef") and hasattr(data.numRef, "f"):
        return str(data.numRef.f)
    if hasattr(data, "strRef") and hasattr(data.strRef, "f"):
        return str(data.strRef.f)
    return ""


def pivots(sheet: Any, **options: Any) -> dict[str, Any]:
    from openpyxl.utils.cell import coordinate_to_tuple

    wanted = set(options.get("pivot_props", []))
    found: dict[str, Any] = {}
    for pivot in sheet._pivots:
        raw = [[(i.h, i.x) for i in field.items if i.x is not None] for field in pivot.pivotFields]
        trimmed = list(itertools.dropwhile(lambda r: len(r) == 0, raw))
        left = len(raw) - len(trimmed)
        selection = list(itertools.dropwhile(lambda r: len(r) == 0, reversed(trimmed)))[::-1]
        right = len(trimmed) - len(selection)
        source = pivot.cache.cacheSource
        first, last = source.worksheetSource.ref.split(":")
        start, end = coordinate_to_tuple(first), coordinate_to_tuple(last)
        key = (f"{source.type};{(start[0], start[1] + left)}:{(end[0], end[1] - right)};"
               f"{source.worksheetSource.sheet}")  # fmt: skip
        info: dict[str, Any] = {}
        for prop, attribute in (
            ("name", "name"),
            ("show_total", "visualTotals"),
            ("show_empty_row", "showEmptyRow"),
            ("show_empty_col", "showEmptyCol"),
            ("show_headers", "showHeaders"),
            ("location", "location"),
        ):
            if prop in wanted:
                info[prop] = getattr(pivot, attribute)
        if "filter" in wanted or "selection" in wanted:
            info["selection"] = selection if "ordered" in wanted else [set(r) for r in selection]
        if "filter" in wanted:
            info["filter_fields"] = {f.fld for f in pivot.pageFields}
        if "col_fields" in wanted:
            info["col_fields"] = [f.x - left for f in pivot.colFields]
        if "row_fields" in wanted:
            info["row_fields"] = [f.x - left for f in pivot.rowFields]
        if "data_fields" in wanted:
            named = "data_fields_name" in wanted
            info["data_fields"] = [
                f"{f.fld - left:d};{f.name if named else ''};{f.subtotal};{f.showDataAs}"
                for f in pivot.dataFields
            ]
        found[key] = info
    return found


def dimensions(sheet: Any, obj: str, **options: Any) -> dict[Any, dict[str, Any]]:
    wanted = set(options.get("props", []))
    holder = getattr(sheet, f"{obj}_dimensions")
    return {key: {p: getattr(dim, p) for p in wanted} for key, dim in holder.items()}


def filters(sheet: Any, **options: Any) -> dict[str, Any]:
    auto = sheet.auto_filter
    columns = []
    for column in auto.filterColumn:
        info: dict[str, Any] = {"col_id": column.colId, "hidden_button": column.hiddenButton,
                                "show_button": column.showButton}  # fmt: skip
        if column.filters is not None:
            info["filters_blank"] = column.filters.blank
            info["filters"] = set(column.filters.filter)
        if column.customFilters is not None:
            info["custom_filters_op"] = column.customFilters._and
            info["custom_filters"] = {
                (f.operator, f.val) for f in column.customFilters.customFilter
            }
        columns.append(info)
    ordered = sorted(columns, key=lambda d: d["col_id"])
    found: dict[str, Any] = {"ref": auto.ref, "filter_column": ordered}
    sort = auto.sortState
    if sort is not None:
        found["sort_state"] = {
            "sort": sort.columnSort, "case": sort.caseSensitive, "method": sort.sortMethod,
            "ref": sort.ref,
            "condition": [{"descending": c.descending, "key": c.sortBy, "ref": c.ref,
                           "custom_list": c.customList, "dxf_id": c.dxfId, "icon": c.iconSet,
                           "iconid": c.iconId} for c in sort.sortCondition],
        }  # fmt: skip
    return found


def sparklines(path: str | None, name: str) -> dict[Any, Any]:
    import lxml.etree

    if path is None:
        raise TypeError("no workbook")
    try:
        with zipfile.ZipFile(path) as archive:
            book = lxml.etree.fromstring(archive.read("xl/workbook.xml"))
            listed = book.iterfind("oo:sheets/oo:sheet", NS)
            ids = {s.get("name"): s.get("sheetId") for s in listed}
            sheet = lxml.etree.fromstring(archive.read(f"xl/worksheets/sheet{ids[name]}.xml"))
    except zipfile.BadZipFile:
        return {}
    found: dict[Any, Any] = {}
    for line in sheet.iter(f"{{{NS['x14']}}}sparkline"):
        where, formula = line.find("xm:sqref", NS), line.find("xm:f", NS)
        found[where.text if where is not None else None] = (
            formula.text if formula is not None else None
        )
    return found


# ---------------------------------------------------------------- styles


def styles(sheet: Any, name: str, path: str | None, **options: Any) -> dict[str, list[Any]]:

    wanted = list(options.get("props", []))
    found = {c.coordinate: [cell_style(s, c) for s in wanted] for col in sheet.iter_cols()
             for c in col}  # fmt: skip
    for formatting in sheet.conditional_formatting:
        for rule in formatting.rules:
            holds = _condition(rule, path, name)
            if holds is None:
                continue
            active = []
            blanks = 0
            for cells in formatting.cells:
                for row, column in cells.cells:
                    value = cell_value(path, name, f"{_letter(column)}{row}")
                    if value is None:
                        blanks += 1
                        if blanks > 50:
                            break
                        continue
                    try:
                        ok = holds(value)
                    except Exception:  # noqa: BLE001 - a formula that fails does not hold
                        ok = False
                    if ok:
                        active.append(sheet.cell(row=row, column=column))
            for cell in active:
                found[cell.coordinate] = [cell_style(s, cell, rule.dxf) for s in wanted]
    return found


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(column))


def _condition(rule: Any, path: str | None, sheet: str) -> Callable[[Any], bool] | None:
    """Whether a conditional format's rule holds for a value; None where OSWorld's skips
    the rule (a formula it cannot parse, references it cannot compute)."""
    import formulas

    parser = formulas.Parser()
    compiled, arguments = [], []
    for text in rule.formula:
        try:
            compiled.append(parser.ast("=" + text)[1].compile())
        except Exception:  # noqa: BLE001 - a formula that does not parse: the rule is skipped
            log.info("conditional format formula %r does not parse: skipped", text)
            return None
        arguments.append([_argument(path, sheet, m) for m in ABSOLUTE.findall(text)])
    if rule.type in ("expression", "containsText", "notContainsText", "endsWith", "beginsWith",
                     "containsErrors", "notContainsErrors"):  # fmt: skip
        return lambda value: compiled[0](value, *arguments[0])
    if rule.type == "cellIs":
        try:
            references = [formula() for formula in compiled]
        except Exception:  # noqa: BLE001 - references that cannot be computed: skipped
            return None
        return lambda value: _cell_is(rule.operator, value, references)
    # Another type (top10, aboveAverage, duplicateValues...): OSWorld's tests each cell with
    # no condition, which fails, and counts it as not holding.
    return lambda value: False


def _argument(path: str | None, sheet: str, match: tuple[str, ...]) -> Any:
    from openpyxl.worksheet.cell_range import CellRange

    col1, row1, col2, row2 = match
    # (OSWorld's reads a single cell where the end is None, which findall never gives: a
    # lone $A$1 makes a range "A1:", which raises, as it does there.)
    cells = CellRange(f"{col1}{row1}:{col2}{row2}").cells
    return [cell_value(path, sheet, f"{_letter(c[1])}{c[0]}") for c in cells]


def _cell_is(operator: str, value: Any, ref: list[Any]) -> bool:
    try:
        if operator == "lessThanOrEqual":
            return bool(value <= ref[0])
        if operator == "lessThan":
            return bool(value < ref[0])
        if operator == "equal":
            return bool(value == ref[0])
        if operator == "greaterThanOrEqual":
            return bool(value >= ref[0])
        if operator == "notEqual":
            return bool(value != ref[0])
        if operator == "greaterThan":
            return bool(value > ref[0])
        if operator == "between":
            return bool(min(ref) <= value <= max(ref))
        if operator == "notBetween":
            return bool(value < min(ref) or value > max(ref))
    except (TypeError, IndexError):
        return False
    raise UnboundLocalError(f"conditional format operator {operator!r}")
