"""The offline planner's GUI half: simple desktop requests, decided on the real control list.

A request is split into operations ("open the text editor", "type Hello", "save it as
/tmp/a.txt", "click the Save button", "press ctrl+s", "close the window"). The host
groups them by application and ASSIGNs each group; the app agent carries out its group
one operation at a time, choosing controls by role and name from the window's real
controls — never by coordinates. Progress is read back from the agent's own history
(each step's comment says which operation it served). Pure logic: no I/O.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from roundhouse.devices.contract import Control, ToolName
from roundhouse.models.observation import (
    AppObservation,
    HostObservation,
    PastStep,
    ShellObservation,
)
from roundhouse.models.offline_shell import answer, fail, plan_shell, understand
from roundhouse.models.references import StepOutput, printed, said

GUI_UNDERSTOOD = (
    "open (launch) APPLICATION (e.g. the text editor); type (write) TEXT; type TEXT into the "
    "NAME field; click the NAME button; press KEYS (e.g. ctrl+s); save it as (to) PATH; "
    "save it; close the window — joined with commas, 'and' or 'then'"
)
REAL_MODEL_HINT = (
    "For anything else configure a real model: --model openai:<name> (see docs/models.md)."
)

TEXT_ROLES = frozenset(
    {"text", "entry", "password text", "document text", "paragraph", "terminal", "editbar"}
)
BUTTON_ROLES = frozenset(
    {
        "push button",
        "button",
        "toggle button",
        "check box",
        "radio button",
        "menu item",
        "check menu item",
        "radio menu item",
        "link",
        "page tab",
        "list item",
        "combo box",
    }
)
CLOSE_KEYS = "alt+F4"
SAVE_AS_KEYS = "ctrl+shift+s"
MAX_REOBSERVE = 4  # SCREENSHOT steps an operation may wait for a dialog

OpKind = Literal["open", "type", "click", "keys", "save_as", "save", "close"]


@dataclass(frozen=True)
class Op:
    kind: OpKind
    phrase: str  # the words of the request it came from
    text: str = ""  # type: the text; open: the application; keys: the keys; save_as: the path
    target: str = ""  # type: the field's name; click: the control's name


_VERBS = r"(?:open|launch|start|type|write|enter|click|press|hit|save|close|quit)\b"
# "then" and ";" always start a new phrase; "," and "and" only before a verb, so that
# "type milk, eggs and bread" stays one phrase.
_SPLIT = re.compile(
    rf"\s*(?:,?\s*(?:and\s+)?then\s+|;\s*)|\s*(?:,\s*(?:and\s+)?|\s+and\s+)(?={_VERBS})",
    re.IGNORECASE,
)


# A quoted text stands whole: "type 'milk, then eggs'" is one phrase, not two.
_QUOTED = re.compile(r"""(?<!\w)(?:'[^']*'|"[^"]*"|“[^”]*”)(?!\w)""")


def split_phrases(request: str) -> list[str]:
    """The request's phrases, split at commas, "and" and "then" before a verb, never
    inside a quoted text."""
    quoted: list[str] = []

    def hide(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = _QUOTED.sub(hide, request.strip())
    phrases = [phrase.strip() for phrase in _SPLIT.split(masked) if phrase.strip()]
    return [
        re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], phrase) for phrase in phrases
    ]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"“”":
        return text[1:-1]
    return text


def _op(phrase: str) -> Op | None:
    p = phrase.strip().rstrip(".!")
    patterns: list[tuple[str, OpKind]] = [
        (
            r"(?:open|launch|start)(?: up)? (?:the |a |an )?(?P<text>.+?)(?: app(?:lication)?)?",
            "open",
        ),
        (
            r"(?:type|write|enter) (?P<text>.+?) (?:into|in) the (?P<target>.+?)"
            r" (?:field|box|entry)",
            "type",
        ),
        # "write X in the editor": the application's own text, not a named field
        (
            r"(?:type|write|enter) (?P<text>.+?) (?:into|in) the"
            r" (?:text editor|editor|document|window|file|app(?:lication)?)",
            "type",
        ),
        (r"(?:type|write|enter) (?P<text>.+)", "type"),
        (
            r"(?:click|press|hit)(?: on)? the (?P<target>.+?)"
            r" (?:button|checkbox|check box|tab|menu item)",
            "click",
        ),
        (r"click(?: on)? (?:the )?(?P<target>.+)", "click"),
        (r"(?:press|hit) (?P<text>[\w+-]+(?: [\w+-]+)*)", "keys"),
        (
            r"save (?:it |the file |the document |this |the text )?"
            r"(?:as|to|in|into|under) (?P<text>\S+)",
            "save_as",
        ),
        (r"save(?: it| the file| the document| this)?", "save"),
        (r"(?:close|quit)(?: it| the window| the editor| the app(?:lication)?| .+)?", "close"),
    ]
    for pattern, kind in patterns:
        match = re.fullmatch(pattern, p, flags=re.IGNORECASE)
        if match:
            groups = match.groupdict()
            return Op(
                kind,
                phrase.strip(),
                text=_unquote(groups.get("text") or ""),
                target=_unquote(groups.get("target") or ""),
            )
    return None


def parse_request(request: str) -> tuple[list[Op], list[str]]:
    """The operations of a request, and the phrases that are not understood."""
    ops, unknown = [], []
    for phrase in split_phrases(request):
        op = _op(phrase)
        if op is None:
            unknown.append(phrase.strip())
        else:
            ops.append(op)
    return ops, unknown


# The subtask of "open X" alone: nothing to do in the window but to see it open.
NOTHING_MORE = "nothing more: the window is open"


@dataclass(frozen=True)
class Group:
    application: str | None  # None: act in the window that is active now
    ops: tuple[Op, ...]

    @property
    def subtask(self) -> str:
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


def plan_host(obs: HostObservation) -> dict[str, Any]:
    ops, unknown = parse_request(obs.request)
    if (unknown or not ops) and understand(obs.request) is not None:
        # A shell request on a desktop: the host runs it itself, as the Linux agent would.
        return plan_shell(ShellObservation(request=obs.request, history=obs.history))
    if unknown or not ops:
        what = f"I do not understand {unknown[0]!r}." if unknown else "There is nothing to do."
        return fail(what, f"The offline model understands: {GUI_UNDERSTOOD}. {REAL_MODEL_HINT}")
    if obs.history:
        last = obs.history[-1]
        if (
            last.function in (ToolName.LAUNCH_APPLICATION, ToolName.SELECT_WINDOW)
            and last.result_status != "success"
        ):
            # The error names what this machine has installed: quoted, so a recording
            # holds it as a reference (references.py) and replays anywhere.
            error = StepOutput(len(obs.history), printed(last))
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
    group = groups[len(done)]
    folders = sorted(
        {posixpath.dirname(op.text) for op in group.ops if op.kind == "save_as"} - {"", "/"}
    )
    if folders:
        command = "mkdir -p -- " + " ".join(shlex.quote(folder) for folder in folders)
        if not any(step.arguments.get("command") == command for step in obs.history):
            return answer(
                "CONTINUE",
                "The file will be saved in a folder that may not exist.",
                "Make the folder first, so the Save dialog can use it.",
                function=ToolName.RUN_SHELL,
                arguments={"command": command},
            )
    if group.application is not None:
        return answer(
            "ASSIGN",
            f"The request needs {group.application}.",
            "Open it and hand it the subtask.",
            function=ToolName.LAUNCH_APPLICATION,
            arguments={"name": group.application},
            current_subtask=group.subtask,
        )
    active = next((w for w in obs.windows if w.active), None)
    if active is None:
        return fail("No window is active.", "Say which application to open first.")
    return answer(
        "ASSIGN",
        f"The active window is {active.title!r}.",
        "Act in it.",
        function=ToolName.SELECT_WINDOW,
        arguments={"window_id": active.xid},
        current_subtask=group.subtask,
    )


def _shell_failed(step: PastStep) -> bool:
    output = step.output if isinstance(step.output, dict) else {}
    return step.result_status != "success" or output.get("exit_code") != 0


# --- the application ----------------------------------------------------------------------


@dataclass(frozen=True)
class Done:
    summary: str


@dataclass(frozen=True)
class Failed:
    reason: str


Decision = dict[str, Any] | Done | Failed


def plan_app(obs: AppObservation) -> dict[str, Any]:
    ops, unknown = ([], []) if obs.subtask == NOTHING_MORE else parse_request(obs.subtask)
    if unknown:
        return fail(
            f"I do not understand {unknown[0]!r}.",
            f"The offline model understands: {GUI_UNDERSTOOD}.",
        )
    summaries = []
    for index, op in enumerate(ops):
        if op.kind == "open":
            continue
        mine = [step for step in obs.history if step.comment.startswith(f"op {index}:")]
        decision = _next(op, mine, obs)
        if isinstance(decision, Failed):
            return fail(f"{op.phrase!r} did not work.", decision.reason)
        if isinstance(decision, Done):
            summaries.append(decision.summary)
            continue
        decision["comment"] = f"op {index}: {op.phrase}"
        return decision
    result = "; ".join(summaries) or f"{obs.application} is open"
    return answer(
        "FINISH", "Every operation of the subtask is done.", "Hand back to the host.", result=result
    )


def _next(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    if mine and mine[-1].result_status not in ("success", None):
        return Failed(mine[-1].error or f"the step ended {mine[-1].result_status}")
    if op.kind == "type":
        return _type(op, mine, obs)
    if op.kind == "click":
        if mine:
            return Done(f"clicked {op.target!r}")
        return _click(op.target, obs, f"Click {op.target!r}.")
    if op.kind == "keys":
        return Done(f"pressed {op.text}") if mine else _keys(op.text)
    if op.kind == "save":
        return Done("saved") if mine else _keys("ctrl+s")
    if op.kind == "close":
        if not mine:
            return _keys(CLOSE_KEYS)
        buttons = ", ".join(repr(c.name) for c in obs.controls if c.role in BUTTON_ROLES)
        return Failed(f"the window is still open and asks: {obs.window.title!r} ({buttons})")
    return _save_as(op, mine, obs)


def _type(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    if mine:
        return Done(f"typed {op.text!r}" + (f" into {op.target!r}" if op.target else ""))
    if not obs.tree_available:
        return answer(
            "CONTINUE",
            obs.note or "No control tree.",
            "Type into the focused control.",
            function=ToolName.TYPE_TEXT,
            arguments={"text": op.text},
        )
    fields = [c for c in obs.controls if c.role in TEXT_ROLES]
    if op.target:
        wanted = op.target.casefold()
        fields = [c for c in fields if wanted in c.name.casefold()]
        if not fields:
            return Failed(
                f"no text field named {op.target!r}; text fields: {_names(obs, TEXT_ROLES)}"
            )
    if not fields:
        return Failed(f"no text field in {obs.window.title!r}; controls: {_names(obs)}")
    field = max(fields, key=lambda c: c.rect.width * c.rect.height)
    return answer(
        "CONTINUE",
        f"{field.name or field.role!r} is the text field.",
        "Type the text into it.",
        function=ToolName.TYPE_TEXT,
        arguments={"id": field.label, "name": field.name, "text": op.text},
    )


def _click(target: str, obs: AppObservation, thought: str) -> Decision:
    control = find_control(obs.controls, target, BUTTON_ROLES)
    if control is None:
        return Failed(f"no control named {target!r}; controls: {_names(obs, BUTTON_ROLES)}")
    return answer(
        "CONTINUE",
        f"Control {control.label} is {control.name!r}.",
        thought,
        function=ToolName.CLICK_CONTROL,
        arguments={"id": control.label, "name": control.name},
    )


def _keys(keys: str) -> dict[str, Any]:
    return answer(
        "CONTINUE",
        "Keys will do it.",
        f"Press {keys}.",
        function=ToolName.PRESS_KEYS,
        arguments={"keys": keys},
    )


def _save_as(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """Save As through the real dialog: open it, name the file, confirm, check the title."""
    path = op.text
    if not mine:
        return _keys(SAVE_AS_KEYS)
    waited = sum(1 for step in mine if step.status == "SCREENSHOT")
    in_dialog = _is_save_dialog(obs)
    phase = _save_as_phase(mine)
    if phase == "open":
        field = _name_field(obs) if in_dialog else None
        if field is None:
            return _reobserve(waited, "the Save dialog")
        return answer(
            "CONTINUE",
            f"The Save dialog is open; control {field.label} takes the name.",
            "Put the full path in the name field.",
            function=ToolName.SET_TEXT,
            arguments={"id": field.label, "name": field.name, "text": path},
        )
    if phase == "named":
        return _keys("Return")
    replace = find_control(obs.controls, "Replace", BUTTON_ROLES)
    if replace is not None and phase != "replaced":
        return _click("Replace", obs, "A file of that name exists: replace it (the user is asked).")
    if not in_dialog and posixpath.basename(path) in obs.window.title:
        return Done(f"saved as {path}")
    if in_dialog:  # it may be closing still; a dialog that stays means the save failed
        still_open = (
            f"the Save dialog is still open ({obs.window.title!r}); controls: {_names(obs)}"
        )
        return _reobserve(waited, "the Save dialog to close", still_open)
    return _reobserve(waited, f"the window title to name {posixpath.basename(path)}")


def _save_as_phase(mine: list[PastStep]) -> Literal["open", "named", "submitted", "replaced"]:
    functions = [step.function for step in mine if step.function]
    if ToolName.CLICK_CONTROL in functions:
        return "replaced"
    if ToolName.SET_TEXT not in functions:
        return "open"
    after_name = functions[functions.index(ToolName.SET_TEXT) + 1 :]
    return "submitted" if ToolName.PRESS_KEYS in after_name else "named"


def _reobserve(waited: int, what: str, failure: str | None = None) -> Decision:
    if waited >= MAX_REOBSERVE:
        return Failed(failure or f"waited in vain for {what}")
    return answer("SCREENSHOT", f"Waiting for {what}.", "Look again.")


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


def find_control(controls: tuple[Control, ...], name: str, roles: frozenset[str]) -> Control | None:
    """A control by name, as a person reads it: exact first, then a prefix; mnemonics ignored."""
    wanted = _plain(name)
    names = [(c, _plain(c.name)) for c in controls if c.role in roles]
    for found in (
        [c for c, plain in names if plain == wanted],
        [c for c, plain in names if plain.startswith(wanted)],
        [c for c, plain in names if wanted in plain],
    ):
        if found:
            return found[0]
    return None


def _plain(name: str) -> str:
    return re.sub(r"[_…]|\.\.\.", "", name).strip().casefold()


def _names(obs: AppObservation, roles: frozenset[str] | None = None) -> str:
    shown = [
        f"{c.label} {c.name!r} ({c.role})" for c in obs.controls if roles is None or c.role in roles
    ]
    return "; ".join(shown[:30]) or "none"
