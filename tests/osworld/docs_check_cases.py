"""Documents of our own making for Writer's tab-stop, highlight, colour, reference and
train-record metrics (test_metrics_agree_apps.py holds them to OSWorld's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

Case = tuple[str, list[Any], dict[str, Any]]


def docx(folder: Path, name: str, paragraphs: list[Any], **extra: Any) -> str:
    from docx import Document
    from docx.enum.text import WD_TAB_ALIGNMENT
    from docx.shared import Inches, RGBColor

    document = Document()
    for item in paragraphs:
        text, stops = (item, []) if isinstance(item, str) else item
        paragraph = document.add_paragraph(text)
        for position, kind in stops:
            alignment = {"left": WD_TAB_ALIGNMENT.LEFT, "right": WD_TAB_ALIGNMENT.RIGHT,
                         "center": WD_TAB_ALIGNMENT.CENTER}[kind]  # fmt: skip
            paragraph.paragraph_format.tab_stops.add_tab_stop(Inches(position), alignment)
    for rows in extra.get("tables", []):
        table = document.add_table(rows=len(rows), cols=len(rows[0]))
        for r, row in enumerate(rows):
            for c, (word, colour) in enumerate(row):
                run = table.cell(r, c).paragraphs[0].add_run(word)
                if colour is not None:
                    run.font.color.rgb = RGBColor(*colour)
    path = folder / name
    document.save(path)
    return str(path)


def odt(folder: Path, name: str, spans: list[tuple[str, str | None]]) -> str:
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TextProperties
    from odf.text import P, Span

    document = OpenDocumentText()
    paragraph = P()
    for index, (words, colour) in enumerate(spans):
        if colour is None:
            paragraph.addText(words)
            continue
        style = Style(name=f"T{index}", family="text")
        style.addElement(TextProperties(backgroundcolor=colour))
        document.automaticstyles.addElement(style)
        paragraph.addElement(Span(stylename=style, text=words))
    document.text.addElement(paragraph)
    path = folder / name
    document.save(str(path))
    return str(path)


def docs_check_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    gold = docx(tmp, "tabs.docx", [("Name\tScore", [(3, "right")]), ("Ada\t36", [(3, "right")])])
    for name, paragraphs, options in [
        ("t1", [("Name\tScore", [(3, "right")]), ("Ada\t36", [(3, "right")])], {}),
        ("t2", [("Name\tScore", [(3.2, "right")]), ("Ada\t36", [(3, "right")])], {}),
        ("t3", [("Name\tScore", [(3, "left")]), ("Ada\t36", [(3, "right")])], {}),
        ("t4", [("Name\tScore", []), ("Ada\t36", [(3, "right")])], {}),
        ("t5", [("Name\tScore", [(3, "right")])], {}),
        ("t6", [("Name\tScore", [(3, "right")]), ("Ada\t36", [(3, "right")])],
         {"word_number_split_by_tabstop": 1}),
        ("t7", [("Two words\tScore", [(3, "right")]), ("Ada\t36", [(3, "right")])],
         {"word_number_split_by_tabstop": 1}),
        ("t8", [("Name\tScore", [(3, "right")]), ("Ada\t36", [(3, "right")])],
         {"word_number_split_by_tabstop": 1, "index": 1}),
        ("t9", [("Name\tScore", [(0, "left"), (3, "right")]), ("Ada\t36", [(3, "right")])], {}),
    ]:  # fmt: skip
        add(("check_tabstops", [docx(tmp, f"{name}.docx", paragraphs), gold], options))
    add(("check_tabstops", [None, gold], {}))
    add(("check_tabstops", [docx(tmp, "t10.docx", ["a"]), docx(tmp, "t11.docx", ["b"])],
         {"word_number_split_by_tabstop": 1, "index": 2}))  # fmt: skip
    plain = odt(tmp, "plain.odt", [("Hello world", None)])
    for spans in [[("Hello ", None), ("world", "#ffff00")],
                  [("Hello ", None), ("world", "#00ff00")],
                  [("Hello world", None)], [("Hello", "#ffff00"), (" world", "#ffff00")],
                  [("Hello there", None)], [("Hello ", None), ("world", "#FFFF00")]]:  # fmt: skip
        add(("check_highlighted_words", [odt(tmp, f"h{len(cases)}.odt", spans), plain], {}))
    add(("check_highlighted_words", [None, plain], {}))
    add(("check_highlighted_words", [plain, None], {}))
    add(("check_highlighted_words", [plain, plain], {}))
    add(("check_highlighted_words", [plain, odt(tmp, "other.odt", [("Bye", None)])], {}))
    red, blue, green = (255, 0, 0), (0, 0, 255), (0, 160, 0)
    words = [[("apple", red), ("banana", blue)], [("egg", red), ("kiwi", blue)]]
    coloured = docx(tmp, "c.docx", ["Fruits"], tables=[words])
    for table, options in [
        (words, {}), ([[("apple", blue), ("banana", blue)], [("egg", red), ("kiwi", blue)]], {}),
        ([[("apple", (250, 5, 5)), ("banana", blue)], [("egg", red), ("kiwi", blue)]], {}),
        ([[("apple", (200, 40, 40)), ("banana", blue)], [("egg", red), ("kiwi", blue)]], {}),
        ([[("apple", (200, 40, 40)), ("banana", blue)], [("egg", red), ("kiwi", blue)]],
         {"threshold": 30}),
        ([[("Apple", red), ("Banana", green)], [("egg", red), ("kiwi", blue)]], {}),
        ([[("", None), ("banana", blue)], [("egg", red), ("kiwi", blue)]], {}),
    ]:  # fmt: skip
        add(
            (
                "evaluate_colored_words_in_tables",
                [docx(tmp, f"c{len(cases)}.docx", ["Fruits"], tables=[table]), coloured],
                options,
            )
        )
    add(("evaluate_colored_words_in_tables", [coloured, docx(tmp, "c2.docx", ["Veg"])], {}))
    add(("evaluate_colored_words_in_tables", [None, coloured], {}))
    add(
        (
            "evaluate_colored_words_in_tables",
            [docx(tmp, "c3.docx", ["Fruits"]), docx(tmp, "c4.docx", ["Fruits"])],
            {},
        )
    )
    base = docx(tmp, "n.docx", ["One line", "", "Two  lines"])
    for paragraphs, options in [
        (["One line", "Two  lines"], {}), (["One line Two lines"], {}),
        (["One line Two lines"], {"ignore_blanks": False}),
        (["One line", "Two  lines"], {"ignore_blanks": False}), (["One", "line"], {}),
        (["One line", "", "", "Two lines"], {}), ([], {}),
    ]:  # fmt: skip
        add(
            (
                "compare_docx_files_and_ignore_new_lines",
                [docx(tmp, f"n{len(cases)}.docx", paragraphs), base],
                options,
            )
        )
    add(("compare_docx_files_and_ignore_new_lines", [None, base], {}))
    add(("compare_docx_files_and_ignore_new_lines", [base, str(tmp / "x.odt")], {}))
    add(("compare_docx_files_and_ignore_new_lines", [base, str(tmp / "absent.docx")], {}))
    refs = docx(tmp, "r.docx", ["Text", "References", "Ada, A. (1843). Notes.", "",
                                "Babbage, C. (1864). Passages."])  # fmt: skip
    for paragraphs, options in [
        (["Text", "References", "Ada, A. (1843). Notes.", "Babbage, C. (1864). Passages."], {}),
        (["Text", "References", "Ada, A. 1843. Notes", "Babbage, C. 1864. Passages"], {}),
        (["Text", "References", "Someone else entirely", "Nothing alike here"], {}),
        (["Text", "References", "Ada, A. (1843). Notes."], {}), (["Text"], {}),
        (["Text", "Bibliography", "Ada"],
         {"reference_indicator": "Bibliography"}),
        (["Text", "References", "Ada, A. (1843). Notes.", "Babbage, C. (1864). Passages."],
         {"reference_base_result": 0.9}),
        (["References"], {}),
    ]:  # fmt: skip
        add(("compare_references", [docx(tmp, f"r{len(cases)}.docx", paragraphs), refs],
             options))  # fmt: skip
    add(("compare_references", [docx(tmp, "r1.docx", ["References"]),
                                docx(tmp, "r2.docx", ["References"])], {}))  # fmt: skip
    add(("compare_references", [None, refs], {}))
    add(("compare_references", [docx(tmp, "r3.docx", ["Text"]), docx(tmp, "r4.docx", ["x"])], {}))
    initial = docx(tmp, "i.docx", ["a,T1,b,c", "a,T1,b,c", "d,T2,e,f", "g,T3,h,i", "note"])
    golden = docx(tmp, "g.docx", ["a,T1,b,c", "d,T2,e,f", "g,T3,h,i", "note"])
    for paragraphs in [["a,T1,b,c", "d,T2,e,f", "g,T3,h,i", "note"],
                       ["a,T1,b,c", "a,T1,b,c", "d,T2,e,f", "g,T3,h,i"],
                       ["a,T1,b,c", "d,T2,e,f", "note"],
                       ["x,T1,b,c", "d,T2,e,f", "g,T3,h,i", "note"],
                       ["g,T3,h,i", "d,T2,e,f", "a,T1,b,c", "note"], []]:  # fmt: skip
        processed = docx(tmp, f"p{len(cases)}.docx", paragraphs)
        add(("compare_unique_train_records", [processed, [golden, initial]], {}))
    add(("compare_unique_train_records", [None, [golden, initial]], {}))
    add(("compare_unique_train_records", [golden, [golden]], {}))
    add(("compare_unique_train_records", [golden, golden], {}))
    add(("compare_unique_train_records", [golden, [None, initial]], {}))
    add(("compare_unique_train_records", [str(tmp / "absent.docx"), [golden, initial]], {}))
    return cases


def place_cases(tmp: Path) -> list[Case]:
    """fuzzy_place_math's documents and compare_conference_city_in_order's sheets."""
    import openpyxl

    cases: list[Case] = []
    answers = {"expected": ["Paris", "London", "Berlin", "Rome"]}
    for words in [["Paris London Berlin"], ["Paris", "Londn", "Berln"], ["Paris London"],
                  ["Paris London Berlin Rome"], ["Tokyo Osaka Kyoto"], [], ["paris LONDON rome"],
                  ["Paris", "", "London", "Rome"], ["P L B"], ["Rome Rome Rome"]]:  # fmt: skip
        cases.append(("fuzzy_place_math", [docx(tmp, f"pl{len(cases)}.docx", words), answers], {}))
    cases.append(("fuzzy_place_math", [None, answers], {}))

    def sheet(cities: list[Any]) -> str:
        book = openpyxl.Workbook()
        active = book.active
        assert active is not None
        active.append(["conference", "year", "city"])
        for city in cities:
            active.append(["c", 2024, city])
        path = tmp / f"city{len(cases)}.xlsx"
        book.save(path)
        return str(path)

    wanted = {"expected": ["Vienna", ["New Orleans", "NOLA"], "Seoul"]}
    for cities, rule in [
        (["Vienna, Austria", "New Orleans, USA", "Seoul, Korea"], wanted),
        (["Vienna", "NOLA", "Seoul"], wanted), (["Vienna", "Boston", "Seoul"], wanted),
        (["Seoul", "NOLA", "Vienna"], wanted), (["Vienna", "NOLA"], wanted),
        (["Vienna", "NOLA", "Seoul", "Extra"], wanted), ([], wanted),
        (["Vienna", "NOLA", "Seoul"], {"expected": ["Vienna", 3, "Seoul"]}),
        ([None, "NOLA", "Seoul"], wanted), (["vienna", "NOLA", "Seoul"], wanted),
    ]:  # fmt: skip
        cases.append(("compare_conference_city_in_order", [sheet(cities), rule], {}))
    return cases
