"""Decide a task's success from the real system: files on disk, commands' output, forms the
task's server received, office documents as their readers open them, windows and controls
read through the desktop's accessibility tree."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roundhouse.config import Settings
from roundhouse.core.polling import within_async
from roundhouse.devices.contract import ControlList, WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools
from roundhouse.devices.shell import ShellTimeout, run_command
from roundhouse.suite.documents import (
    DocumentError,
    cell_text,
    docx_paragraphs,
    same_formula,
    same_value,
    xlsx_cell,
)
from roundhouse.suite.server import read_posted
from roundhouse.suite.tasks import Check

COMMAND_TIMEOUT = 30.0
# Seconds a check of the live system waits for it to catch up with the round's last action:
# a page still loading its title, LibreOffice still writing the file its Save dialog closed.
SETTLE = 10.0
SETTLE_POLL = 0.5
ANSWER_ENV = "RH_ANSWER"  # a check command reads the agent's answer here


@dataclass(frozen=True)
class CheckOutcome:
    passed: bool
    leaves_passed: int
    leaves_total: int
    details: tuple[str, ...]  # one line per leaf check, saying what was found


@dataclass
class CheckContext:
    workdir: Path
    answer: str
    desktop: Desktop | None = None
    posted: Path | None = None  # the record of the task's server, when it serves
    settle: float = 0.0  # seconds a failing check of the live system is tried again (SETTLE)
    _tools: DesktopTools | None = field(default=None, repr=False)

    async def tools(self) -> DesktopTools:
        if self.desktop is None:
            raise CheckError("this check needs a desktop, and the task ran without one")
        if self._tools is None:
            self._tools = await DesktopTools.open(self.desktop, Settings())
        return self._tools

    async def close(self) -> None:
        if self._tools is not None:
            await self._tools.close()
            self._tools = None


class CheckError(RuntimeError):
    pass


async def evaluate(check: Check, context: CheckContext) -> CheckOutcome:
    if check.all is not None or check.any is not None:
        parts = [await evaluate(part, context) for part in (check.all or check.any or [])]
        combine = all if check.all is not None else any
        return CheckOutcome(
            passed=combine(part.passed for part in parts),
            leaves_passed=sum(part.leaves_passed for part in parts),
            leaves_total=sum(part.leaves_total for part in parts),
            details=tuple(line for part in parts for line in part.details),
        )
    passed, found = False, ""

    async def leaf() -> bool:
        nonlocal passed, found
        try:
            passed, found = await _leaf(check, context)
        except (CheckError, DocumentError, OSError, ShellTimeout) as error:
            passed, found = False, f"could not check: {error}"
        return passed

    settle = context.settle if _reads_the_system(check) else 0.0
    await within_async(leaf, settle, every=SETTLE_POLL)
    mark = "pass" if passed else "FAIL"
    return CheckOutcome(passed, int(passed), 1, (f"{mark} {check.kind}: {found}",))


def _reads_the_system(check: Check) -> bool:
    """Whether a leaf reads what may still change after the round ended (the answer does
    not)."""
    return check.answer_contains is None and check.answer_contains_output_of is None


async def _leaf(check: Check, context: CheckContext) -> tuple[bool, str]:
    def path(name: str) -> Path:
        return context.workdir / name  # an absolute name stays absolute

    if check.file_exists is not None:
        target = path(check.file_exists)
        return target.exists(), f"{target} {'exists' if target.exists() else 'is missing'}"
    if check.file_absent is not None:
        target = path(check.file_absent)
        return not target.exists(), f"{target} {'exists' if target.exists() else 'is absent'}"
    if check.file_contains is not None:
        content = path(check.file_contains.path).read_text(errors="replace")
        return (
            check.file_contains.text in content,
            f"{check.file_contains.path} holds {content[:80]!r}",
        )
    if check.file_matches is not None:
        content = path(check.file_matches.path).read_text(errors="replace")
        found = re.search(check.file_matches.pattern, content, re.MULTILINE) is not None
        return found, f"{check.file_matches.path} holds {content[:80]!r}"
    if check.command is not None:
        # The command may judge the answer itself: it gets it in RH_ANSWER.
        env = {**os.environ, ANSWER_ENV: context.answer}
        output = await run_command(check.command.run, context.workdir, COMMAND_TIMEOUT, 20_000, env)
        text = output.stdout + output.stderr
        passed = output.exit_code == check.command.exit_code and (
            check.command.output_contains is None or check.command.output_contains in text
        )
        return passed, f"`{check.command.run}` exited {output.exit_code}: {text.strip()[:80]!r}"
    if check.answer_contains is not None:
        passed = check.answer_contains.casefold() in context.answer.casefold()
        return passed, f"the answer is {context.answer[:100]!r}"
    if check.answer_contains_output_of is not None:
        output = await run_command(
            check.answer_contains_output_of, context.workdir, COMMAND_TIMEOUT, 20_000
        )
        expected = output.stdout.strip()
        passed = bool(expected) and expected in context.answer
        return (
            passed,
            f"it printed {expected[:60]!r}; the answer is {context.answer[:80]!r}",
        )
    if check.posted is not None or check.docx_contains is not None or check.xlsx_cell is not None:
        return _document_leaf(check, context)
    return await _desktop_leaf(check, context)


def _document_leaf(check: Check, context: CheckContext) -> tuple[bool, str]:
    """What the task's server received, and office documents as their readers open them."""
    if check.posted is not None:
        spec = check.posted
        if context.posted is None:
            raise CheckError("the task has no server whose record to read")
        forms = [r for r in read_posted(context.posted) if r.get("path") == spec.path]
        passed = any(
            all(form.get("fields", {}).get(k) == v for k, v in spec.fields.items())
            for form in forms
        )
        received = [form.get("fields") for form in forms]
        return passed, f"{spec.path} received {received or 'nothing'}"
    if check.docx_contains is not None:
        paragraphs = docx_paragraphs(context.workdir / check.docx_contains.path)
        text = "\n".join(paragraphs)
        return (
            check.docx_contains.text in text,
            f"{check.docx_contains.path} holds the paragraphs {paragraphs[:6]}",
        )
    assert check.xlsx_cell is not None
    spec_cell = check.xlsx_cell
    cell = xlsx_cell(context.workdir / spec_cell.path, spec_cell.cell, spec_cell.sheet)
    passed = (spec_cell.value is None or same_value(cell.value, spec_cell.value)) and (
        spec_cell.formula is None or same_formula(cell.formula, spec_cell.formula)
    )
    formula = f" from {cell.formula}" if cell.formula else ""
    return passed, f"{spec_cell.path} {spec_cell.cell} is {cell_text(cell.value)!r}{formula}"


async def _desktop_leaf(check: Check, context: CheckContext) -> tuple[bool, str]:
    tools = await context.tools()
    windows = [WindowInfo.model_validate(item) for item in await tools.list_windows()]
    if check.window_title is not None:
        titles = [w.title for w in windows]
        return any(check.window_title in title for title in titles), f"windows: {titles}"
    wanted = (
        check.control_text.window
        if check.control_text
        else check.tree_text.window
        if check.tree_text
        else ""
    )
    window = next((w for w in windows if wanted in w.title), None)
    if window is None:
        return False, f"no window titled like {wanted!r}; windows: {[w.title for w in windows]}"
    if check.control_text is not None:
        spec = check.control_text
        listed = ControlList.model_validate(await tools.get_controls(window.xid))
        control = next((c for c in listed.controls if c.name == spec.name), None)
        if control is None:
            return False, f"no control named {spec.name!r} in {window.title!r}"
        text = control.text or ""
        passed = (spec.equals is None or text == spec.equals) and (
            spec.contains is None or spec.contains in text
        )
        return passed, f"{spec.name!r} holds {text!r}"
    assert check.tree_text is not None
    tree: Mapping[str, Any] = await tools.get_ui_tree(window.xid)
    dumped = json.dumps(tree, ensure_ascii=False)
    found = check.tree_text.contains in dumped
    return (
        found,
        f"{check.tree_text.contains!r} {'is' if found else 'is not'} in {window.title!r}",
    )
