"""The HTML trajectory report of a session's log folder (`roundhouse report LOGDIR`)."""

from roundhouse.logs.report.build import SessionView, read_session
from roundhouse.logs.report.logs import NotALogFolder
from roundhouse.logs.report.render import REPORT_NAME, render, write_report

__all__ = [
    "REPORT_NAME",
    "NotALogFolder",
    "SessionView",
    "read_session",
    "render",
    "write_report",
]
