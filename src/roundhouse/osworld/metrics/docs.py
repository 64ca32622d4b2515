"""Word-document metrics: a document's paragraphs, tables, fonts and layout as python-docx
reads them (odfpy for .odt), against a gold document or a rule. A file that does not open
scores 0, as in OSWorld."""

from __future__ import annotations

import functools
import io
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.registry import Registry

log = logging.getLogger(__name__)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _open(path: str) -> Any:
    from docx import Document

    return Document(path)


def _one(path: str | None) -> Any | None:
    """The document, or None when it is missing or does not open."""
    if not path:
        return None
    try:
        return _open(path)
    except Exception:  # noqa: BLE001 - a document that does not open scores 0, as OSWorld's
        return None


def _both(first: str | None, second: str | None) -> tuple[Any, Any] | None:
    """The two documents, or None when either is missing or does not open."""
    if not first or not second:
        return None
    try:
        return _open(first), _open(second)
    except Exception:  # noqa: BLE001 - a document that does not open scores 0, as OSWorld's
        return None


def _on_both(
    score: Callable[[Any, Any], float],
) -> Callable[[str | None, str | None], float]:
    """A metric of two documents that `score` judges opened: 0 when either is missing or
    does not open, as OSWorld's."""

    @functools.wraps(score)
    def metric(first: str | None, second: str | None) -> float:
        opened = _both(first, second)
        return 0 if opened is None else score(*opened)

    return metric


def _with_gold_text(first: str | None, second: str | None) -> Any | None:
    """The first document when it holds the gold (second) document's text, else None: the
    metrics that judge a format ask for the right text first, as OSWorld's do."""
    if not first or not second or not compare_docx_files(first, second):
        return None
    return _one(first)


def _odt_paragraphs(path: str) -> list[str]:
    from odf.opendocument import load
    from odf.text import P

    texts = []
    for paragraph in load(path).getElementsByType(P):
        parts = []
        for node in paragraph.childNodes:
            if node.nodeType == node.TEXT_NODE:
                parts.append(node.data)
            elif node.nodeType == node.ELEMENT_NODE and node.tagName == "text:span":
                parts += [c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE]
        texts.append("".join(parts))
    return texts


def _squash(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", "\n".join(lines)).strip()


METRICS: Registry[Callable[..., float]] = Registry()


@METRICS.add
def compare_docx_files(first: str | None, second: str | None, **options: Any) -> float:
    """The two documents' paragraphs are the same text (with `ignore_blanks`, the default:
    the whole text with runs of blanks as one), or as alike as rapidfuzz says
    (`fuzzy_match`, `content_only`)."""
    from rapidfuzz import fuzz

    blanks = options.get("ignore_blanks", True)
    fold = options.get("ignore_case", False)
    fuzzy = options.get("fuzzy_match", False)
    if not first or not second:
        return 0
    if first.endswith(".docx") and second.endswith(".docx"):
        opened = _both(first, second)
        if opened is None:
            return 0
        ones, twos = ([p.text for p in d.paragraphs] for d in opened)
    elif first.endswith(".odt") and second.endswith(".odt"):
        try:
            ones, twos = _odt_paragraphs(first), _odt_paragraphs(second)
        except Exception:  # noqa: BLE001 - likewise
            return 0
    else:
        return 0
    if options.get("ignore_order", False):
        ones, twos = sorted(ones), sorted(twos)
    if options.get("delete_empty_lines", False):
        ones, twos = [p for p in ones if p.strip()], [p for p in twos if p.strip()]
    if options.get("content_only", False) or blanks:
        one, two = _squash(ones), _squash(twos)
        if fold:
            one, two = one.lower(), two.lower()
        if options.get("content_only", False) or fuzzy:
            return fuzz.ratio(one, two) / 100.0
        return 1 if one == two else 0
    if len(ones) != len(twos):
        return 0
    if fold:
        ones, twos = [p.lower() for p in ones], [p.lower() for p in twos]
    if fuzzy:
        if not ones:
            return 1.0
        return sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(ones, twos, strict=True)) / len(ones)
    return 1 if ones == twos else 0


@METRICS.add
@_on_both
def compare_docx_tables(first: Any, second: Any) -> float:
    """The same tables: as many, each of the same size, each cell the same text (stripped)."""
    ones, twos = first.tables, second.tables
    if len(ones) != len(twos):
        return 0
    for one, two in zip(ones, twos, strict=True):
        if len(one.rows) != len(two.rows) or len(one.columns) != len(two.columns):
            return 0
        for row in range(len(one.rows)):
            for column in range(len(one.columns)):
                if one.cell(row, column).text.strip() != two.cell(row, column).text.strip():
                    return 0
    return 1


@METRICS.add
def compare_line_spacing(first: str | None, second: str | None) -> float:
    """The same text, and each paragraph's line spacing the gold one's."""
    document = _with_gold_text(first, second)
    gold = _one(second)
    if document is None or gold is None:
        return 0
    ones, twos = document.paragraphs, gold.paragraphs
    if len(ones) != len(twos):
        return 0
    same = all(
        a.paragraph_format.line_spacing == b.paragraph_format.line_spacing
        for a, b in zip(ones, twos, strict=True)
    )
    return 1 if same else 0


@METRICS.add
def compare_font_names(path: str | None, rules: dict[str, Any]) -> float:
    """Every run of every paragraph is in the font named."""
    document = _one(path)
    if document is None:
        return 0
    wanted = rules["font_name"]
    runs = [run for paragraph in document.paragraphs for run in paragraph.runs]
    return 1 if all(run.font.name == wanted for run in runs) else 0


@METRICS.add
def is_first_line_centered(path: str | None) -> float:
    from docx.enum.text import WD_PARAGRAPH_ALIGNMENT

    document = _one(path)
    if document is None:
        return 0
    first = document.paragraphs[0]
    return 1 if first.paragraph_format.alignment == WD_PARAGRAPH_ALIGNMENT.CENTER else 0


@METRICS.add
def contains_page_break(path: str | None, rules: Any) -> float:
    """The document has page breaks (exactly `page_break_count`, when the rule says)."""
    document = _one(path)
    if document is None:
        return 0
    try:
        expected = rules["page_break_count"]
    except Exception:  # noqa: BLE001 - a rule without a count (or no rule): any break
        expected = None
    count = sum(
        1
        for paragraph in document.paragraphs
        for run in paragraph.runs
        for br in run.element.iter(f"{W}br")
        if br.get(f"{W}type") == "page"
    )
    if expected is not None and count != expected:
        return 0
    return 1 if count > 0 else 0


@METRICS.add
def check_italic_font_size_14(first: str | None, second: str | None) -> float:
    """The same text as the gold document, and every italic run 14 points."""
    document = _with_gold_text(first, second)
    if document is None:
        return 0
    for paragraph in document.paragraphs:
        for run in paragraph.runs:
            if run.italic and (run.font.size is None or run.font.size.pt != 14):
                return 0
    return 1


@METRICS.add
def evaluate_strike_through_last_paragraph(first: str | None, second: str | None) -> float:
    """The same text as the gold document, and the last paragraph struck through."""
    document = _with_gold_text(first, second)
    if document is None:
        return 0
    last = document.paragraphs[-1]
    return 1 if all(run.font.strike for run in last.runs) else 0


@METRICS.add
@_on_both
def compare_subscript_contains(first: Any, second: Any) -> float:
    """Some run, at the same place in both documents, is a subscript in both."""
    for one, two in zip(first.paragraphs, second.paragraphs, strict=False):
        for a, b in zip(one.runs, two.runs, strict=False):
            if a.font.subscript and b.font.subscript:
                return 1
    return 0


@METRICS.add
def has_page_numbers_in_footers(path: str | None) -> float:
    """Each section's footer's first paragraph holds a digit."""
    document = _one(path)
    if document is None:
        return 0
    for section in document.sections:
        footer = section.footer
        if footer is None:
            return 0
        text = footer.paragraphs[0].text if footer.paragraphs else ""
        if not any(ch.isdigit() for ch in text):
            return 0
    return 1


@METRICS.add
def find_default_font(path: str | None, rules: dict[str, Any]) -> float:
    """LibreOffice's registrymodifications.xcu names the expected Writer default font."""
    wanted = rules["font_name"]
    if not path:
        return 0
    found = None
    oor = "{http://openoffice.org/2001/registry}"
    try:
        for item in ET.parse(path).getroot().iter("item"):
            if item.get(f"{oor}path") != "/org.openoffice.Office.Writer/DefaultFont":
                continue
            for prop in item.iter("prop"):
                if prop.get(f"{oor}name") == "Standard":
                    for value in prop.findall("value"):
                        found = value.text
    except Exception as error:  # noqa: BLE001 - unreadable: what was found so far, as OSWorld's
        log.info("find_default_font: %s does not read whole: %s", path, error)
    return 1 if found == wanted else 0


@METRICS.add
@_on_both
def compare_docx_images(first: Any, second: Any) -> float:
    """The same images, in the same order, pixel for pixel."""
    from PIL import Image

    def images(document: Any) -> list[bytes]:
        return [
            rel.target_part.blob for rel in document.part.rels.values() if "image" in rel.reltype
        ]

    ones, twos = images(first), images(second)
    if len(ones) != len(twos):
        return 0
    for a, b in zip(ones, twos, strict=True):
        if Image.open(io.BytesIO(a)).tobytes() != Image.open(io.BytesIO(b)).tobytes():
            return 0
    return 1
