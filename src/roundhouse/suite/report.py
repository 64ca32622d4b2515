"""A batch's HTML report (`roundhouse report OUT`, for a folder a batch wrote): its rows, and
for OSWorld's tasks the per-domain table of scores; each task links to its own session
report when it has a log folder."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import jinja2

from roundhouse.logs.report import NotALogFolder
from roundhouse.logs.report.render import folder_video
from roundhouse.suite.results import (
    RESULTS_JSON,
    TaskResult,
    domain_rows,
    read_results,
    suite_rates,
)

BATCH_REPORT = "report.html"

_environment = jinja2.Environment(
    loader=jinja2.PackageLoader("roundhouse.suite", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def is_batch_folder(folder: Path) -> bool:
    return (folder / RESULTS_JSON).is_file()


def write_batch_report(folder: Path) -> Path:
    """Write OUT/report.html for the batch in `folder`; its path."""
    results = read_results(folder)

    def link(result: TaskResult) -> str | None:
        if not result.log_dir:
            return None
        log_dir = Path(result.log_dir)
        target = log_dir / "report.html"
        return quote(Path(os.path.relpath(target, folder.absolute())).as_posix())

    def video(result: TaskResult) -> str | None:
        """The task's video (made now from its step screenshots where it is not yet)."""
        if not result.log_dir or not Path(result.log_dir).is_dir():
            return None
        try:
            made = folder_video(Path(result.log_dir))
        except NotALogFolder:
            return None
        return quote(Path(os.path.relpath(made, folder.absolute())).as_posix()) if made else None

    html = _environment.get_template("batch.html.j2").render(
        folder=str(folder), results=results, domains=domain_rows(results), link=link,
        video=video,
        passed=sum(r.passed for r in results), rates=suite_rates(results),
    )  # fmt: skip
    target = folder / BATCH_REPORT
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(html, encoding="utf-8")
    os.replace(temporary, target)
    return target
