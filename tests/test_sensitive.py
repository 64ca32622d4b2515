"""Which actions are asked about before they run, whatever the model answered."""

from __future__ import annotations

import pytest

from roundhouse.agents.sensitive import sensitive_reason
from roundhouse.devices.contract import Control, Rect, ToolName


def click(name: str) -> str | None:
    control = Control(
        label=1,
        id="a:1",
        role="push button",
        name=name,
        rect=Rect(left=0, top=0, right=9, bottom=9),
    )
    return sensitive_reason(ToolName.CLICK_CONTROL, {"id": 1, "name": name}, control)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("Delete", "deletes something"),
        ("Move to Trash", "deletes something"),
        ("Format…", "deletes something"),
        ("Format Disk…", "deletes something"),
        ("Format the drive", "deletes something"),
        ("Submit", "sends or submits something"),
        ("Replace", "overwrites an existing file"),
        ("Close", "closes a window"),
    ],
)
def test_what_destroys_sends_or_closes_is_asked_about(name: str, reason: str) -> None:
    said = click(name)
    assert said is not None and reason in said


@pytest.mark.parametrize(
    "name",
    # LibreOffice's "Keep current format" question, its Format menu and a toolbar button:
    # a file format is no disk to wipe.
    ["Use Word 2007–365 Format!", "Use ODF Format!", "Format", "Number Format", "Save", "OK"],
)
def test_a_file_format_is_not_a_disk_format(name: str) -> None:
    assert click(name) is None
