"""More of Writer's metrics, each as OSWorld's function of the same name judges:
- check_tabstops: the non-empty paragraphs' tab stops (clear ones, and a left one at 0,
  aside) of the same kinds, scored 1 less their mean distance over the text width; with
  word_number_split_by_tabstop, each paragraph's part `index` (split at tabs) has that
  many words;
- check_highlighted_words: the documents agree (compare_docx_files) and no span of the
  first (an .odt) keeps a yellow (#ffff00) background;
- evaluate_colored_words_in_tables: the documents agree, and in the first one's tables a
  word starting with a vowel is red, any other blue (CIEDE2000 within `threshold`);
- compare_docx_files_and_ignore_new_lines: the non-empty paragraphs' text alike (blanks
  folded unless ignore_blanks is false);
- compare_references: the paragraphs after "References" alike (rapidfuzz's ratio, their
  mean above reference_base_result, scaled);
- compare_unique_train_records: the lines are the initial document's, with no train id
  twice, the gold's ids, and as many lines as the gold's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.metrics.docs import compare_docx_files
from roundhouse.osworld.registry import Registry

METRICS: Registry[Callable[..., float]] = Registry()
YELLOW = "#ffff00"
VOWELS = "aeiou"


def _document(path: str) -> Any:
    from docx import Document

    return Document(path)


@METRICS.add
def check_tabstops(first: str | None, second: str | None, **options: Any) -> float:
    from docx.enum.text import WD_TAB_ALIGNMENT

    if not first or not second:
        return 0.0
    try:
        one, two = _document(first), _document(second)
    except Exception:  # noqa: BLE001 - a document that does not open scores 0
        return 0.0
    mine = [p for p in one.paragraphs if p.text.strip()]
    theirs = [p for p in two.paragraphs if p.text.strip()]
    if len(mine) != len(theirs):
        return 0.0
    if options.get("word_number_split_by_tabstop") is not None:
        wanted, index = options["word_number_split_by_tabstop"], options.get("index", 0)
        for paragraph in mine:
            part = paragraph.text.split("\t")[index]
            if len([w for w in re.split(r"\s", part) if w.strip()]) != wanted:
                return 0.0
    section = two.sections[0]
    width = section.page_width - section.left_margin - section.right_margin

    def kept(stop: Any) -> bool:
        if stop.alignment == WD_TAB_ALIGNMENT.CLEAR:
            return False
        return not (stop.alignment == WD_TAB_ALIGNMENT.LEFT and stop.position == 0)

    off = 0.0  # each paragraph's distance between its stops and the gold's, over the width
    for p1, p2 in zip(mine, theirs, strict=True):
        stops1 = [s for s in p1.paragraph_format.tab_stops if kept(s)]
        stops2 = [s for s in p2.paragraph_format.tab_stops if kept(s)]
        if len(stops1) != len(stops2):
            return 0.0
        if any(a.alignment != b.alignment for a, b in zip(stops1, stops2, strict=True)):
            return 0.0
        distance = 0.0
        for a, b in zip(stops1, stops2, strict=True):
            distance += abs(a.position - b.position)
        off += distance / width
    return float(1 - off / len(mine))


@METRICS.add
def check_highlighted_words(first: str | None, second: str | None) -> float:
    from odf.opendocument import load
    from odf.text import Span

    if not first or not second:
        return 0.0
    if not compare_docx_files(first, second):
        return 0.0
    document = load(first)
    styles = {s.getAttribute("name"): s for s in document.automaticstyles.childNodes}
    for span in document.getElementsByType(Span):
        name = span.getAttribute("stylename")
        if not name or name not in styles:
            continue
        for prop in styles[name].childNodes:
            if prop.getAttribute("backgroundcolor") == YELLOW:
                return 0.0
    return 1.0


@METRICS.add
def evaluate_colored_words_in_tables(
    first: str | None, second: str | None, **options: Any
) -> float:
    from docx.shared import RGBColor

    if not first or not second:
        return 0.0
    if not compare_docx_files(first, second):
        return 0.0
    try:
        document = _document(first)
    except Exception:  # noqa: BLE001 - a document that does not open scores 0
        return 0.0
    threshold = options.get("threshold", 3.5)
    red, blue = RGBColor(255, 0, 0), RGBColor(0, 0, 255)
    for table in document.tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        if not run.text:
                            continue
                        wanted = red if run.text[0].lower() in VOWELS else blue
                        if _colour_distance(run.font.color.rgb, wanted) > threshold:
                            return 0.0
    return 1.0


def _colour_distance(one: Any, two: Any) -> float:
    from skimage.color import deltaE_ciede2000, rgb2lab

    first = rgb2lab([one[0] / 255.0, one[1] / 255.0, one[2] / 255.0])
    second = rgb2lab([two[0] / 255.0, two[1] / 255.0, two[2] / 255.0])
    return float(deltaE_ciede2000(first, second))


def _paragraph_texts(first: str, second: str) -> tuple[list[str], list[str]] | None:
    """Both .docx files' paragraphs; None when they are not both .docx or do not open."""
    if not (first.endswith(".docx") and second.endswith(".docx")):
        return None
    try:
        one, two = _document(first), _document(second)
    except Exception:  # noqa: BLE001 - a document that does not open scores 0
        return None
    return [p.text for p in one.paragraphs], [p.text for p in two.paragraphs]


@METRICS.add
def compare_docx_files_and_ignore_new_lines(first: str | None, second: str | None,
                                            **options: Any) -> float:  # fmt: skip
    if not first or not second:
        return 0.0
    texts = _paragraph_texts(first, second)
    if texts is None:
        return 0.0
    mine, theirs = ([t for t in side if t != ""] for side in texts)
    if options.get("ignore_blanks", True):
        return 1.0 if _folded(mine) == _folded(theirs) else 0.0
    return 1.0 if mine == theirs else 0.0


def _folded(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", "\n".join(lines)).strip()


@METRICS.add
def compare_references(first: str | None, second: str | None, **options: Any) -> float:
    from rapidfuzz import fuzz

    if not first or not second:
        return 0.0
    texts = _paragraph_texts(first, second)
    if texts is None:
        return 0.0
    marker = options.get("reference_indicator", "References")
    base = options.get("reference_base_result", 0.5)
    starts = [t.index(marker) if marker in t else -1 for t in texts]
    if starts == [-1, -1]:
        return 1.0
    if -1 in starts:
        return 0.0
    mine, theirs = (
        [p for p in t[s + 1 :] if p.strip()] for t, s in zip(texts, starts, strict=True)
    )
    if len(mine) != len(theirs):
        return 0.0
    if not mine:
        raise ZeroDivisionError("no references after the marker")  # (as OSWorld's divides)
    alike = sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(mine, theirs, strict=True)) / len(mine)
    return (alike - base) / (1 - base) if alike >= base + 0.01 else 0.0


@METRICS.add
def compare_unique_train_records(processed: str | None, expected: Any, **options: Any) -> float:
    if not processed or not isinstance(expected, list) or len(expected) < 2:
        return 0.0
    gold, initial = expected[0], expected[1]
    if not gold or not initial:
        return 0.0
    read = [_lines_and_ids(path) for path in (processed, gold, initial)]
    if any(lines is None for lines, _ in read):
        return 0.0
    (lines, ids), (gold_lines, gold_ids), (initial_lines, _) = read
    assert lines is not None and gold_lines is not None and initial_lines is not None
    ok = (
        set(lines) <= set(initial_lines) and len(ids) == len(set(ids))
        and set(ids) == set(gold_ids) and len(lines) == len(gold_lines)
    )  # fmt: skip
    return 1.0 if ok else 0.0


def _lines_and_ids(path: str) -> tuple[list[str] | None, list[str]]:
    """The non-empty lines, and the train id (second field) of each four-field line."""
    try:
        lines = [p.text.strip() for p in _document(path).paragraphs if p.text.strip()]
    except Exception:  # noqa: BLE001 - a document that does not open scores 0
        return None, []
    return lines, [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]


@METRICS.add
def fuzzy_place_math(path: str | None, rules: dict[str, Any]) -> float:
    """The document holds exactly three words, each scored by its best rapidfuzz ratio
    against the answers: their mean."""
    from rapidfuzz import fuzz

    if path is None:
        return 0.0
    words = [word for paragraph in _document(path).paragraphs for word in paragraph.text.split()]
    best = [max([fuzz.ratio(w, answer) / 100 for answer in rules["expected"]] + [0]) for w in words]
    return sum(best) / 3 if len(best) == 3 else 0.0
