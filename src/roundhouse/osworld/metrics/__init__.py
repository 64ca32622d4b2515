"""OSWorld's metrics, written anew: each takes what its getters read (a value, or the local
path of a file) and gives a score in 0..1, as OSWorld's function of the same name does for
the same inputs (tests/osworld/test_metrics_agree.py runs both on the same inputs).

    metric(result, expected, **options)   # when the task names an `expected` getter
    metric(result, **options)             # when it does not

The modules: basic.py (text, lists, JSON, the os domain's), table.py (spreadsheets),
docs.py and docs_checks.py (Word documents), chrome.py (Chrome's settings and pages),
images.py (GIMP's), media.py (VLC's), mail.py (Thunderbird's), pdfs.py (PDFs and
archives), slides.py (Impress's). The heavier libraries (openpyxl, pandas, python-docx,
lxml, rapidfuzz, scikit-image, PyMuPDF...) load with the metric that needs them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from roundhouse.osworld.metrics import (
    basic,
    chrome,
    docs,
    docs_checks,
    images,
    mail,
    media,
    pdfs,
    slides,
    table,
)
from roundhouse.osworld.registry import Registry

Metric = Callable[..., float]

METRICS: Registry[Metric] = Registry()
for _module in (basic, table, docs, docs_checks, chrome, images, media, mail, pdfs, slides):
    METRICS.include(_module.METRICS)


def unsupported_options(name: str, options: dict[str, Any]) -> list[str]:
    """What of a metric's options roundhouse does not carry out (compare_table's rule types
    not written here, for one): empty when it does them all."""
    check = {"compare_table": table.unsupported}.get(name)
    return check(options) if check is not None else []
