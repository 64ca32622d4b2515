"""PDF and archive metrics, reading PDFs with the libraries OSWorld's read them with (the
text each extracts is what is compared):
- compare_pdfs: the mean over pairs of rapidfuzz's ratio of the PDFs' text (PyMuPDF), a
  pair that cannot be read adding 0;
- check_pdf_pages: the page count (pypdf) against a number by an operator's name;
- compare_pdf_images: the images embedded in both PDFs, pair by pair, alike by perceptual
  hash (a difference of at most 5): the share alike (1 for two PDFs without images; a
  PDF that cannot be read raises, as OSWorld's does);
- compare_archive: the same file names in both archives (or in one folder of each), each
  pair scored by the metric of `file_type` (text, pdf, docx, ppt, image, csv, table, audio,
  video), the mean;
- compare_zip_files: the same names, and each pair of files the same bytes, a PDF pair's
  text (pypdf) at least 95% alike (difflib).
"""

from __future__ import annotations

import io
import logging
import operator
import os
import shutil
import zipfile
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from roundhouse.osworld.registry import Registry

log = logging.getLogger(__name__)
METRICS: Registry[Callable[..., float]] = Registry()
HASH_ALIKE = 5
PDF_ALIKE = 0.95
ARCHIVE_METRICS = {
    "text": "compare_text_file", "pdf": "compare_pdfs", "docx": "compare_docx_files",
    "ppt": "compare_pptx_files", "image": "compare_images", "csv": "compare_csv",
    "table": "compare_table", "audio": "compare_audios", "video": "compare_videos",
}  # fmt: skip


def pdf_text(path: str) -> str:
    import pymupdf as fitz

    with fitz.open(path) as pdf:
        return "".join(page.get_text() for page in pdf).strip()


@METRICS.add
def compare_pdfs(first: Any, second: Any) -> float:
    from rapidfuzz import fuzz

    if not isinstance(second, list):
        first, second = [first], [second]
    score = 0.0
    for one, two in zip(first, second, strict=False):
        try:
            score += fuzz.ratio(pdf_text(one), pdf_text(two)) / 100
        except Exception as error:  # noqa: BLE001 - OSWorld's adds 0 for a pair it cannot read
            log.info("compare_pdfs: %s and %s: %s", one, two, error)
    return score / len(second)


@METRICS.add
def check_pdf_pages(path: str | None, rules: dict[str, Any]) -> float:
    from pypdf import PdfReader

    if path is None:
        return 0.0
    pages = len(PdfReader(path).pages)
    return float(getattr(operator, rules["relation"])(pages, rules["ref_value"]))


def pdf_images(path: str) -> list[Any]:
    import pymupdf as fitz
    from PIL import Image

    images = []
    with fitz.open(path) as pdf:
        for page in pdf:
            for entry in page.get_images(full=True):
                data = pdf.extract_image(entry[0])["image"]
                try:
                    images.append(Image.open(io.BytesIO(data)))
                except Exception as error:  # noqa: BLE001 - OSWorld's leaves such an image out
                    log.info("compare_pdf_images: an image of %s: %s", path, error)
    return images


@METRICS.add
def compare_pdf_images(first: str | None, second: str | None, **options: Any) -> float:
    import imagehash

    if not first or not second or not (os.path.exists(first) and os.path.exists(second)):
        return 0.0
    # A PDF that cannot be read raises, as OSWorld's does (its clean-up of a failed read
    # removes its scratch folder twice, and the second raises).
    mine, theirs = pdf_images(first), pdf_images(second)
    if len(mine) != len(theirs):
        return 0.0
    if not mine:
        return 1.0
    pairs = zip(mine, theirs, strict=True)
    alike = sum(bool(imagehash.phash(a) - imagehash.phash(b) <= HASH_ALIKE) for a, b in pairs)
    return alike / len(mine)


@METRICS.add
def compare_archive(predicted: str | None, gold: str, **options: Any) -> float:
    from roundhouse.osworld.metrics import METRICS as ALL

    inner = options.pop("file_path", "")
    if not predicted:
        return 0.0
    mine = os.path.splitext(predicted)[0] + "_pred"
    theirs = os.path.splitext(gold)[0] + "_gold"
    shutil.rmtree(mine, ignore_errors=True)
    os.makedirs(mine)
    shutil.unpack_archive(predicted, mine)
    if not os.path.exists(theirs):  # unpacked once, as OSWorld's keeps it
        os.makedirs(theirs)
        shutil.unpack_archive(gold, theirs)
    names = sorted(os.listdir(os.path.join(mine, inner)))
    if names != sorted(os.listdir(os.path.join(theirs, inner))):
        return 0.0
    kind = options.pop("file_type", "text")
    if kind not in ARCHIVE_METRICS:
        raise ValueError(f"[ERROR]: not support file type: {kind}")
    metric = ALL[ARCHIVE_METRICS[kind]]
    total = sum(
        metric(os.path.join(mine, inner, name), os.path.join(theirs, inner, name), **options)
        for name in names
    )
    return total / len(names)


def _pdf_bytes_text(data: bytes) -> str:
    from pypdf import PdfReader

    return "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


@METRICS.add
def compare_zip_files(actual: str | None, expected: str, **options: Any) -> float:
    if not actual:
        return 0.0
    with zipfile.ZipFile(actual) as one, zipfile.ZipFile(expected) as two:
        names = set(one.namelist())
        if names != set(two.namelist()):
            return 0.0
        for name in names:
            mine, theirs = one.read(name), two.read(name)
            if Path(name).suffix.lower() == ".pdf":
                ratio = SequenceMatcher(None, _pdf_bytes_text(mine), _pdf_bytes_text(theirs))
                if ratio.ratio() < PDF_ALIKE:
                    return 0.0
            elif mine != theirs:
                return 0.0
    return 1.0
