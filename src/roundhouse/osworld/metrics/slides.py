"""Impress's metrics: presentations (.pptx, read with python-pptx as OSWorld's are) and
LibreOffice's settings (registrymodifications.xcu).

compare_pptx_files(result, expected, **options) is 1 when the two presentations agree on
everything its options examine (each on unless said, but the position checks):
- the number of slides; per slide its background colour (its own or its master's solid
  fill), its notes' text, its number of shapes;
- per shape: its box (left, top, width, height) within `approximately_tolerance` (0.005,
  relative); a table's size, and per cell its paragraphs' runs' colour, bold, italic and
  underline; a text shape's text, paragraphs, alignment (none counts as left), level, and
  per run its font name, size, bold, italic (none and False alike), colour, underline,
  strike-through, and the slide's bullets (level, character, text);
- the text shapes found through groups too, with their alignment.
The task-specific position checks (examine_title_bottom_position, ..._table_bottom_...,
..._right_..., ..._top_..., examine_shape_for_shift_size, examine_image_size,
examine_modify_height) are OSWorld's, with their slide numbers and limits.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from math import sqrt
from typing import Any

from roundhouse.osworld.registry import Registry

METRICS: Registry[Callable[..., float]] = Registry()
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
OOR = "http://openoffice.org/2001/registry"
NS = {"a": A, "p": P}
PICTURE, TABLE, AUTO_SHAPE, PLACEHOLDER_TABLE = 13, 19, 1, 19
SOLID, BACKGROUND = 1, 5  # python-pptx's fill types
EMU_INCH = 914400


def _presentation(path: str) -> Any:
    from pptx import Presentation

    return Presentation(path)


def _close(one: float, two: float, tolerance: float) -> bool:
    if one == two:
        return True
    if one == 0 or two == 0:
        return False
    return abs(one - two) / max(abs(one), abs(two)) <= tolerance


def _same_box(a: Any, b: Any, tolerance: float) -> bool:
    return all(
        _close(getattr(a, side), getattr(b, side), tolerance)
        for side in ("left", "top", "width", "height")
    )


def _background(slide: Any) -> Any:
    fill = slide.background.fill
    if fill.type == SOLID:
        return fill.fore_color.rgb
    if fill.type == BACKGROUND:
        master = slide.slide_layout.slide_master.background.fill
        return master.fore_color.rgb if master.type == SOLID else None
    return None


def _text_shapes(shapes: Any) -> list[Any]:
    found = []
    for shape in shapes:
        if hasattr(shape, "text") and hasattr(shape, "text_frame"):
            found.append(shape)
        if hasattr(shape, "shapes"):
            found += _text_shapes(shape.shapes)
    return found


def _falsy_alike(one: Any, two: Any) -> bool:
    """None and False count as the same (bold, italic)."""
    return one == two or (one in (None, False) and two in (None, False))


def _underline_alike(one: Any, two: Any) -> bool:
    if one == two:
        return True
    if one is not None and two is not None:
        return False
    return not ((one is None and two is True) or (one is True and two is None))


def _colour(run: Any) -> tuple[bool, Any]:
    """(whether the run's colour has an rgb at all, the rgb); asking may raise, as in
    OSWorld's (a theme colour's rgb)."""
    color = run.font.color
    return (True, color.rgb) if hasattr(color, "rgb") else (False, None)


def _alignment(paragraph: Any) -> Any:
    from pptx.enum.text import PP_ALIGN

    return PP_ALIGN.LEFT if paragraph.alignment is None else paragraph.alignment


def _bullets(xml: str) -> list[tuple[Any, str, str, str]]:
    root = ET.fromstring(xml)
    found = []
    for paragraph in root.findall(".//a:p", NS):
        props = paragraph.find("a:pPr", NS)
        if props is not None:
            level: Any = props.get("lvl")
            char = props.find("a:buChar", NS)
            colour = props.find("a:buClr/a:srgbClr", NS)
            mark = char.get("char") if char is not None else "No Bullet"
            shade = colour.get("val") if colour is not None else "No Color"
        else:
            level, mark, shade = "No Level", "No Bullet", "No Color"
        words = "".join(t.text or "" for t in paragraph.findall(".//a:t", NS))
        if words.strip():
            found.append((level, str(mark), words, str(shade)))
    return found


def _same_bullets(one: Any, two: Any) -> bool:
    """The slide's bullets alike (their colour aside); a slide that cannot be read as XML
    passes, as in OSWorld's."""
    try:
        first, second = _bullets(one.part.blob.decode("utf-8")), _bullets(two.part.blob.decode())
    except Exception:  # noqa: BLE001 - OSWorld's passes over any failure here
        return True
    if len(first) != len(second):
        return False
    for (l1, c1, t1, _), (l2, c2, t2, _) in zip(first, second, strict=True):
        if t1 != t2 or c1 != c2 or ("0" if l1 is None else l1) != ("0" if l2 is None else l2):
            return False
    return True


class _Options:
    def __init__(self, options: dict[str, Any]) -> None:
        self.raw = options
        self.tolerance = float(options.get("approximately_tolerance", 0.005))

    def __call__(self, name: str, default: bool = True) -> bool:
        return bool(self.raw.get(name, default))


@METRICS.add
def compare_pptx_files(result: str, expected: str, **options: Any) -> float:
    one, two = _presentation(result), _presentation(expected)
    on = _Options(options)
    if len(one.slides) != len(two.slides) and on("examine_number_of_slides"):
        return 0.0
    for number, (s1, s2) in enumerate(zip(one.slides, two.slides, strict=False), start=1):
        if _background(s1) != _background(s2) and on("examine_background_color"):
            return 0.0
        # (python-pptx makes a notes slide when there is none: the text is "" then)
        notes = [str(s.notes_slide.notes_text_frame.text) for s in (s1, s2)]
        if notes[0].strip() != notes[1].strip() and on("examine_note"):
            return 0.0
        if len(s1.shapes) != len(s2.shapes):
            return 0.0
        for a, b in zip(s1.shapes, s2.shapes, strict=True):
            if not _same_shape(a, b, number, on):
                return 0.0
        texts1, texts2 = _text_shapes(s1.shapes), _text_shapes(s2.shapes)
        if on("examine_alignment") and len(texts1) == len(texts2):
            for a, b in zip(texts1, texts2, strict=True):
                if a.text.strip() != b.text.strip() and on("examine_text"):
                    return 0.0
                if len(a.text_frame.paragraphs) != len(b.text_frame.paragraphs):
                    return 0.0
                pairs = zip(a.text_frame.paragraphs, b.text_frame.paragraphs, strict=True)
                if any(_alignment(p1) != _alignment(p2) for p1, p2 in pairs):
                    return 0.0
        elif len(texts1) != len(texts2):
            return 0.0
    return 1.0


def _same_shape(a: Any, b: Any, slide: int, on: _Options) -> bool:
    tol = on.tolerance
    box = _same_box(a, b, tol)
    both_text = hasattr(a, "text") and hasattr(b, "text")
    if on("examine_title_bottom_position", False):
        if both_text and a.text == b.text:
            if a.text == "Product Comparison" and (a.top <= b.top or a.top < 3600000):
                return False
        elif not box:
            return False
    if on("examine_table_bottom_position", False):
        if slide == 3 and a.shape_type == TABLE and b.shape_type == TABLE:
            if a.top <= b.top or a.top < 3600000:
                return False
        elif not box:
            return False
    if on("examine_right_position", False) and slide == 2:
        if not hasattr(a, "text") and not hasattr(b, "text"):
            if a.left <= b.left or a.left < 4320000:
                return False
    if on("examine_top_position", False) and slide == 2:
        if a.shape_type == PICTURE and b.shape_type == PICTURE:
            if a.top >= b.top or a.top > 1980000:
                return False
    if on("examine_shape_for_shift_size", False) and not box:
        kept = both_text and a.text == b.text == "Elaborate on what you want to discuss."
        if not kept:
            return False
    if not box and on("examine_shape"):
        return False
    if on("examine_image_size", False):
        if a.shape_type == PICTURE and b.shape_type == PICTURE:
            if not (_close(a.width, b.width, tol) and _close(a.height, b.height, tol)):
                return False
        elif not box:
            return False
    if on("examine_modify_height", False):
        untexted = not hasattr(a, "text") and not hasattr(b, "text")
        if untexted or (a.shape_type == 5 and b.shape_type == 5):
            if not _close(a.height, b.height, tol):
                return False
        elif not box:
            return False
    if a.shape_type == TABLE and not _same_table(a.table, b.table, on):
        return False
    if both_text:
        return _same_text(a, b, on)
    return True


def _same_table(one: Any, two: Any, on: _Options) -> bool:
    if len(one.rows) != len(two.rows) or len(one.columns) != len(two.columns):
        return False
    for row in range(len(one.rows)):
        for column in range(len(one.columns)):
            first = one.cell(row, column).text_frame.paragraphs
            second = two.cell(row, column).text_frame.paragraphs
            if len(first) != len(second):
                return False
            for p1, p2 in zip(first, second, strict=True):
                if len(p1.runs) != len(p2.runs):
                    return False
                for r1, r2 in zip(p1.runs, p2.runs, strict=True):
                    c1, c2 = _colour(r1), _colour(r2)
                    if c1[0] and c2[0] and c1[1] != c2[1] and on("examine_color_rgb"):
                        return False
                    if not _falsy_alike(r1.font.bold, r2.font.bold):
                        return False
                    if not _falsy_alike(r1.font.italic, r2.font.italic):
                        return False
                    if not _underline_alike(r1.font.underline, r2.font.underline):
                        return False
    return True


def _same_text(a: Any, b: Any, on: _Options) -> bool:
    if a.text.strip() != b.text.strip() and on("examine_text"):
        return False
    if len(a.text_frame.paragraphs) != len(b.text_frame.paragraphs):
        return False
    for p1, p2 in zip(a.text_frame.paragraphs, b.text_frame.paragraphs, strict=True):
        if on("examine_alignment") and _alignment(p1) != _alignment(p2):
            return False
        if p1.text != p2.text and on("examine_text"):
            return False
        if p1.level != p2.level and on("examine_indent"):
            return False
        if len(p1.runs) != len(p2.runs):
            return False
        for r1, r2 in zip(p1.runs, p2.runs, strict=True):
            if not _same_run(r1, r2, on):
                return False
    return True


def _same_run(r1: Any, r2: Any, on: _Options) -> bool:
    f1, f2 = r1.font, r2.font
    if f1.name != f2.name and on("examine_font_name"):
        return False
    if f1.size != f2.size and on("examine_font_size"):
        return False
    if on("examine_font_bold") and not _falsy_alike(f1.bold, f2.bold):
        return False
    if on("examine_font_italic") and not _falsy_alike(f1.italic, f2.italic):
        return False
    c1, c2 = _colour(r1), _colour(r2)
    if c1[0] and c2[0] and c1[1] != c2[1] and on("examine_color_rgb"):
        return False
    if on("examine_font_underline") and not _underline_alike(f1.underline, f2.underline):
        return False
    strike = [f._element.attrib.get("strike", "noStrike") for f in (f1, f2)]
    if strike[0] != strike[1] and on("examine_strike_through"):
        return False
    return not on("examine_bullets") or _same_bullets(r1, r2)


# ---------------------------------------------------------------- one presentation


@METRICS.add
def check_slide_orientation_Portrait(path: str) -> float:  # noqa: N802 - OSWorld's name
    presentation = _presentation(path)
    return 1.0 if presentation.slide_width < presentation.slide_height else 0.0


@METRICS.add
def check_image_stretch_and_center(modified: str, original: str) -> float:
    before, after = _presentation(original), _presentation(modified)
    images = [s for s in before.slides[0].shapes if s.shape_type == PICTURE]
    if not images:
        return 0.0
    moved = None
    for candidate in (s for s in after.slides[0].shapes if s.shape_type == PICTURE):
        if images[0].image.blob == candidate.image.blob:
            moved = candidate  # (the last match, as OSWorld's loop keeps)
    if moved is None:
        return 0.0
    half_inch = EMU_INCH / 2
    width, height = before.slide_width, before.slide_height
    off = (
        abs(moved.width - width) > half_inch or abs(moved.height - height) > half_inch
        or abs(moved.left - (width - moved.width) / 2) > half_inch
        or abs(moved.top - (height - moved.height) / 2) > half_inch
    )  # fmt: skip
    return 0.0 if off else 1.0


@METRICS.add
def evaluate_presentation_fill_to_rgb_distance(path: str, rules: dict[str, Any]) -> float:
    target = rules["rgb"]
    original = rules.get("original_rgb")
    full = sqrt(3 * 255**2)

    def distance(slide: Any) -> float:
        fill = slide.background.fill
        if fill.type == BACKGROUND:
            fill = slide.slide_layout.slide_master.background.fill
            if fill.type != SOLID:
                return 1.0
        elif fill.type != SOLID:
            return 1.0
        try:
            colour = fill.fore_color.rgb if hasattr(fill.fore_color, "rgb") else None
        except Exception:  # noqa: BLE001 - a colour without an rgb counts as none, as OSWorld's
            colour = None
        if colour is None:
            return 1.0
        if original is not None and tuple(colour) == tuple(original):
            return 1.0
        return sqrt(sum((c - t) ** 2 for c, t in zip(colour, target, strict=False))) / full

    slides = _presentation(path).slides
    return 1 - sum(distance(slide) for slide in slides) / len(slides)


@METRICS.add
def check_transition(path: str, rules: dict[str, Any]) -> float:
    with zipfile.ZipFile(path) as archive:
        name = f"ppt/slides/slide{rules['slide_idx'] + 1}.xml"
        if name not in archive.namelist():
            return 0.0
        root = ET.fromstring(archive.read(name))
    transition = root.find(".//p:transition", NS)
    if transition is None:
        return 0.0
    return 1.0 if transition.find(f".//p:{rules['transition_type']}", NS) is not None else 0.0


@METRICS.add
def check_page_number_colors(path: str, rules: dict[str, Any]) -> float:
    with zipfile.ZipFile(path) as archive:
        root = ET.fromstring(archive.read("ppt/slideMasters/slideMaster1.xml"))
    colours = root.findall(".//a:solidFill//a:srgbClr", NS)
    value = colours[-2].get("val")  # (OSWorld's pick: the second last solid colour)
    if value is None:
        return 0.0
    r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))  # (from the 2nd character, as theirs)
    tests = {
        "red": r > g + 50 and r > b + 50, "blue": b > g + 50 and b > r + 50,
        "green": g > r + 50 and g > b + 50, "black": r < 50 and g < 50 and b < 50,
    }  # fmt: skip
    return 0.0 if rules["color"] in tests and not tests[rules["color"]] else 1.0


# ---------------------------------------------------------------- LibreOffice's settings


@METRICS.add
def check_presenter_console_disable(path: str) -> float:
    try:
        root = ET.parse(path).getroot()
        found = root.findall(
            ".//item[@oor:path='/org.openoffice.Office.Impress/Misc/Start']"
            "/prop[@oor:name='EnablePresenterScreen']", {"oor": OOR},
        )  # fmt: skip
        for prop in found:
            value = prop.find("value")
            return 1.0 if value is not None and (value.text or "").lower() == "false" else 0.0
        return 0.0
    except Exception:  # noqa: BLE001 - OSWorld's scores any failure 0
        return 0.0


@METRICS.add
def check_auto_saving_time(path: str, rules: dict[str, Any]) -> float:
    """None (which the evaluator cannot score) for a file missing or not XML, as OSWorld's."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, FileNotFoundError):
        return None  # type: ignore[return-value]
    interval = None
    for item in root.findall(".//item"):
        if item.get(f"{{{OOR}}}path") != "/org.openoffice.Office.Common/Save/Document":
            continue
        for prop in item.findall(".//prop"):
            if prop.get(f"{{{OOR}}}name") == "AutoSaveTimeIntervall":
                value = prop.find(".//value")
                if value is None:
                    raise AttributeError("AutoSaveTimeIntervall has no value")
                interval = value.text
                break
    if interval is None:
        return 0.0
    return 1.0 if int(interval) == rules["minutes"] else 0.0


@METRICS.add
def check_left_panel(tree: str) -> float:
    """Impress's slide pane shows: a document frame named "Slides View" in the tree."""
    root = ET.fromstring(tree)
    shown = any(f.attrib.get("name") == "Slides View" for f in root.iter("document-frame"))
    return 1.0 if shown else 0.0
