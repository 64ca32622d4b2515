"""Each metric we wrote gives what OSWorld's function of the same name gives, on the same
inputs (at least ten each): OSWorld's runs in its own environment (tests/osworld/theirs.py),
ours here. Where theirs raises, ours must raise too."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from roundhouse.osworld.metrics import METRICS
from tests.osworld.conftest import HERE, run_theirs

Case = tuple[str, list[Any], dict[str, Any]]


def text(folder: Path, name: str, content: str) -> str:
    path = folder / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def basic_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    for result, expected in [
        ("100\n", "100\n"), ("100", "100\n"), ("true\n", "true\n"), ("false\n", "true\n"),
        (None, "x"), (3, 3), (3, 3.0), ([1, 2], [1, 2]), ([1, 2], [2, 1]), ("", ""),
        ("uint32 0\n", "uint32 0\n"),
    ]:  # fmt: skip
        add(("exact_match", [result, {"expected": expected}], {}))
    for result, rules in [
        (None, {"include": ["a"]}), ("43 132", {"include": ["43 132"], "exclude": []}),
        ("43 132 x", {"include": ["43 132"], "exclude": ["x"]}), ("abc", {}),
        ("abc", {"include": ["a", "b", "c"]}), ("abc", {"include": ["a", "d"]}),
        ("Large text enabled", {"include": ["Large text enabled"], "exclude": ["error"]}),
        ("error: no", {"include": [], "exclude": ["error"]}), ("", {"include": [""]}),
        ("spotify\n", {"include": ["spotify"], "exclude": ["not found"]}),
        ("spotify not found", {"include": ["spotify"], "exclude": ["not found"]}),
    ]:  # fmt: skip
        add(("check_include_exclude", [result, rules], {}))
    for result, expected in [
        ("b", ["a", "b"]), ("c", ["a", "b"]), (1, [1, 2]), (None, [None]), ("ab", "xaby"),
        ("a", []), ([1], [[1], [2]]), ("light", ["light", "system"]), ("", [""]),
        ("dark", ["light"]),
    ]:  # fmt: skip
        add(("match_in_list", [result, {"expected": expected}], {}))
    for result, expected in [
        (["a", "b"], "a"), (["a", "b"], "c"), ("abc", "b"), ("abc", "d"), ([1, 2], 2),
        ([], 1), ("", ""), ([["x"]], ["x"]), ("/home/user/x", "/home/user"), ("a", "ab"),
    ]:  # fmt: skip
        add(("is_in_list", [result, {"expected": expected}], {}))
    for result, expected, options in [
        ("a", "a", {}), ("a", "A", {}), ("a", "A", {"ignore_case": True}), (1, "1", {}),
        (["a", "b"], ["a", "b"], {"type": "list"}), (["a"], ["a", "b"], {"type": "list"}),
        ("ab", ["a", "b"], {"type": "list"}), (["A"], ["a"], {"type": "list", "ignore_case": True}),
        ((1, 2), ["1", "2"], {"type": "list"}), (None, "None", {}), ("x", "y", {"type": "dict"}),
    ]:  # fmt: skip
        add(("literal_match", [result, expected], options))
    listing = text(tmp, "list.txt", "alpha 1\nbeta 2\ngamma\n")
    for result, rules in [
        (listing, {"expect": ["alpha"]}), (listing, {"expect": ["^beta \\d$"]}),
        (listing, {"expect": ["delta"]}), (listing, {"unexpect": ["gamma"]}),
        (listing, {"unexpect": ["zeta"]}), (listing, {"expect": ["a", "b"], "unexpect": ["q"]}),
        (None, {"expect": ["a"]}), (listing, {}), (listing, {"expect": ["alpha 1\\nbeta"]}),
        (text(tmp, "empty.txt", ""), {"expect": ["x"]}), (text(tmp, "e2.txt", ""), {}),
    ]:  # fmt: skip
        add(("check_list", [result, rules], {}))
    table = text(tmp, "t.csv", "name,age\nada,36\nbob,12\n")
    for result, rules in [
        (table, {"expect": [{"name": "ada"}]}),
        (table, {"expect": [{"name": "ada", "age": "36"}]}),
        (table, {"expect": [{"name": "ada", "age": "12"}]}),
        (table, {"unexpect": [{"name": "bob"}]}),
        (table, {"unexpect": [{"name": "eve"}]}), (table, {}), (None, {"expect": []}),
        (table, {"expect": [{"missing": "x"}]}),
        (table, {"expect": [{"name": "bob"}, {"age": "36"}]}),
        (text(tmp, "h.csv", "name\n"), {"expect": [{"name": "x"}]}),
    ]:  # fmt: skip
        add(("check_csv", [result, rules], {}))
    report = text(tmp, "report.txt", "10:00:01 cpu\n10:00:02 cpu\nnone\n23:59:60 end\n")
    for path, config in [
        (report, {"expected": ["cpu"]}), (report, {"expected": ["cpu", "end"]}),
        (report, {"expected": ["gpu"]}), (None, {"expected": ["x"]}), ("", {"expected": []}),
        (str(tmp / "absent.txt"), {"expected": ["x"]}), (report, {"expected": []}),
        (report, {"expected": ["10:00:01 cpu\n10"]}), (report, {}), (report, {"expected": "cpu"}),
    ]:  # fmt: skip
        add(("file_contains", [path, config], {}))
    for path, config in [
        (report, {"expected": 3}), (report, {"expected": "3"}), (report, {"expected": 2}),
        (None, {"expected": 1}), (str(tmp / "absent.txt"), {"expected": 0}), (report, {}),
        (report, {"expected": "x"}), (text(tmp, "t0.txt", "24:00:00\n"), {"expected": 0}),
        (text(tmp, "t1.txt", "09:59:59 a\n"), {"expected": 1}), (listing, {"expected": 0}),
    ]:  # fmt: skip
        add(("check_line_number", [path, config], {}))
    one = text(tmp, "one.txt", "a\nb\nc\n")
    two = text(tmp, "two.txt", "a\nb\nd\n")
    three = text(tmp, "three.txt", "  A \n\tb\n\nc")
    for actual, expected, options in [
        (one, one, {}), (one, two, {}), (None, one, {}), (one, three, {}),
        (one, three, {"ignore_blanks": True}), (one, three, {"ignore_case": True}),
        (text(tmp, "four.txt", "a b c"), one, {"ignore_blanks": True}),
        (text(tmp, "five.txt", "A\nB\nC\n"), one, {"ignore_case": True}),
        ("", one, {}), (three, three, {"ignore_blanks": True, "ignore_case": True}),
    ]:  # fmt: skip
        add(("compare_text_file", [actual, expected], options))
    for result, expected in [
        (one, one), (one, two), (None, one), (one, three), (two, text(tmp, "six.txt", "")),
        (text(tmp, "seven.txt", "a\n"), one), (one, text(tmp, "eight.txt", "c\nb\na\n")),
        (three, three), (listing, report), (table, table),
    ]:  # fmt: skip
        add(("diff_text_file", [result, expected], {}))
    return cases


def json_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    settings = text(tmp, "settings.json", json.dumps(
        {"editor": {"fontSize": 14, "name": "Mono"}, "theme": "dark", "list": [1, 2]}))  # fmt: skip
    config = text(tmp, "config.yaml", "editor:\n  fontSize: 14\ntheme: dark\n")
    for path, rules, is_yaml in [
        (settings, {"expect": [{"key": ["theme"], "method": "eq", "ref": "dark"}]}, False),
        (settings, {"expect": [{"key": ["theme"], "method": "eq", "ref": "light"}]}, False),
        (settings, {"expect": [{"key": ["editor", "fontSize"], "method": "ge", "ref": 12}]}, False),
        (settings, {"expect": [{"key": ["editor", "name"], "method": "re", "ref": "^Mo"}]}, False),
        (settings, {"expect": [{"key": ["nope"], "method": "eq", "ref": 1}]}, False),
        (settings, {"unexpect": [{"key": ["nope"], "method": "eq", "ref": None}]}, False),
        (settings, {"unexpect": [{"key": ["theme"], "method": "ne", "ref": "dark"}]}, False),
        (settings, {"expect": [{"key": ["editor", "fontSize"], "method": "approx:0.5",
                                "ref": 14.2}]}, False),  # fmt: skip
        (settings, {"expect": [{"key": ["list", 0], "method": "eq", "ref": 1}]}, False),
        (settings, {"expect": [{"key": ["theme", "x"], "method": "eq", "ref": 1}]}, False),
        (config, {"expect": [{"key": ["editor", "fontSize"], "method": "eq", "ref": 14}]}, True),
        (config, {"expect": [{"key": ["theme"], "method": "range.te", "ref": [0, 2]}]}, True),
        (None, {"expect": []}, False), (str(tmp / "absent.json"), {}, False),
        (text(tmp, "bad.json", "{"), {"expect": []}, False),
        (text(tmp, "empty.yaml", ""), {}, True),
    ]:  # fmt: skip
        add(("check_json", [path, rules], {"is_yaml": is_yaml}))
    for result, rules in [
        ({"a": 1}, {"expected": {"a": 1}}), ({"a": 1}, {"expected": {"a": 2}}),
        ("{'a': 'x'}", {"expected": {"a": "x"}}), (None, {"expected": {}}),
        ({"a": "b"}, {"expected": {"a": "__EVALUATION_FAILED__"}}),
        ({"a": "hello world"}, {"expected": {"a": "world"}, "expect_in_result": True}),
        ({"a": ["x", "y"]}, {"expected": {"a": ["y"]}, "expect_in_result": True}),
        ({"a": "y"}, {"expected": {"a": ["x", "y"]}, "expect_in_result": True}),
        ({"a": 3}, {"expected": {"a": 3}, "expect_in_result": True}),
        ({"a": [2, 1], "ignore_list_order": True}, {"expected": {"a": [1, 2],
                                                              "ignore_list_order": True}}),
        ({"a": "q"}, {"expected": {"a": ["x"]}, "expect_in_result": True}),
        ("not json", {"expected": {}}),
    ]:  # fmt: skip
        add(("check_direct_json_object", [result, rules], {}))
    return cases


def os_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    for apps, expected in [
        ("['thunderbird.desktop', 'google-chrome.desktop']",
         ["google-chrome.desktop", "thunderbird.desktop"]),
        ("['a.desktop']", ["a.desktop", "b.desktop"]), ("[]", []),
        ("['a.desktop', 'a.desktop']", ["a.desktop", "b.desktop"]),
        ("['vim.desktop', 'x.desktop']", ["x.desktop"]), ("['x']", ["x"]),
        ("['x', 'y']", ["y", "x"]), ("['x', 'y']", ["y", "z"]), ("@as []", []),
        ("['a', 'b', 'c']", ["a", "b", "c"]),
    ]:  # fmt: skip
        add(("check_gnome_favorite_apps", [apps, {"expected": expected}], {}))
    for zone in ["Etc/UTC (UTC, +0000)", "Europe/Paris (CET, +0100)", "Atlantic/Faroe (WET, +0000)",
                 "America/New_York (EST, -0500)", "UTC (UTC, +0000) ", "+0000)", "x", "",
                 "Asia/Kolkata (IST, +0530)", "Etc/GMT (GMT, +0000)"]:  # fmt: skip
        output = f"Local time: x\nUniversal time: y\nRTC time: z\n      Time zone: {zone}\n"
        add(("is_utc_0", [output], {}))
    add(("is_utc_0", ["only\ntwo lines"], {}))
    for factor in ["1.25", "1.0", "0.9", "2", "1.0000001", " 1.5 ", "abc", "", "1e3", "-1"]:
        add(("check_text_enlarged", [factor], {}))
    files = lambda *names: {"children": [{"name": n} for n in names]}  # noqa: E731
    for listing, expected in [
        (files("a.jpg", "b.jpg"), ["b.jpg", "a.jpg"]), (files("a.jpg"), ["a.jpg", "b.jpg"]),
        (files(), []), (files("a.jpg", "a.jpg"), ["a.jpg", "b.jpg"]), (files("x"), ["y"]),
        (files("a", "b", "c"), ["c", "b", "a"]), (files("a.jpg", "c.png"), ["a.jpg", "b.jpg"]),
        ({"children": []}, ["a"]), (files("a"), ["a"]), (files("b", "a"), ["a", "b", "b"]),
    ]:  # fmt: skip
        add(("check_moved_jpgs", [listing, {"expected": expected}], {}))
    for config, output in [
        ({"expected": "x"}, "a x b"), ({"expected": "y"}, "a x b"),
        ({"expected": ["a", "b"]}, "ab"),
        ({"expected": ["a", "q"]}, "ab"), ({"expected": []}, ""), ({"expected": ""}, ""),
        ({"expected": "/home/user/Data3/secret.docx"}, "/home/user/Data3/secret.docx\n"),
        ({"expected": ["x"]}, "y"), ({"expected": "X"}, "x"), ({"expected": ["1", "2"]}, "12"),
    ]:  # fmt: skip
        add(("is_in_vm_clickboard", [config, output], {}))
    database = tmp / "history.sqlite"
    # closing(): a connection's own `with` commits but does not close it (Python 3.13 warns
    # of the connection left open, and the tests take every warning as an error).
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("create table urls (url text, visits int)")
        connection.executemany("insert into urls values (?, ?)", [("a", 3), ("b", 0), ("c", 5)])
    for sql in ["select count(*) from urls", "select max(visits) from urls",
                "select visits from urls where url='b'", "select sum(visits) > 7 from urls",
                "select count(*) = 0 from urls", "select visits from urls where url='z'",
                "select 0.5", "select null", "select min(visits) from urls",
                "select count(*) from urls where visits > 1"]:  # fmt: skip
        add(("run_sqlite3", [str(database), {"sql": sql}], {}))
    return cases


TREE = """<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state"
 xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes">
 <application name="gedit"><frame name="notes.txt - gedit" st:active="true">
  <push-button name="Save" st:enabled="true">Save</push-button>
  <text name="" st:focused="true">hello world</text>
  <label name="Ln 1">Ln 1, Col 12</label></frame></application></desktop-frame>"""


def tree_cases() -> list[Case]:
    rules: list[list[dict[str, Any]]] = [
        [{"xpath": "//push-button[@name='Save']"}],
        [{"xpath": "//push-button[@name='Open']"}],
        [{"xpath": "//text[@st:focused='true']", "text": "hello world", "exact": True}],
        [{"xpath": "//text", "text": "hello", "exact": True}],
        [{"xpath": "//text", "text": "hello wrld", "exact": False}],
        [{"selectors": ["push-button[name='Save']"]}],
        [{"selectors": ["label"], "text": "Ln 1, Col 12", "exact": True}],
        [{"selectors": ["frame[st|active='true'] text"], "text": "hello world", "exact": True}],
        [{"xpath": "//label", "text": "Ln 2, Col 1", "exact": False},
         {"xpath": "//push-button"}],
        [{"selectors": ["menu"]}],
        [{"xpath": "//frame"}, {"selectors": ["text"], "text": "hello world", "exact": True}],
    ]  # fmt: skip
    return [("check_accessibility_tree", [TREE, rule], {}) for rule in rules]


def table_cases(tmp: Path) -> list[Case]:
    import openpyxl
    from openpyxl.worksheet.datavalidation import DataValidation

    def book(name: str, rows: list[list[Any]], **extra: Any) -> str:
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        assert sheet is not None
        sheet.title = extra.get("title", "Sheet1")
        for row in rows:
            sheet.append(row)
        if "freeze" in extra:
            sheet.freeze_panes = extra["freeze"]
        if "zoom" in extra:
            sheet.sheet_view.zoomScale = extra["zoom"]
        if extra.get("bold"):
            sheet["A1"].font = openpyxl.styles.Font(bold=True, name="Arial", size=14)
        if extra.get("validation"):
            check = DataValidation(type="list", formula1='"Yes,No"', allow_blank=True)
            check.add("B2:B5")
            sheet.add_data_validation(check)
        if "second" in extra:
            workbook.create_sheet(extra["second"])
        path = tmp / name
        workbook.save(path)
        return str(path)

    base = book("base.xlsx", [["name", "score"], ["ada", 36.00001], ["bob", 12]])
    same = book("same.xlsx", [["name", "score"], ["ada", 36.0], ["bob", 12]])
    other = book("other.xlsx", [["name", "score"], ["ada", 35], ["bob", 12]])
    named = book("named.xlsx", [["name", "score"]], title="Data", second="Extra")
    frozen = book("frozen.xlsx", [["a", 1], ["b", 2]], freeze="B2", zoom=150)
    styled = book("styled.xlsx", [["Title", "x"], ["a", "Yes"]], bold=True, validation=True)
    for name, lines in (("base-Sheet1.csv", "name,score\nada,36\nbob,12\n\n"),
                        ("same-Sheet1.csv", "name,score\nada,36\nbob,12\n"),
                        ("other-Sheet1.csv", "Name,score\nada,35\nbob,12\n")):  # fmt: skip
        text(tmp, name, lines)
    sheets = {"sheet_idx0": 0, "sheet_idx1": "EI0"}
    cases: list[Case] = []
    for result, expected, rules in [
        (base, same, [{"type": "sheet_data", **sheets}]),
        (base, other, [{"type": "sheet_data", **sheets}]),
        (base, same, [{"type": "sheet_data", **sheets, "precision": 6}]),
        (base, same, [{"type": "sheet_name"}]), (base, named, [{"type": "sheet_name"}]),
        (base, same, [{"type": "sheet_print", **sheets}]),
        (base, other, [{"type": "sheet_print", **sheets}]),
        (base, other, [{"type": "sheet_print", **sheets, "ignore_case": True}]),
        (base, other, [{"type": "sheet_fuzzy", **sheets, "rules": [
            {"range": ["A1:A3"], "type": "exact_match"}]}]),
        (base, other, [{"type": "sheet_fuzzy", **sheets, "rules": [
            {"range": ["B2"], "type": "fuzzy_match", "threshold": 50}]}]),
        (base, named, [{"type": "sheet_fuzzy", "sheet_idx0": 0, "sheet_idx1": "ENData",
                        "rules": [{"range": ["A1"], "type": "includes", "ignore_case": True}]}]),
        (frozen, frozen, [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]),
        (frozen, base, [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]),
        (frozen, None, [{"type": "zoom", "sheet_idx": 0, "method": "ge", "ref": 140}]),
        (base, None, [{"type": "zoom", "sheet_idx": 0, "method": "eq", "ref": 100}]),
        (styled, None, [{"type": "check_cell", "sheet_idx": 0, "coordinate": "A1",
                         "props": {"font_bold": {"method": "eq", "ref": True},
                                   "font_name": {"method": "eq", "ref": "Arial"}}}]),
        (styled, None, [{"type": "check_cell", "sheet_idx": 0, "coordinate": "A1",
                         "props": {"value": {"method": "eq", "ref": "Title"}}}]),
        (base, None, [{"type": "check_cell", "sheet_idx": 0, "coordinate": "B3",
                       "props": {"value": {"method": "eq", "ref": 12}}}]),
        (base, None, [{"type": "check_cell", "sheet_idx": "RNSheet1", "coordinate": "B2",
                       "props": {"value": {"method": "approx:0.01", "ref": 36}}}]),
        (base, None, [{"type": "check_cell", "sheet_idx": "RI5", "coordinate": "A1",
                       "props": {"value": {"method": "eq", "ref": "name"}}}]),
        (styled, None, [{"type": "data_validation", "sheet_idx": 0, "dv_props": [
            {"type": {"method": "eq", "ref": "list"},
             "formula1": {"method": "eq", "ref": '"Yes,No"'}}]}]),
        (base, None, [{"type": "data_validation", "sheet_idx": 0, "dv_props": [
            {"type": {"method": "eq", "ref": "list"}}]}]),
        (None, same, [{"type": "sheet_name"}]), (str(tmp / "absent.xlsx"), same, []),
        (text(tmp, "broken.xlsx", "not a zip"), same, [{"type": "sheet_name"}]),
    ]:  # fmt: skip
        cases.append(("compare_table", [result, expected], {"rules": rules}))
    csv_a = text(tmp, "a.csv", "x,y\n1,2\n")
    csv_b = text(tmp, "b.csv", " x,y \n1,2\n")
    csv_c = text(tmp, "c.csv", "X,Y\n1,2\n")
    for result, expected, options in [
        (csv_a, csv_a, {}), (csv_a, csv_b, {}), (csv_a, csv_b, {"strict": False}),
        (csv_a, csv_c, {}), (csv_a, csv_c, {"ignore_case": True}), (None, csv_a, {}),
        (csv_a, [csv_c, csv_a], {}), (csv_a, [csv_c], {}), (csv_a, str(tmp / "absent.csv"), {}),
        (str(tmp / "absent.csv"), csv_a, {}), (csv_b, [csv_c, csv_a], {"strict": False}),
    ]:  # fmt: skip
        cases.append(("compare_csv", [result, expected], options))
    return cases


def chrome_cases(tmp: Path) -> list[Case]:
    def bar(*children: dict[str, Any]) -> dict[str, Any]:
        return {"bookmark_bar": {"children": list(children)}, "other": {"children": []}}

    folder = lambda name, *kids: {"type": "folder", "name": name, "children": list(kids)}  # noqa: E731
    site = lambda url: {"type": "url", "name": url, "url": url}  # noqa: E731
    liked = {"type": "liked_authors_websites_urls", "names": ["Liked Authors"],
             "urls": [["https://a.me/", "https://a.org/a"], "https://b.me/"]}  # fmt: skip
    cases: list[Case] = []
    for marks, rule in [
        (bar(folder("Favorites")), {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}),
        (bar(folder("Fav")), {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}),
        (bar(folder("A"), folder("B"), site("https://x/")),
         {"type": "bookmark_bar_folders_names", "names": ["B", "A"]}),
        ([], {"type": "bookmark_bar_folders_names", "names": []}),
        (bar(site("https://x/"), site("https://y/")),
         {"type": "bookmark_bar_websites_urls", "urls": ["https://y/", "https://x/"]}),
        (bar(site("https://x/")), {"type": "bookmark_bar_websites_urls", "urls": ["https://y/"]}),
        (bar(folder("Liked Authors", site("https://a.org/a"), site("https://b.me/"))), liked),
        (bar(folder("Liked Authors", site("https://a.me/"))), liked),
        (bar(folder("Other", site("https://a.me/"), site("https://b.me/"))), liked),
        (bar(folder("Liked Authors", site("https://a.me/"), site("https://b.me/"))), liked),
        (bar(), {"type": "something else"}),
    ]:  # fmt: skip
        cases.append(("is_expected_bookmarks", [marks, rule], {}))
    wanted = {"type": "names", "names": ["chrome-refresh-2023", "chrome-webui-refresh-2023"]}
    for flags, rule in [
        (["chrome-refresh-2023@2", "chrome-webui-refresh-2023@2"], wanted),
        (["chrome-webui-refresh-2023@2", "chrome-refresh-2023@2"], wanted),
        (["chrome-refresh-2023@2"], wanted), ([], wanted), ([], {"type": "names", "names": []}),
        (["chrome-refresh-2023", "chrome-webui-refresh-2023"], wanted),
        (["a@1", "b@2"], {"type": "names", "names": ["a", "b"]}),
        (["a@1@2"], {"type": "names", "names": ["a"]}), (["x"], {"type": "count"}),
        (["chrome-refresh-2023@1", "chrome-webui-refresh-2023@1", "x@1"], wanted),
    ]:  # fmt: skip
        cases.append(("check_enabled_experiments", [flags, rule], {}))
    for size, rule in [
        (20, {"type": "range", "min": 16, "max": 99999}), (16, {"type": "range", "min": 16,
                                                              "max": 99999}),
        (12, {"type": "range", "min": 16, "max": 99999}), (16, {"type": "value", "value": 16}),
        (17, {"type": "value", "value": 16}), (16.0, {"type": "value", "value": 16}),
        (99999, {"type": "range", "min": 16, "max": 99999}), (20, {"type": "other"}),
        (24, {"type": "range", "min": 20, "max": 30}), (0, {"type": "value", "value": 0}),
    ]:  # fmt: skip
        cases.append(("check_font_size", [{"default_font_size": size}, rule], {}))
    cases.append(("check_font_size", [{"minimum_font_size": 3}, {"type": "value", "value": 3}],
                  {}))  # fmt: skip
    return cases


def docs_cases(tmp: Path) -> list[Case]:
    import io

    from docx import Document
    from docx.enum.text import WD_BREAK, WD_PARAGRAPH_ALIGNMENT
    from docx.shared import Pt
    from PIL import Image

    def doc(name: str, paragraphs: list[Any], **extra: Any) -> str:
        document = Document()
        for item in paragraphs:
            text, style = (item, {}) if isinstance(item, str) else item
            paragraph = document.add_paragraph()
            run = paragraph.add_run(text)
            run.italic = style.get("italic")
            run.font.strike = style.get("strike")
            run.font.subscript = style.get("subscript")
            if "size" in style:
                run.font.size = Pt(style["size"])
            if "font" in style:
                run.font.name = style["font"]
            if "spacing" in style:
                paragraph.paragraph_format.line_spacing = style["spacing"]
            if style.get("center"):
                paragraph.alignment = WD_PARAGRAPH_ALIGNMENT.CENTER
            if style.get("page_break"):
                run.add_break(WD_BREAK.PAGE)
        for rows in extra.get("tables", []):
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
        if "footer" in extra:
            document.sections[0].footer.paragraphs[0].text = extra["footer"]
        for color in extra.get("images", []):
            picture = io.BytesIO()
            Image.new("RGB", (8, 8), color).save(picture, "PNG")
            picture.seek(0)
            document.add_picture(picture)
        path = tmp / name
        document.save(path)
        return str(path)

    hello = doc("hello.docx", ["Hello  world", "Second line"])
    same = doc("same.docx", ["Hello world", "Second line"])
    other = doc("other.docx", ["Hello there", "Second line"])
    upper = doc("upper.docx", ["HELLO WORLD", "SECOND LINE"])
    swapped = doc("swapped.docx", ["Second line", "Hello  world"])
    gaps = doc("gaps.docx", ["Hello  world", "", "Second line"])
    broken = text(tmp, "broken.docx", "not a document")
    cases: list[Case] = []
    for first, second, options in [
        (hello, same, {}), (hello, other, {}), (hello, same, {"ignore_blanks": False}),
        (hello, upper, {"ignore_case": True}), (hello, upper, {}), (hello, swapped, {}),
        (hello, swapped, {"ignore_order": True, "ignore_blanks": False}),
        (hello, gaps, {"ignore_blanks": False}),
        (hello, gaps, {"ignore_blanks": False, "delete_empty_lines": True}),
        (hello, other, {"fuzzy_match": True}), (hello, other, {"content_only": True}),
        (hello, other, {"ignore_blanks": False, "fuzzy_match": True}), (None, same, {}),
        (hello, broken, {}), (hello, text(tmp, "plain.txt", "Hello world"), {}),
    ]:  # fmt: skip
        cases.append(("compare_docx_files", [first, second], options))
    grid = [["a", "b"], ["c", "d"]]
    tables = doc("tables.docx", ["t"], tables=[grid])
    for first, second in [
        (tables, doc("t2.docx", ["x"], tables=[grid])),
        (tables, doc("t3.docx", ["t"], tables=[[["a", "b"], ["c", "e"]]])),
        (tables, doc("t4.docx", ["t"], tables=[[["a", "b", "x"], ["c", "d", "y"]]])),
        (tables, doc("t5.docx", ["t"], tables=[grid, grid])), (tables, hello),
        (hello, same), (tables, doc("t6.docx", ["t"], tables=[[[" a ", "b"], ["c", "d "]]])),
        (None, tables), (tables, broken), (tables, doc("t7.docx", ["t"], tables=[[["a", "b"]]])),
    ]:  # fmt: skip
        cases.append(("compare_docx_tables", [first, second], {}))
    double = doc("double.docx", [("Hello  world", {"spacing": 2.0}), ("Second line", {})])
    for first, second in [
        (double, doc("d2.docx", [("Hello world", {"spacing": 2.0}), "Second line"])),
        (double, hello), (hello, same), (double, other), (None, hello), (double, broken),
        (doc("d3.docx", [("Hello world", {"spacing": 1.5}), "Second line"]), double),
        (doc("d4.docx", [("Hello world", {"spacing": 2.0}), ("Second line", {"spacing": 2.0})]),
         double), (gaps, hello), (double, double),
    ]:  # fmt: skip
        cases.append(("compare_line_spacing", [first, second], {}))
    arial = doc("arial.docx", [("a", {"font": "Arial"}), ("b", {"font": "Arial"})])
    for path, rules in [
        (arial, {"font_name": "Arial"}), (arial, {"font_name": "Times New Roman"}),
        (doc("mixed.docx", [("a", {"font": "Arial"}), ("b", {"font": "Times"})]),
         {"font_name": "Arial"}), (hello, {"font_name": "Arial"}), (hello, {"font_name": None}),
        (None, {"font_name": "Arial"}), (broken, {"font_name": "Arial"}),
        (doc("empty.docx", []), {"font_name": "Arial"}), (arial, {"font_name": "arial"}),
        (doc("one.docx", [("", {"font": "Arial"})]), {"font_name": "Arial"}),
    ]:  # fmt: skip
        cases.append(("compare_font_names", [path, rules], {}))
    centered = doc("centered.docx", [("Title", {"center": True}), "body"])
    late = doc("c2.docx", ["Title", ("x", {"center": True})])
    for path in [centered, hello, None, broken, late, doc("c3.docx", [("T", {"center": True})]),
                 same, arial, double, tables]:  # fmt: skip
        cases.append(("is_first_line_centered", [path], {}))
    one_break = doc("break1.docx", [("a", {"page_break": True}), "b"])
    two_breaks = doc("break2.docx", [("a", {"page_break": True}), ("b", {"page_break": True})])
    for path, rules in [
        (one_break, {}), (one_break, {"page_break_count": 1}), (one_break, {"page_break_count": 2}),
        (two_breaks, {"page_break_count": 2}), (hello, {}), (None, {}), (broken, {}),
        (two_breaks, None), (hello, {"page_break_count": 0}), (two_breaks, {"x": 1}),
    ]:  # fmt: skip
        cases.append(("contains_page_break", [path, rules], {}))
    italic14 = doc("i14.docx", [("Hello world", {"italic": True, "size": 14}), "Second line"])
    italic12 = doc("i12.docx", [("Hello world", {"italic": True, "size": 12}), "Second line"])
    italic = doc("inone.docx", [("Hello world", {"italic": True}), "Second line"])
    for first, second in [
        (italic14, hello), (italic12, hello), (italic, hello), (hello, same), (italic14, other),
        (None, hello), (italic14, broken), (italic14, italic14),
        (doc("i14b.docx", [("Hello", {"italic": True, "size": 14}), ("Second line", {"size": 9})]),
         doc("i14c.docx", ["Hello", "Second line"])), (other, hello),
    ]:  # fmt: skip
        cases.append(("check_italic_font_size_14", [first, second], {}))
    struck = doc("struck.docx", ["Hello world", ("Second line", {"strike": True})])
    for first, second in [
        (struck, hello), (hello, same), (struck, other), (None, hello), (struck, broken),
        (doc("s2.docx", [("Hello world", {"strike": True}), "Second line"]), hello),
        (doc("s3.docx", ["Hello world", ("Second line", {"strike": False})]), hello),
        (struck, struck), (doc("s4.docx", ["x", ("y", {"strike": True})]),
                           doc("s5.docx", ["x", "y"])), (gaps, hello),
    ]:  # fmt: skip
        cases.append(("evaluate_strike_through_last_paragraph", [first, second], {}))
    sub = doc("sub.docx", [("H2O", {"subscript": True})])
    for first, second in [
        (sub, sub), (sub, hello), (hello, sub), (hello, same), (None, sub), (sub, broken),
        (doc("sub2.docx", ["x", ("2", {"subscript": True})]), sub),
        (doc("sub3.docx", ["x", ("2", {"subscript": True})]),
         doc("sub4.docx", ["y", ("3", {"subscript": True})])),
        (doc("sub5.docx", [("a", {"subscript": False})]), sub), (sub, doc("sub6.docx", [])),
    ]:  # fmt: skip
        cases.append(("compare_subscript_contains", [first, second], {}))
    for path in [doc("f1.docx", ["x"], footer="Page 1"), doc("f2.docx", ["x"], footer="Page"),
                 doc("f3.docx", ["x"]), doc("f4.docx", ["x"], footer="7"), hello, None, broken,
                 doc("f5.docx", ["x"], footer=" i "), doc("f6.docx", [], footer="12 of 20"),
                 doc("f7.docx", ["x"], footer="")]:  # fmt: skip
        cases.append(("has_page_numbers_in_footers", [path], {}))
    xcu = ('<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/'
           '2001/registry"><item oor:path="/org.openoffice.Office.Writer/DefaultFont">'
           '<prop oor:name="Standard" oor:op="fuse"><value>{}</value></prop></item>'
           "</oor:items>")  # fmt: skip
    times = text(tmp, "times.xcu", xcu.format("Times New Roman"))
    for path, rules in [
        (times, {"font_name": "Times New Roman"}), (times, {"font_name": "Arial"}),
        (text(tmp, "none.xcu", xcu.replace("DefaultFont", "Other").format("X")),
         {"font_name": "X"}), (None, {"font_name": "X"}), (broken, {"font_name": "X"}),
        (text(tmp, "empty.xcu", xcu.format("")), {"font_name": None}),
        (text(tmp, "cm.xcu", xcu.format("Comic Sans MS")), {"font_name": "Comic Sans MS"}),
        (times, {"font_name": "times new roman"}), (str(tmp / "absent.xcu"), {"font_name": "X"}),
        (text(tmp, "std.xcu", xcu.replace('"Standard"', '"Heading"').format("X")),
         {"font_name": "X"}),
    ]:  # fmt: skip
        cases.append(("find_default_font", [path, rules], {}))
    red = doc("red.docx", ["x"], images=["red"])
    for first, second in [
        (red, doc("red2.docx", ["y"], images=["red"])),
        (red, doc("blue.docx", ["x"], images=["blue"])),
        (red, hello), (hello, same), (None, red), (red, broken),
        (doc("rb.docx", ["x"], images=["red", "blue"]),
         doc("br.docx", ["x"], images=["blue", "red"])),
        (doc("rr.docx", ["x"], images=["red", "red"]), red), (red, red),
        (doc("g.docx", [], images=["green"]), doc("g2.docx", ["z"], images=["green"])),
    ]:  # fmt: skip
        cases.append(("compare_docx_images", [first, second], {}))
    return cases


def ours(case: Case) -> dict[str, Any]:
    name, args, kwargs = case
    try:
        return {"value": float(METRICS[name](*args, **kwargs))}
    except Exception as error:  # noqa: BLE001 - what raised is the outcome
        return {"raised": type(error).__name__}


# Two float paths (numpy's SIMD kernels, libm) differ in the last bits from one CPU to the
# next: compare_audios gave 0.905899832969708 here and 0.9058998225439185 in OSWorld's
# environment on another machine. What a score's consumer compares is the score to this
# nearness and the task's verdict (osworld/attempt.py: passed when the score is 1.0).
RELATIVE = 1e-6


def disagreement(mine: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    """Why two outcomes of one metric differ, or None when they agree: both raised, or both
    gave a score, near to RELATIVE and with the same pass/fail."""
    if ("raised" in mine) != ("raised" in theirs):
        return "one raised"
    if "raised" in mine:
        return None
    a, b = float(mine["value"]), float(theirs["value"])
    if (a == 1.0) != (b == 1.0):
        return "the verdicts differ"
    if not math.isclose(a, b, rel_tol=RELATIVE, abs_tol=1e-12):
        return f"the scores differ by more than a relative {RELATIVE:g}"
    return None


def agree(cases: list[Case], osworld_python: Path, tmp: Path) -> None:
    payload = [{"function": n, "args": a, "kwargs": k} for n, a, k in cases]
    theirs = run_theirs(osworld_python, HERE / "theirs.py", payload, tmp)
    mine = [ours(case) for case in cases]
    differ = [
        f"{case[0]}{case[1:]!r}: ours {a}, OSWorld's {b}: {why}"
        for case, a, b in zip(cases, mine, theirs, strict=True)
        if (why := disagreement(a, b)) is not None
    ]
    assert not differ, "\n".join(differ)
    counts = Counter(case[0] for case in cases)
    assert all(count >= 10 for count in counts.values()), counts


@pytest.mark.parametrize(
    "cases", [basic_cases, json_cases, os_cases, table_cases, chrome_cases, docs_cases]
)
def test_metrics_agree_with_osworlds(cases: Any, osworld_python: Path, tmp_path: Path) -> None:
    agree(cases(tmp_path), osworld_python, tmp_path)


@pytest.mark.parametrize(
    ("mine", "theirs", "why"),
    [
        ({"value": 0.905899832969708}, {"value": 0.9058998225439185}, None),  # another CPU
        ({"value": 0.0}, {"value": 0.0}, None),
        ({"raised": "KeyError"}, {"raised": "TypeError"}, None),
        ({"value": 1.0}, {"value": 0.0}, "the verdicts differ"),
        ({"value": 1.0}, {"value": 0.9999999999}, "the verdicts differ"),
        ({"value": 0.5}, {"value": 0.5001}, "the scores differ by more than a relative 1e-06"),
        ({"value": 0.0}, {"value": 1e-9}, "the scores differ by more than a relative 1e-06"),
        ({"value": 0.0}, {"raised": "ValueError"}, "one raised"),
    ],
)
def test_scores_agree_to_a_relative_millionth_and_the_same_verdict(
    mine: dict[str, Any], theirs: dict[str, Any], why: str | None
) -> None:
    """A real disagreement still fails the differential tests; a last-bit one does not."""
    assert disagreement(mine, theirs) == why


def test_accessibility_tree_metric_agrees(osworld_python: Path, tmp_path: Path) -> None:
    agree(tree_cases(), osworld_python, tmp_path)


# (Every metric is held to OSWorld's: test_metrics_agree_apps.py checks that for all.)
