"""The offline planner's GUI half: simple desktop requests, decided on the real control list.

A request is split into operations ("open the text editor", "type Hello", "save it as
/tmp/a.txt", "click the Save button", "press ctrl+s", "close the window", and in a
browser, a spreadsheet or a file manager: "go to URL", "tell me the Price of Pears",
"type 12 into cell A1", "create a folder named X", "rename A to B": offline_apps). The host
groups them by application and ASSIGNs each group, in the words of its operations (the
subtask people read in the prompts and logs); the group itself, typed, is `Handed` to the
application's planner, which carries it out one operation at a time, choosing controls by
role and name from the window's real controls — never by coordinates — and never reads
the words again. Its progress is typed too: the operation each of its answers served, by
the step that answer became. A value read in one application ("tell me the Price of
Pears") is what "that price" means in the next one's subtask. Pure logic: no I/O; what the
planner handed out is kept by the model (model.py), in memory.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from roundhouse.devices.contract import Control, ToolName
from roundhouse.models.observation import (
    NOT_RUN,
    AppObservation,
    HostObservation,
    PastStep,
    ShellObservation,
)
from roundhouse.models.offline.apps import (
    go_to,
    into_cell,
    keep_format,
    new_folder,
    read,
    rename,
)
from roundhouse.models.offline.intents import read_request
from roundhouse.models.offline.ops import (
    BUTTON_ROLES,
    ENTRY_ROLES,
    SAID_ROLES,
    TEXT_ROLES,
    Decision,
    Done,
    Failed,
    Op,
    close_window,
    fill_field,
    find_control,
    keys,
    names,
    plain,
    reobserve,
)
from roundhouse.models.offline.several import (
    Planned,
    acts,
    assumed,
    one_answer,
    planned_on,
    serves,
)
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

SAVE_AS_KEYS = "ctrl+shift+s"


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


# --- the host ---------------------------------------------------------------------------

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


# --- the application ----------------------------------------------------------------------


@dataclass(frozen=True)
class AppPlan:
    answer: dict[str, Any]
    # The operation each entry the answer adds to the agent's history serves: one per
    # action (an answer with none adds one entry); None: it serves none.
    serves: tuple[int | None, ...] = (None,)
    value: str | None = None  # with FINISH: the value read last, if an operation read one


def plan_app(obs: AppObservation, ops: Sequence[Op], served: Sequence[int | None]) -> AppPlan:
    """The next answer for the subtask `ops`, handed over typed: the next action, and where
    the agent allows several (obs.max_actions) the ones the plan is certain of after it
    (several.py). `served`: for each entry of the agent's history, the operation it served
    (None: none did)."""
    first = _plan_once(obs, ops, served)

    def after(history: tuple[PastStep, ...], served: list[int | None]) -> Planned:
        return _plan_once(replace(obs, history=history), ops, served)

    planned = planned_on(first, obs.history, served, after, obs.max_actions)
    return AppPlan(one_answer(planned), serves(planned), planned[-1].value)


def _plan_once(obs: AppObservation, ops: Sequence[Op], served: Sequence[int | None]) -> Planned:
    """The next single action (or the end) for `ops`."""
    # An action its list stopped before served nothing: its operation is still to do.
    served = [
        None if step.result_status == NOT_RUN else at
        for step, at in zip(obs.history, served, strict=True)
    ]
    summaries, value = [], None
    for index, op in enumerate(ops):
        mine = [step for step, at in zip(obs.history, served, strict=True) if at == index]
        # Typing on after an earlier text of this subtask (a second paragraph): where the
        # caret is, not into the field clicked again.
        typing_on = op.kind == "type" and any(o.kind == "type" for o in ops[:index])
        before = ops[index - 1] if index else None
        entered = before.target if before is not None and before.kind == "cell" else None
        decision = _next(op, mine, obs, typing_on, last=index == len(ops) - 1, after=entered)
        if isinstance(decision, dict) and any(at is not None and at > index for at in served):
            # Done before the next operation began: what that one opened since (a dialog)
            # is not this one's to wait for.
            decision = Done(op.phrase)
        if isinstance(decision, Failed):
            return Planned(fail(f"{op.phrase!r} did not work.", decision.reason))
        if isinstance(decision, Done):
            summaries.append(decision.summary)
            value = decision.value if decision.value is not None else value
            continue
        decision["comment"] = f"doing: {op.phrase}"  # for people: the progress is `served`
        return Planned(decision, index)
    result = "; ".join(summaries) or f"{obs.application} is open"
    finish = answer(
        "FINISH", "Every operation of the subtask is done.", "Hand back to the host.", result=result
    )
    return Planned(finish, value=value)


@dataclass
class Handed:
    """A subtask the host planner handed an application, as the offline model keeps it:
    its operations, typed; the operation each entry of the application agent's history
    served (an entry per action; an answer refused and asked again is replaced); and the
    value the subtask read, for a later "that value"."""

    ops: tuple[Op, ...]
    served: list[int | None] = field(default_factory=list)
    value: str | None = None

    def next(self, obs: AppObservation) -> dict[str, Any]:
        entries = len(obs.history)
        # An entry it did not answer (none, as the agents are built) served no operation.
        del self.served[entries:]
        self.served += [None] * (entries - len(self.served))
        plan = plan_app(obs, self.ops, self.served)
        self.served += plan.serves
        if plan.value is not None:
            self.value = plan.value
        return plan.answer


def _next(
    op: Op,
    mine: list[PastStep],
    obs: AppObservation,
    typing_on: bool,
    last: bool = True,
    after: str | None = None,  # the cell the operation before entered, if any
) -> Decision:
    if mine and mine[-1].result_status not in ("success", None):
        return Failed(mine[-1].error or f"the step ended {mine[-1].result_status}")
    if op.kind == "type":
        return _type(op, mine, obs, typing_on and not op.target)
    if op.kind == "goto":
        return go_to(op, mine, obs)
    if op.kind == "read":
        found = read(op, obs)
        if isinstance(found, Failed):  # a page may still be loading: look again first
            return reobserve(len(mine), "the value to show", found.reason)
        return found
    if op.kind == "cell":
        return into_cell(op, mine, obs, after)
    if op.kind == "new_folder":
        return new_folder(op, mine, obs)
    if op.kind == "rename":
        return rename(op, mine, obs)
    if op.kind == "click":
        if any(step.function for step in mine):
            return _clicked(op, mine, obs)
        clicked = _click(op.target, obs, f"Click {op.target!r}.", op.role)
        if isinstance(clicked, Failed) and not clicked.final:
            # A window still filling its tree: look again first.
            return reobserve(len(mine), f"a control named {op.target!r}", clicked.reason)
        return clicked
    if op.kind == "keys":
        return Done(f"pressed {op.text}") if mine else keys(op.text)
    if op.kind == "save":
        return _saved(mine, obs) if mine else keys("ctrl+s")
    if op.kind == "close":
        if not mine:
            return close_window()
        buttons = ", ".join(repr(c.name) for c in obs.controls if c.role in BUTTON_ROLES)
        if obs.in_dialog and not last:
            # "Save changes?": what to answer is the request's next operation.
            return Done(f"closing; {obs.window.title!r} asks first ({buttons})")
        return Failed(f"the window is still open and asks: {obs.window.title!r} ({buttons})")
    return _save_as(op, mine, obs)


def _type(op: Op, mine: list[PastStep], obs: AppObservation, focused: bool) -> Decision:
    """Type into the field named, else the largest text field; or where the keyboard focus
    is, when the window has no tree or the subtask typed before (`focused`)."""
    typed = [step for step in mine if step.function]
    if typed:
        return Done(f"typed {op.text!r}" + (f" into {op.target!r}" if op.target else ""))
    if not obs.tree_available or focused:
        return answer(
            "CONTINUE",
            obs.note or "No control tree." if not obs.tree_available else "The caret is there.",
            "Type into the focused control.",
            function=ToolName.TYPE_TEXT,
            arguments={"text": op.text},
        )
    fields = [c for c in obs.controls if c.role in TEXT_ROLES]
    if op.target:
        wanted = op.target.casefold()
        fields = [c for c in fields if wanted in c.name.casefold()]
        if not fields:  # a page may still be loading: look again first
            why = f"no text field named {op.target!r}; text fields: {names(obs, TEXT_ROLES)}"
            return reobserve(len(mine), f"a field named {op.target!r}", why)
        # A web page's paragraph is named after the label it holds ("Name"), as is the
        # entry beside it: the field is the one that takes text, the closest name first,
        # the page's before the window's own (a browser's find bar).
        field = min(
            fields,
            key=lambda c: (
                c.role not in ENTRY_ROLES,
                c.name.strip().casefold() != wanted,
                not c.in_document,
            ),
        )
    elif not fields:
        return Failed(f"no text field in {obs.window.title!r}; controls: {names(obs)}")
    else:
        field = max(fields, key=lambda c: c.rect.width * c.rect.height)
    return answer(
        "CONTINUE",
        f"{field.name or field.role!r} is the text field.",
        "Type the text into it.",
        function=ToolName.TYPE_TEXT,
        arguments={"id": field.label, "name": field.name, "text": op.text},
    )


def _click(target: str, obs: AppObservation, thought: str, said: str = "") -> Decision:
    """Click the control named `target`, of the kind the request `said` ("button"), if it
    said one. A disabled one is not clicked: the operation fails, naming it."""
    control = find_control(obs.controls, target, BUTTON_ROLES, said)
    kind = f"{said} " if said in SAID_ROLES else "control "
    if control is None:
        others = find_control(obs.controls, target, BUTTON_ROLES)
        if others is not None:
            # Another kind of control of that name is no answer: "the Order button" is not
            # the page's tab. Looking again may show the one meant.
            return Failed(
                f"no {kind}named {target!r}: control {others.label} {others.name!r} is a"
                f" {others.role}, not a {said}; controls: {names(obs, BUTTON_ROLES)}"
            )
        return Failed(f"no {kind}named {target!r}; controls: {names(obs, BUTTON_ROLES)}")
    if "disabled" in control.states:
        return Failed(
            f"control {control.label} {control.name!r} ({control.role}) is disabled:"
            " it cannot be clicked",
            final=True,
        )
    return answer(
        "CONTINUE",
        f"Control {control.label} is {control.name!r} ({control.role}).",
        thought,
        function=ToolName.CLICK_CONTROL,
        arguments={"id": control.label, "name": control.name},
    )


def _clicked(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """A click done: its outcome. Where its effect was not seen, the window is looked at
    once more (a page may load late); the click stands only where the window changed since
    (the control clicked gone, or another), else the operation fails, naming the click."""
    clicks = [at for at, step in enumerate(mine) if step.function == ToolName.CLICK_CONTROL]
    if not clicks:
        return Done(f"clicked {op.target!r}")
    click = mine[clicks[-1]]
    output = click.output if isinstance(click.output, dict) else {}
    if output.get("effect") != "not seen":
        return Done(f"clicked {op.target!r}")
    looked = any(step.status == "SCREENSHOT" for step in mine[clicks[-1] + 1 :])
    if not looked:
        return answer(
            "SCREENSHOT",
            f"The click on {op.target!r} showed no effect yet.",
            "Look again before going on: the outcome must be there.",
        )
    label, name = click.arguments.get("id"), str(click.arguments.get("name", ""))
    same = any(c.label == label and c.name == name for c in obs.controls)
    if not same:
        return Done(f"clicked {op.target!r}; the window changed after it")
    return Failed(
        f"clicked control {label} {name!r}, but its effect was not seen, and a look after it"
        " shows the window unchanged",
        final=True,
    )


def _saved(mine: list[PastStep], obs: AppObservation) -> Decision:
    """ctrl+s pressed: saved once nothing asks for more (LibreOffice's question whether to
    keep a format not its own is answered yes) and the title no longer marks the document
    changed (gedit's "*"). A Save dialog means the document has no name yet: FAIL."""
    keep = keep_format(obs)
    clicked = {plain(str(s.arguments.get("name", ""))) for s in mine if s.function}
    if keep is not None and plain(keep.name) not in clicked:
        return _click(keep.name, obs, "Keep the format the document has.")
    waited = sum(1 for step in mine if step.status == "SCREENSHOT")
    if obs.in_dialog:
        asks = f"saving opened {obs.window.title!r}: the document has no file name yet"
        return reobserve(waited, "the save to end", f"{asks} (say: save it as PATH)")
    if obs.window.title.startswith("*"):
        unsaved = f"the title {obs.window.title!r} still marks the document changed"
        return reobserve(waited, "the title to show it saved", unsaved)
    return Done("saved")


def _save_as(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """Save As through the real dialog: open it, name the file, confirm, check the title."""
    path = op.text
    if not mine:
        return keys(SAVE_AS_KEYS)
    waited = sum(1 for step in mine if step.status == "SCREENSHOT")
    in_dialog = _is_save_dialog(obs)
    phase = _save_as_phase(mine)
    if phase == "open":
        field = _name_field(obs) if in_dialog else None
        if field is None:
            return reobserve(waited, "the Save dialog")
        return fill_field(
            field, path, "The Save dialog is open", "Put the full path in the name field."
        )
    if phase == "named":
        return keys("Return")
    clicked = {
        plain(str(step.arguments.get("name", "")))
        for step in mine
        if step.function == ToolName.CLICK_CONTROL
    }
    # The question whether to replace a file of that name: a dialog's button, never the
    # application's own "Find and Replace".
    replace = next(
        (
            c
            for c in obs.controls
            if obs.in_dialog and c.role in BUTTON_ROLES and plain(c.name).startswith("replace")
        ),
        None,
    )
    if replace is not None and plain(replace.name) not in clicked:
        return _click("Replace", obs, "A file of that name exists: replace it (the user is asked).")
    keep = keep_format(obs)
    if keep is not None and plain(keep.name) not in clicked:
        # LibreOffice asks whether to keep a format not its own: the one asked for, yes.
        return _click(keep.name, obs, "Keep the format the file name asks for.")
    if not in_dialog and posixpath.basename(path) in obs.window.title:
        return Done(f"saved as {path}")
    if in_dialog:  # it may be closing still; a dialog that stays means the save failed
        still_open = f"the Save dialog is still open ({obs.window.title!r}); controls: {names(obs)}"
        return reobserve(waited, "the Save dialog to close", still_open)
    return reobserve(waited, f"the window title to name {posixpath.basename(path)}")


def _save_as_phase(mine: list[PastStep]) -> Literal["open", "named", "submitted"]:
    functions = [step.function for step in mine if step.function]
    if ToolName.SET_TEXT not in functions:
        return "open"
    after_name = functions[functions.index(ToolName.SET_TEXT) + 1 :]
    return "submitted" if ToolName.PRESS_KEYS in after_name else "named"


def _is_save_dialog(obs: AppObservation) -> bool:
    """A window of the application's own, in front of its main one, with a text field."""
    return obs.in_dialog and any(c.role in TEXT_ROLES for c in obs.controls)


def _name_field(obs: AppObservation) -> Control | None:
    fields = [c for c in obs.controls if c.role in TEXT_ROLES]
    named = [
        c
        for c in fields
        if c.name.strip().rstrip(":").casefold() in ("name", "file name", "filename")
    ]
    return next(iter(named or fields), None)
