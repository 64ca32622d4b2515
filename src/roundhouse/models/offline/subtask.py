"""The offline planner's application half: a subtask handed over by the host (host.py),
carried out one operation at a time on the window's real controls.

Controls are chosen by role and name from the control list the agent sees, never by
coordinates. Progress is typed: the operation each of the planner's answers served, by the
step that answer became, kept in `Handed`. The operations of a browser, a spreadsheet and
a file manager are apps.py's, saving is saving.py's; this dispatches to them and holds the
simple ones (type, click, keys, close). Pure logic: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from roundhouse.devices.contract import ToolName
from roundhouse.models.observation import NOT_RUN, AppObservation, PastStep
from roundhouse.models.offline.apps import go_to, into_cell, new_folder, read, rename
from roundhouse.models.offline.ops import (
    BUTTON_ROLES,
    ENTRY_ROLES,
    TEXT_ROLES,
    Decision,
    Done,
    Failed,
    Op,
    click,
    close_window,
    keys,
    names,
    reobserve,
)
from roundhouse.models.offline.saving import save_as, saved
from roundhouse.models.offline.several import Planned, one_answer, planned_on, serves
from roundhouse.models.offline.shell import answer, fail


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
        clicked = click(op.target, obs, f"Click {op.target!r}.", op.role)
        if isinstance(clicked, Failed) and not clicked.final:
            # A window still filling its tree: look again first.
            return reobserve(len(mine), f"a control named {op.target!r}", clicked.reason)
        return clicked
    if op.kind == "keys":
        return Done(f"pressed {op.text}") if mine else keys(op.text)
    if op.kind == "save":
        return saved(mine, obs) if mine else keys("ctrl+s")
    if op.kind == "close":
        if not mine:
            return close_window()
        buttons = ", ".join(repr(c.name) for c in obs.controls if c.role in BUTTON_ROLES)
        if obs.in_dialog and not last:
            # "Save changes?": what to answer is the request's next operation.
            return Done(f"closing; {obs.window.title!r} asks first ({buttons})")
        return Failed(f"the window is still open and asks: {obs.window.title!r} ({buttons})")
    return save_as(op, mine, obs)


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
