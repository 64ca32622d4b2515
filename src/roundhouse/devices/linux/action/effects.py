"""What an action did, told in a line the model reads in its next prompt: pure, no I/O.

    before = await look(...)      # effects_read.py: the window list and the accessibility
    ...act, settle...             # tree of the window, its focus and a text, before and
    after = await look(...)       # after the action
    effect_of(before, after, typed="Zoë").as_result()
    -> {"effect": "confirmed", "seen": "'Your name' (text) now holds 'Zoë' (contains the
        typed text)"}

An effect is "confirmed" only when the window list or the accessibility tree shows it
(a text that holds what was typed, a check box now checked, a dialog that opened, the
focus that moved...), never from pixels alone: a blinking caret changes pixels too. When
neither shows anything, the effect is "not seen" and the line says "no visible effect".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from roundhouse.devices.contract import WindowInfo

# States whose change is worth a line, as "is now <state>" / "is no longer <state>".
_TOLD_STATES = ("checked", "pressed", "expanded", "selected", "indeterminate")
_WINDOW_ROLES = frozenset({"frame", "window", "dialog"})
_MAX_SEEN = 4  # lines in one effect; more are counted, not listed
_MAX_NAME = 40  # characters of a name in a line
_MAX_TEXT = 80  # characters of a text shown; longer ones are cut around what was typed


@dataclass(frozen=True)
class NodeSeen:
    """One showing accessible object, as much as an effect needs of it."""

    role: str
    name: str
    states: frozenset[str] = frozenset()
    # What a text field or display shows (its start): Calculator's result is the text of
    # a nameless text view, which no name or state tells. None: not read.
    text: str | None = None

    def brief(self) -> str:
        return f"{_quote(self.name, _MAX_NAME)} ({self.role})" if self.name else f"the {self.role}"


@dataclass(frozen=True)
class TextSeen:
    """The text of one control: all of it, or the stretch read around its caret."""

    node: str  # the control's node id
    control: str  # how the line names it: "'Your name' (text)"
    text: str
    start: int = 0  # where `text` begins in the whole text
    length: int = -1  # characters in the whole text (-1: `text` is all of it)
    secret: bool = False  # a password field: its text is never shown

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.length in (-1, len(self.text))

    @property
    def size(self) -> int:
        return len(self.text) if self.length < 0 else self.length


@dataclass(frozen=True)
class Look:
    """The desktop as an action's effect is judged: before it, or after it settled."""

    windows: tuple[WindowInfo, ...]
    window: int | None = None  # the window whose controls were read
    nodes: Mapping[str, NodeSeen] | None = None  # None: no tree could be read
    complete: bool = True  # every showing node was read (no time or node limit)
    text: TextSeen | None = None

    @property
    def focused(self) -> str | None:
        if self.nodes is None:
            return None
        return next((node for node, seen in self.nodes.items() if "focused" in seen.states), None)


@dataclass(frozen=True)
class Effect:
    confirmed: bool
    seen: tuple[str, ...] = field(default=())
    tree_read: bool = True  # False: only the window list was compared
    # "opened", "closed" or "opened and closed": windows came or went (a dialog). Said
    # apart from the lines, which may be cut: a list of actions stops there.
    window_change: str | None = None

    def as_result(self) -> dict[str, str]:
        verdict: Literal["confirmed", "not seen"] = "confirmed" if self.confirmed else "not seen"
        nothing = "no visible effect"
        if not self.tree_read:
            nothing += " in the window list (the controls were not read: see the screenshot)"
        result = {"effect": verdict, "seen": "; ".join(self.seen) or nothing}
        if self.window_change is not None:
            result["window_change"] = self.window_change
        return result


def effect_of(
    before: Look, after: Look, *, typed: str | None = None, target: str | None = None
) -> Effect:
    """What changed from `before` to `after`, most telling first. With `typed`, the action
    meant to put that text into `after.text`'s control: confirmed only if it is there.
    `target` is the node id of the control acted on, whose changes come first."""
    lines: list[str] = []
    found = True
    same = (
        before.text is not None and after.text is not None and before.text.node == after.text.node
    )
    unchanged = same and before.text == after.text
    if typed is not None:
        # A text that held it already and did not change shows nothing was typed, unless
        # it is exactly what was asked for (set_text to the value it had).
        found = (
            after.text is not None
            and contains(after.text, typed)
            and (not unchanged or after.text.text == typed)
        )
        holder = None if found else _holding_typed(before, after, typed)
        if holder is not None:
            found = True
            lines.append(
                f"{holder.brief()} now holds {_quote(holder.text or '', _MAX_TEXT)} (the typed "
                "text)"
            )
        elif after.text is not None:
            lines.append(_text_line(after.text, typed, found, unchanged))
        else:
            lines.append("the text could not be read back (see the screenshot)")
    elif same and not unchanged and after.text is not None:
        lines.append(_text_line(after.text))
    lines += _window_lines(before, after)
    lines += _node_lines(before, after, target)
    shown = lines[:_MAX_SEEN]
    if len(lines) > _MAX_SEEN:
        shown.append(f"and {len(lines) - _MAX_SEEN} more changes")
    return Effect(
        bool(lines) and found,
        tuple(shown),
        tree_read=after.nodes is not None,
        window_change=_windows_came_or_went(before, after),
    )


def _holding_typed(before: Look, after: Look, typed: str) -> NodeSeen | None:
    """Where the focused control's own text cannot be read, the control that came into view,
    or changed, holding exactly what was typed (or the same number: "4.80" shows as 4.8):
    a spreadsheet's cell, entered with Enter ("12\n"), whose sheet has the focus and no
    text of its own. None: there is none."""
    if after.nodes is None or before.nodes is None or before.window != after.window:
        return None
    forms = {typed.strip(), typed.replace("\n", "").strip()} - {""}
    number = _number(typed)
    for node, seen in after.nodes.items():
        old = before.nodes.get(node)
        if old is not None and old.text == seen.text:
            continue
        if seen.text in forms or (number is not None and _number(seen.text) == number):
            return seen
    return None


def _number(text: str | None) -> float | None:
    """A text that is a number, as a number: a sheet shows "4.80" entered as 4.8."""
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _windows_came_or_went(before: Look, after: Look) -> str | None:
    old = {w.xid for w in before.windows}
    new = {w.xid for w in after.windows}
    changes = [word for word, some in (("opened", new - old), ("closed", old - new)) if some]
    return " and ".join(changes) or None


def contains(seen: TextSeen, typed: str) -> bool:
    """Whether the control holds what was typed: "\\n" may have pressed Enter in a
    one-line field, so the text without line breaks counts too."""
    if not typed:
        return seen.size == 0  # set_text to "": the field was cleared
    if seen.secret:
        return seen.size >= len(typed)
    forms = {typed, typed.strip(), typed.replace("\n", ""), typed.replace("\n", "").strip()}
    return any(form in seen.text for form in forms if form)


def excerpt(seen: TextSeen, typed: str | None = None) -> str:
    """The text, quoted; a long one cut to _MAX_TEXT characters around what was typed."""
    if seen.secret:
        return f"{seen.size} characters (hidden)"
    if seen.whole and len(seen.text) <= _MAX_TEXT:
        return _quote(seen.text, _MAX_TEXT)
    where = _last_of(seen.text, typed) if typed else None
    if where is None:
        where = (0, 0) if seen.whole else (len(seen.text) // 2, len(seen.text) // 2)
    middle = (where[0] + where[1]) // 2
    first = max(0, min(middle - _MAX_TEXT // 2, len(seen.text) - _MAX_TEXT))
    cut = seen.text[first : first + _MAX_TEXT]
    before = "…" if seen.start + first > 0 else ""
    after = "…" if seen.start + first + len(cut) < seen.size else ""
    return f"{before}{cut!r}{after} ({seen.size} characters)"


def _text_line(
    seen: TextSeen, typed: str | None = None, found: bool = True, unchanged: bool = False
) -> str:
    if unchanged and not found:
        return f"{seen.control} still holds {excerpt(seen, typed)} (unchanged)"
    holds = "is now empty" if seen.size == 0 else f"now holds {excerpt(seen, typed)}"
    line = f"{seen.control} {holds}"
    if not typed:
        return line
    if found:
        return f"{line} (contains the typed text)"
    return f"{line}, without the typed {_quote(typed, _MAX_NAME)}"


def _window_lines(before: Look, after: Look) -> Iterator[str]:
    old = {w.xid: w for w in before.windows}
    new = {w.xid: w for w in after.windows}
    for xid, window in new.items():
        if xid not in old:
            yield f"new window {_quote(window.title, _MAX_NAME)} opened" + (
                " (active)" if window.active else ""
            )
        elif window.title != old[xid].title:
            yield f"window title now {_quote(window.title, _MAX_NAME)}"
    for xid, window in old.items():
        if xid not in new:
            yield f"window {_quote(window.title, _MAX_NAME)} closed"
    was = next((w.xid for w in before.windows if w.active), None)
    now = next((w for w in after.windows if w.active), None)
    if now is not None and now.xid != was and now.xid in old:
        yield f"{_quote(now.title, _MAX_NAME)} is now the active window"


def _node_lines(before: Look, after: Look, target: str | None) -> Iterator[str]:
    if after.nodes is None:
        return
    focused = after.focused
    if before.window != after.window or before.nodes is None:
        # Another window (a dialog that opened): where the keyboard goes now is what counts.
        if focused is not None:
            yield f"focus is on {after.nodes[focused].brief()}"
        return
    told = after.text.node if after.text is not None else None  # its line is written
    changed = [
        line
        for node in _target_first(after.nodes, target)
        if node in before.nodes
        for line in _changes(before.nodes[node], after.nodes[node], node != told)
    ]
    yield from changed[:1]
    if focused is not None and focused != before.focused:
        yield f"focus moved to {after.nodes[focused].brief()}"
    yield from changed[1:]
    if before.complete and after.complete:
        yield from _appeared(before.nodes, after.nodes)


def _target_first(nodes: Mapping[str, NodeSeen], target: str | None) -> list[str]:
    rest = [node for node in nodes if node != target]
    return [target, *rest] if target is not None and target in nodes else rest


def _changes(old: NodeSeen, new: NodeSeen, text: bool = True) -> Iterator[str]:
    # A window's name is its title, which the window list already tells.
    if new.name != old.name and new.role == old.role and new.role not in _WINDOW_ROLES:
        yield f"{old.brief()} now reads {_quote(new.name, _MAX_NAME)}"
    if text and None not in (old.text, new.text) and new.text != old.text:
        shown = "nothing" if not new.text else _quote(new.text, _MAX_TEXT)
        yield f"{new.brief()} now shows {shown}"
    for state in _TOLD_STATES:
        if (state in new.states) != (state in old.states):
            now = "now" if state in new.states else "no longer"
            yield f"{new.brief()} is {now} {state}"
    if ("enabled" in new.states) != ("enabled" in old.states):
        yield f"{new.brief()} is now {'enabled' if 'enabled' in new.states else 'disabled'}"


def _appeared(old: Mapping[str, NodeSeen], new: Mapping[str, NodeSeen]) -> Iterator[str]:
    """Named objects that came into view or went out of it (a panel, a message, rows)."""
    for nodes, others, verb in ((new, old, "appeared"), (old, new, "disappeared")):
        named = [seen for node, seen in nodes.items() if node not in others and seen.name]
        if named:
            listed = ", ".join(seen.brief() for seen in named[:3])
            more = f" and {len(named) - 3} more" if len(named) > 3 else ""
            yield f"{verb}: {listed}{more}"


def _last_of(text: str, typed: str) -> tuple[int, int] | None:
    for form in (typed, typed.strip(), typed.replace("\n", "")):
        if form and (at := text.rfind(form)) >= 0:
            return at, at + len(form)
    return None


def _quote(text: str, limit: int) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
