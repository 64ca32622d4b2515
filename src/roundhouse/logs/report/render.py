"""The session view rendered as one HTML file, through a Jinja2 template (package data).

Everything from the logs is escaped: a thought or a shell's output that contains HTML
shows as text. Images are linked by relative file name, not inlined, so a report of a
long GUI session stays small; they sit beside report.html in the log folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from roundhouse.logs.report.build import SessionView, StepView, read_session
from roundhouse.logs.video import SessionVideo, session_video

REPORT_NAME = "report.html"

_environment = jinja2.Environment(
    loader=jinja2.PackageLoader("roundhouse.logs.report", "templates"),
    autoescape=True,  # the template's name ends in .j2, so say it outright
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def duration(milliseconds: float) -> str:
    if milliseconds < 1000:
        return f"{milliseconds:.0f} ms"
    return f"{milliseconds / 1000:.1f} s"


def arguments_json(arguments: dict[str, Any]) -> str:
    """Short arguments on one line beside the action; long ones spread out, one per line."""
    line = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(line) <= 90:
        return line
    return json.dumps(arguments, indent=1, ensure_ascii=False, default=str)


_environment.filters["duration"] = duration
_environment.filters["arguments_json"] = arguments_json


def render(session: SessionView, link_prefix: str = "", video: SessionVideo | None = None) -> str:
    """The report's HTML; link_prefix leads from where it is written to the log folder."""

    def href(name: str) -> str:
        return quote(link_prefix + name)

    template = _environment.get_template("report.html.j2")
    return template.render(session=session, href=href, video=video)


def render_step(view: StepView, href: Callable[[str], str]) -> str:
    """One step's card, as report.html shows it (the watch page shows it as it is taken)."""
    card = _environment.get_template("step_card.html.j2").make_module({"href": href})
    return str(card.step_card(view))  # type: ignore[attr-defined]


def write_report(log_dir: Path, out: Path | None = None) -> Path:
    """Write the report of the session in log_dir (LOGDIR/report.html by default; `out`
    may be a file or a folder) and return its path. Raises NotALogFolder when log_dir is
    not a session's log folder, OSError when the report cannot be written."""
    session = read_session(log_dir)
    target = (out or log_dir / REPORT_NAME).absolute()
    if target.is_dir():  # --out FOLDER: the report goes in it under its usual name
        target = target / REPORT_NAME
    prefix = Path(os.path.relpath(log_dir.absolute(), target.parent)).as_posix()
    video = _video(log_dir, session)  # made now, where it is not yet
    html = render(session, "" if prefix == "." else prefix + "/", video)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written whole and then moved in place: a browser never sees half a report.
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(html, encoding="utf-8")
    os.replace(temporary, target)
    return target


def _video(log_dir: Path, session: SessionView) -> SessionVideo | None:
    steps = [view.record for round_ in session.rounds for view in round_.steps]
    return session_video(log_dir, steps, session.files)


def folder_video(log_dir: Path) -> Path | None:
    """The session's video (its recording, else one made now from its step screenshots,
    logs/video.py), for a batch's report and page; None where there is none.
    NotALogFolder where log_dir is none."""
    video = _video(log_dir, read_session(log_dir))
    return log_dir / video.name if video is not None else None
