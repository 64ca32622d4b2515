"""Office documents as a check reads them: the text of a Word document, a spreadsheet
cell's value and formula. The readers (python-docx, openpyxl) load only when such a check
runs; without them the check says what to install.
"""

from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What reading a file that is not the zip of XML parts it claims to be raises (lxml's and
# the standard library's XML errors are SyntaxErrors).
_NOT_A_PACKAGE = (zipfile.BadZipFile, KeyError, ValueError, SyntaxError, OSError)


class DocumentError(RuntimeError):
    """The document cannot be read as asked; the message says why."""


def docx_paragraphs(path: Path) -> list[str]:
    """The text of each paragraph of a .docx, in order (tables' cells included, after)."""
    with _reader("python-docx"):
        import docx
    _must_exist(path)
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, *_NOT_A_PACKAGE) as error:
        why = f"{type(error).__name__}: {error}"
        raise DocumentError(f"{path} is no Word document: {why}") from None
    texts = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        texts += [cell.text for row in table.rows for cell in row.cells]
    return texts


@dataclass(frozen=True)
class Cell:
    value: Any  # as last calculated and saved by the application (None: empty)
    formula: str | None  # "=SUM(A1:A2)", or None when the cell holds a plain value


def xlsx_cell(path: Path, name: str, sheet: str | None = None) -> Cell:
    """One cell of an .xlsx workbook: its saved value and its formula, if it has one."""
    with _reader("openpyxl"):
        import openpyxl
        from openpyxl.utils.exceptions import InvalidFileException
    _must_exist(path)
    try:
        # Twice: formulas as written, then the values the application calculated and saved.
        written = openpyxl.load_workbook(path, data_only=False, read_only=True)
        calculated = openpyxl.load_workbook(path, data_only=True, read_only=True)
    except (InvalidFileException, *_NOT_A_PACKAGE) as error:
        why = f"{type(error).__name__}: {error}"
        raise DocumentError(f"{path} is no .xlsx workbook: {why}") from None
    try:
        titles = written.sheetnames
        title = sheet if sheet is not None else titles[0]
        if title not in titles:
            raise DocumentError(f"{path} has no sheet {title!r}; its sheets: {titles}")
        raw = _value(written[title], name)
        value = _value(calculated[title], name)
    finally:
        written.close()
        calculated.close()
    formula = raw if isinstance(raw, str) and raw.startswith("=") else None
    return Cell(value=value, formula=formula)


def _value(sheet: Any, name: str) -> Any:
    """A cell's value by name; a read-only sheet gives an empty cell past its last row."""
    return getattr(sheet[name], "value", None)


def cell_text(value: Any) -> str:
    """A cell's value as a person reads it: 60.0 is "60", None is ""."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def same_value(found: Any, expected: str) -> bool:
    """Whether a cell holds `expected`: as numbers when both are numbers, else as text."""
    if isinstance(found, int | float) and not isinstance(found, bool):
        try:
            return float(expected) == float(found)
        except ValueError:
            return False
    return cell_text(found) == expected


def same_formula(found: str | None, expected: str) -> bool:
    """Formulas compare without spaces and case: "=sum(A1:A2)" is "=SUM(A1:A2)"."""

    def plain(text: str) -> str:
        return "".join(text.split()).casefold()

    return found is not None and plain(found) == plain(expected)


@contextlib.contextmanager
def _reader(package: str) -> Iterator[None]:
    """Around the imports of a reader (the pip `package`): when it is not installed, a
    DocumentError saying so and how to install it, not an ImportError."""
    try:
        yield
    except ImportError:
        raise DocumentError(
            f"{package} is not installed; the suite's document checks need it "
            "(pip install 'roundhouse[suite]')"
        ) from None


def _must_exist(path: Path) -> None:
    if not path.exists():
        raise DocumentError(f"{path} does not exist")
