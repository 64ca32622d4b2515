"""The offline planner's host half: a desktop request split into subtasks, one per
application, each ASSIGNed in turn.

A request is split into operations ("open the text editor", "type Hello", "save it as
/tmp/a.txt", "click the Save button", "press ctrl+s", "close the window", and in a
browser, a spreadsheet or a file manager: "go to URL", "tell me the Price of Pears",
"type 12 into cell A1", "create a folder named X", "rename A to B": offline_apps). The host
groups them by application and ASSIGNs each group, in the words of its operations (the
subtask people read in the prompts and logs); the group itself, typed, is `Handed` to the
application's planner (subtask.py), which carries it out and never reads the words again.
A value read in one application ("tell me the Price of Pears") is what "that price" means
in the next one's subtask. Pure logic: no I/O; what the planner handed out is kept by the
model (model.py), in memory.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from roundhouse.devices.contract import ToolName
from roundhouse.models.observation import (
    NOT_RUN,
    HostObservation,
    PastStep,
    ShellObservation,
)
from roundhouse.models.offline.intents import read_request
from roundhouse.models.offline.ops import Failed, Op
from roundhouse.models.offline.several import Planned, acts, assumed, one_answer
from roundhouse.models.offline.shell import answer, fail, plan_shell
from roundhouse.models.references import StepOutput, printed, said

GUI_UNDERSTOOD = (
    "open (launch, start, run, bring up) APPLICATION (the text editor, a web browser, the "
    "file manager, the calculator, the spreadsheet, the terminal, or its name); type (write, "
    "enter, put) TEXT [in it | into the NAME field]; click the NAME button; press KEYS (e.g. "
    "ctrl+s); save (store, keep) it as (to) PATH; save it; close the window; go to URL; open "
    "the web browser at URL; open the file manager in FOLDER; tell me the COLUMN of ROW (a "
    "table); tell me the value of cell B3; type TEXT into cell A1 (then 'that value' is the "
    "value read before); create a folder named NAME; rename FILE to NAME — in sentences, or "
    "joined with commas, 'and' or 'then'; a quoted text stays whole"
)
REAL_MODEL_HINT = (
    "For anything else configure a real model: --model openai:<name> (see docs/models.md)."
)


def parse_request(request: str) -> tuple[list[Op], list[str]]:
    """The operations of a request, and the clauses that are not understood (a shell
    question among operations is one: the desktop's steps are all the host plans)."""
    reading = read_request(request)
    unknown = [part.clause for part in reading.parts if not part.ops]
    return reading.ops, unknown


# The subtask of "open X" alone: nothing to do in the window but to see it open.
NOTHING_MORE = "nothing more: the window is open"


@dataclass(frozen=True)
class Group:
    application: str | None  # None: act in the window that is active now
    ops: tuple[Op, ...]
    last: bool = False  # the request's last subtask

    @property
    def subtask(self) -> str:
        """The group in its operations' own words: what the host's ASSIGN says, for people
        (and for a model that reads). The application's planner acts on `ops`."""
        return ", ".join(op.phrase for op in self.ops) or NOTHING_MORE


def group_by_application(ops: list[Op]) -> list[Group]:
    groups: list[Group] = []
    application: str | None = None
    current: list[Op] = []
    for op in ops:
        if op.kind == "open":
            if current or application is not None:
                groups.append(Group(application, tuple(current)))
            application, current = op.text, []
        else:
            current.append(op)
    if current or application is not None:
        groups.append(Group(application, tuple(current)))
    return groups


# What a later operation calls the value read before: "type that price into cell A1".
_THAT = re.compile(
    r"^(?:(?:that|this|the same) (?:value|price|number|amount|figure|text|result)|it)$",
    re.IGNORECASE,
)


def _carried(group: Group, values: Sequence[str | None]) -> Group | Failed:
    """The group with "that value" replaced by the value read last in an earlier subtask."""
    refers = [op for op in group.ops if op.kind in ("type", "cell") and _THAT.match(op.text)]
    if not refers:
        return group
    value = next((value for value in reversed(values) if value is not None), None)
    if value is None:
        return Failed(f"{refers[0].phrase!r}: no value was read before it")
    ops = tuple(
        replace(op, text=value, phrase=op.phrase.replace(op.text, value, 1)) if op in refers else op
        for op in group.ops
    )
    return Group(group.application, ops)


@dataclass(frozen=True)
class HostPlan:
    answer: dict[str, Any]
    assigned: Group | None = None  # with an ASSIGN: the group handed to the application


def plan_host(obs: HostObservation, values: Sequence[str | None] = ()) -> HostPlan:
    """The host's next answer. `values`: for each subtask done (obs.subtasks), the value its
    application's planner read, if any (`Handed.value`). Where the agent allows several
    actions, the folder a Save dialog needs is made in the answer that ASSIGNs (the list
    stops before the ASSIGN if making it fails)."""
    group = _next_group(obs, values)
    if isinstance(group, Group):
        return _assign(obs, group)
    if obs.max_actions > 1 and acts(group):
        after = replace(obs, history=(*obs.history, assumed(group)))
        then = _next_group(after, values)
        if isinstance(then, Group):
            assigned = _assign(after, then)
            if assigned.assigned is not None:
                both = (Planned(group), Planned(assigned.answer))
                return HostPlan(one_answer(both), assigned.assigned)
    return HostPlan(group)


def _next_group(obs: HostObservation, values: Sequence[str | None]) -> Group | dict[str, Any]:
    """The group to hand out next, or the answer that ends or prepares the round instead."""
    reading = read_request(obs.request)
    problem = reading.problem()
    if problem is not None:
        # Nothing is done of a request not read whole: no launch, no typing of a fragment.
        understood = f"The offline model understands: {GUI_UNDERSTOOD}. {REAL_MODEL_HINT}"
        return fail(problem, f"{problem} {understood}")
    intent = reading.shell_intent()
    if intent is not None:
        # A shell request on a desktop: the host runs it itself, as the Linux agent would.
        seen = ShellObservation(obs.request, obs.history, max_actions=obs.max_actions)
        return plan_shell(seen, intent)
    ops = reading.ops
    # As the prompt numbers them; an action its list stopped before did nothing.
    ran = [(n, step) for n, step in enumerate(obs.history, 1) if step.result_status != NOT_RUN]
    if ran:
        at, last = ran[-1]
        if (
            last.function in (ToolName.LAUNCH_APPLICATION, ToolName.SELECT_WINDOW)
            and last.result_status != "success"
        ):
            # The error names what this machine has installed: quoted, so a recording
            # holds it as a reference (references.py) and replays anywhere.
            error = StepOutput(at, printed(last))
            spoken = said(f"{last.function} failed: ", *error.every_line())
            return answer(
                "FAIL",
                "The application could not be opened.",
                "I cannot do this.",
                result=spoken.text,
                held_result=spoken.held,
            )
        if last.function == ToolName.RUN_SHELL and _shell_failed(last):
            return fail(
                "Preparing the folders failed.", f"`{last.arguments.get('command')}` failed"
            )
    groups = group_by_application(ops)
    done = obs.subtasks
    if done and done[-1].status != "FINISH":
        return fail(
            f"The subtask in {done[-1].application} failed.",
            f"{done[-1].application} could not {done[-1].subtask}: {done[-1].result}",
        )
    if len(done) >= len(groups):
        summary = "; ".join(f"{s.application}: {s.result}" for s in done)
        return answer(
            "FINISH", "Every subtask is done.", "The request is fulfilled.", result=summary
        )
    group = _carried(groups[len(done)], values)
    if isinstance(group, Failed):
        return fail("The request refers to a value it did not read.", group.reason)
    group = replace(group, last=len(done) + 1 == len(groups))
    folders = sorted(
        {posixpath.dirname(op.text) for op in group.ops if op.kind == "save_as"} - {"", "/"}
    )
    if folders:
        command = "mkdir -p -- " + " ".join(shlex.quote(folder) for folder in folders)
        if not any(step.arguments.get("command") == command for _, step in ran):
            return answer(
                "CONTINUE",
                "The file will be saved in a folder that may not exist.",
                "Make the folder first, so the Save dialog can use it.",
                function=ToolName.RUN_SHELL,
                arguments={"command": command},
            )
    return group


def _assign(obs: HostObservation, group: Group) -> HostPlan:
    arguments: dict[str, Any]
    if group.application is not None:
        thought = f"The request needs {group.application}."
        plan = "Open it and hand it the subtask."
        tool, arguments = ToolName.LAUNCH_APPLICATION, {"name": group.application}
    else:
        active = next((w for w in obs.windows if w.active), None)
        if active is None:
            return HostPlan(fail("No window is active.", "Say which application to open first."))
        thought, plan = f"The active window is {active.title!r}.", "Act in it."
        tool, arguments = ToolName.SELECT_WINDOW, {"window_id": active.xid}
    said = answer(
        "ASSIGN", thought, plan, function=tool, arguments=arguments, current_subtask=group.subtask
    )
    if group.last and obs.max_actions > 1:
        # Its FINISH goes with the ASSIGN, as the answer of several actions it is: the
        # round's FINISH would say nothing the subtasks' results do not (the summary).
        said["finish_with_subtask"] = True
    return HostPlan(said, group)


def _shell_failed(step: PastStep) -> bool:
    output = step.output if isinstance(step.output, dict) else {}
    return step.result_status != "success" or output.get("exit_code") != 0
