"""A cell of a workbook as OSWorld's table checks read it: its stored value from the file
itself, and its styles by the names check_cell gives them (compare_table's rules in
table.py, the descriptions of sheets in table_rules.py)."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def cell_value(path: str | None, sheet_name: str, coordinate: str) -> Any:
    """A cell's stored value read from the file itself: a number as float, a shared or
    inline string, a formula's cached string, an error's code; None when it is not there."""
    if path is None or not os.path.exists(path):
        return None
    ns = {"m": MAIN_NS}
    try:
        with zipfile.ZipFile(path) as archive:
            strings = _shared_strings(archive)
            workbook = ET.fromstring(archive.read("xl/workbook.xml"))
            ids = {
                s.get("name"): s.get("sheetId") for s in workbook.findall("m:sheets/m:sheet", ns)
            }
            sheet = ET.fromstring(archive.read(f"xl/worksheets/sheet{ids[sheet_name]}.xml"))
    except (zipfile.BadZipFile, KeyError, OSError, ET.ParseError):
        return None
    cell = next(
        (c for c in sheet.iterfind("m:sheetData/m:row/m:c", ns) if c.get("r") == coordinate),
        None,
    )
    if cell is None:
        return None
    kind = cell.get("t")
    stored = cell.find("m:v", ns)
    text = stored.text if stored is not None else None
    try:
        if kind is None or kind == "n":
            return float(text)  # type: ignore[arg-type]
        if kind == "s":
            return strings[int(text)]  # type: ignore[arg-type]
        if kind in ("str", "e"):
            if stored is None:
                raise KeyError("v")
            return text
        if kind == "inlineStr":
            inline = cell.find("m:is/m:t", ns)
            if inline is None:
                raise KeyError("is")
            return inline.text
    except (KeyError, ValueError, TypeError, IndexError):
        return None
    return None


def _shared_strings(archive: zipfile.ZipFile) -> list[str]:
    """The workbook's shared strings, each the text of all its runs; none at all when one
    run holds no text or the part is missing (as OSWorld reads them)."""
    try:
        root = ET.fromstring(archive.read("xl/sharedStrings.xml"))
    except (KeyError, ET.ParseError):
        return []
    strings = []
    for item in root.findall(f"{{{MAIN_NS}}}si"):
        runs = [t.text for t in item.iter(f"{{{MAIN_NS}}}t")]
        if any(run is None for run in runs):
            return []
        strings.append("".join(run or "" for run in runs))
    return strings


FONT_STYLES: dict[str, Callable[[Any], Any]] = {
    "font_name": lambda f: f.name,
    "font_family": lambda f: f.family,
    "font_color": lambda f: f.color.rgb,
    "font_bold": lambda f: f.bold,
    "font_italic": lambda f: f.italic,
    "font_underline": lambda f: f.underline,
    "font_size": lambda f: f.size,
}


def cell_style(name: str, cell: Any, diff: Any = None) -> Any:
    """A style of a cell, as OSWorld's check_cell names them; under a conditional format's
    differential style `diff`, its number format, font and fill (the cell's own for the
    rest), as OSWorld's reads them."""
    from openpyxl.cell.cell import MergedCell

    has_value = cell.value is not None
    styled = cell if diff is None else diff
    if name == "number_format":
        if not has_value or cell.data_type != "n":
            return None
        return cell.number_format if diff is None else diff.numFmt.formatCode
    if name in FONT_STYLES:
        return FONT_STYLES[name](styled.font) if has_value else None
    if name == "fill_type":
        try:
            return styled.fill.tagname
        except AttributeError:
            return None
    if name in ("bgcolor", "fgcolor"):
        try:  # a cell's fill paints its pattern's foreground; a differential one's background
            return (cell.fill.fgColor if diff is None else diff.fill.bgColor).rgb
        except AttributeError:
            return None
    if name == "hyperlink":
        return (cell.hyperlink or "") if has_value else None
    if name == "merge":
        return isinstance(cell, MergedCell)
    raise NotImplementedError(f"Unsupported Style: {name}")
