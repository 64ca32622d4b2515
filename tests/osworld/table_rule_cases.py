"""Workbooks of our own making for compare_table's chart, style, row/column and filter
rules (test_metrics_agree_apps.py holds them to OSWorld's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

Case = tuple[str, list[Any], dict[str, Any]]


def book(folder: Path, name: str, **spec: Any) -> str:
    import openpyxl
    from openpyxl.chart import BarChart, LineChart, Reference
    from openpyxl.formatting.rule import CellIsRule, FormulaRule
    from openpyxl.styles import Font, PatternFill

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Sheet1"
    for row in spec.get("rows", [["name", "q1", "q2"], ["ada", 3, 5], ["bob", 7, 1],
                                 ["cy", 2, 9]]):  # fmt: skip
        sheet.append(row)
    for kind, title, columns, extra in spec.get("charts", []):
        chart = {"bar": BarChart, "line": LineChart}[kind]()
        if title:
            chart.title = title
        data = Reference(sheet, min_col=columns[0], max_col=columns[1], min_row=1, max_row=4)
        chart.add_data(data, titles_from_data=True)
        chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=4))
        chart.x_axis.title = extra.get("xtitle")
        chart.y_axis.title = extra.get("ytitle")
        if extra.get("no_legend"):
            chart.legend = None
        if "direction" in extra:
            chart.barDir = extra["direction"]
        chart.width = extra.get("width", 15)
        sheet.add_chart(chart, extra.get("at", "E2"))
    red = PatternFill(start_color="FFFF0000", end_color="FFFF0000", fill_type="solid")
    for kind, cells, arg in spec.get("formats", []):
        if kind == "greater":
            rule = CellIsRule(operator="greaterThan", formula=[str(arg)], fill=red)
        elif kind == "between":
            rule = CellIsRule(operator="between", formula=[str(a) for a in arg], fill=red,
                              font=Font(bold=True))  # fmt: skip
        else:
            rule = FormulaRule(formula=[arg], fill=red)
        sheet.conditional_formatting.add(cells, rule)
    if spec.get("bold_a1"):
        sheet["A1"].font = Font(bold=True)
    for row, height in spec.get("heights", {}).items():
        sheet.row_dimensions[row].height = height
    for column in spec.get("hidden", []):
        sheet.column_dimensions[column].hidden = True
    for column, width in spec.get("widths", {}).items():
        sheet.column_dimensions[column].width = width
    if "filter" in spec:
        sheet.auto_filter.ref = spec["filter"]
        for column, values in spec.get("filter_values", {}).items():
            sheet.auto_filter.add_filter_column(column, values)
        if "sort" in spec:
            sheet.auto_filter.add_sort_condition(spec["sort"])
    path = folder / name
    workbook.save(path)
    return str(path)


def table_rule_cases(tmp: Path) -> list[Case]:
    sheets = {"sheet_idx0": "RI0", "sheet_idx1": "EI0"}
    plain = book(tmp, "plain.xlsx")
    cases: list[Case] = []

    def rule(kind: str, first: str | None, second: str | None, **extra: Any) -> None:
        cases.append(("compare_table", [first, second], {"rules": [{"type": kind, **sheets,
                                                                     **extra}]}))  # fmt: skip

    bar = book(tmp, "bar.xlsx", charts=[("bar", "Sales", (2, 3), {"xtitle": "who"})])
    props = ["title", "type", "legend", "xtitle", "ytitle", "width", "direction"]
    for name, charts in [
        ("bar2", [("bar", "Sales", (2, 3), {"xtitle": "who"})]),
        ("bar3", [("bar", "Other", (2, 3), {"xtitle": "who"})]),
        ("line", [("line", "Sales", (2, 3), {"xtitle": "who"})]),
        ("bar4", [("bar", "Sales", (2, 2), {"xtitle": "who"})]),
        ("bar5", [("bar", "Sales", (2, 3), {"xtitle": "who", "no_legend": True})]),
        ("bar6", [("bar", "Sales", (2, 3), {"xtitle": "who", "direction": "bar"})]),
        ("bar7", [("bar", "Sales", (2, 3), {"xtitle": "who", "width": 20})]),
        ("none", []),
    ]:  # fmt: skip
        rule("chart", book(tmp, f"{name}.xlsx", charts=charts), bar, chart_props=props)
    rule("chart", book(tmp, "bar8.xlsx", charts=[("bar", "Other", (2, 3), {})]), bar)
    rule("chart", bar, bar, chart_props=["anchor", "height", "ztitle"])
    rule("chart", plain, plain, chart_props=props)
    formatted = book(tmp, "cf.xlsx", formats=[("greater", "B2:C4", 4)])
    for name, spec in [
        ("cf2", {"formats": [("greater", "B2:C4", 4)]}),
        ("cf3", {"formats": [("greater", "B2:C4", 6)]}),
        ("cf4", {"formats": [("greater", "B2:B4", 4)]}),
        ("cf5", {"formats": [("between", "B2:C4", [2, 5])]}),
        ("cf6", {"formats": [("formula", "B2:C4", "B2>4")]}),
        ("cf7", {"formats": [("formula", "B2:C4", "SUM($B$2:$B$4)>4")]}),
        ("cf8", {}), ("cf9", {"formats": [("greater", "B2:C4", 4)], "bold_a1": True}),
    ]:  # fmt: skip
        for props in (["bgcolor", "fill_type"], ["font_bold", "number_format"]):
            rule("style", book(tmp, f"{name}.xlsx", **spec), formatted, props=props)
    sized = book(tmp, "rows.xlsx", heights={2: 30}, hidden=["C"], widths={"B": 20})
    for name, spec in [("rows2", {"heights": {2: 30}, "hidden": ["C"], "widths": {"B": 20}}),
                       ("rows3", {"heights": {2: 31}, "hidden": ["C"], "widths": {"B": 20}}),
                       ("rows4", {"heights": {2: 30}, "widths": {"B": 20}}),
                       ("rows5", {"heights": {3: 30}, "hidden": ["C"], "widths": {"B": 21}}),
                       ("rows6", {})]:  # fmt: skip
        other = book(tmp, f"{name}.xlsx", **spec)
        rule("row_props", other, sized, props=["height", "hidden"])
        rule("col_props", other, sized, props=["width", "hidden"])
    filtered = book(tmp, "f.xlsx", filter="A1:C4", filter_values={1: ["3", "7"]}, sort="B2:B4")
    for name, spec in [("f2", {"filter": "A1:C4", "filter_values": {1: ["3", "7"]},
                               "sort": "B2:B4"}),
                       ("f3", {"filter": "A1:C4", "filter_values": {1: ["3"]}, "sort": "B2:B4"}),
                       ("f4", {"filter": "A1:C3"}), ("f5", {}),
                       ("f6", {"filter": "A1:C4", "filter_values": {1: ["3", "7"]}}),
                       ("f7", {"filter": "A1:C4", "filter_values": {2: ["3", "7"]},
                               "sort": "B2:B4"})]:  # fmt: skip
        rule("filter", book(tmp, f"{name}.xlsx", **spec), filtered)
    for kind in ("pivot_table", "sparkline"):  # (workbooks with none: both describe nothing)
        rule(kind, plain, bar, pivot_props=["name"])
        rule(kind, plain, plain)
    return cases
