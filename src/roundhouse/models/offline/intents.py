"""What a clause of a request may mean: the offline planner's one table of intents.

Each line of INTENTS is a template (reading.py says how one reads) and what a clause of
that shape means: a shell question (shell.COMMANDS runs it) or a desktop operation (an Op,
carried out by subtask.py, apps.py and saving.py). Lines are tried in order; the first that
fits wins.
A slot's value is read as SLOTS says: a path, an application as the launcher knows it, a
text without its quotes, keys as the keys tool takes them. A value that cannot be what the
slot holds ("open gedit and the calculator": an application name with "and" in it) makes
the line not fit, so the clause is not understood rather than misread.

    read_request("Please open gedit. Type the words blue sky. Save the file to /tmp/s.txt")
    -> open 'gedit'; type 'blue sky'; save_as '/tmp/s.txt'

A request the planner cannot place whole is never acted on: `Reading.problem` names the
first clause it could not read, and the planner FAILs with it before any step.
Pure logic: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import get_args

from roundhouse.models.offline.ops import Op, OpKind
from roundhouse.models.offline.reading import (
    APPLICATIONS,
    BUTTON_NAMES,
    KEY_NAMES,
    KNOWN_STARTS,
    MODIFIERS,
    OTHER_VERBS,
    WORDS,
    Masked,
    Template,
    clauses,
    unquote,
)
from roundhouse.models.offline.shell import COMMANDS, ShellIntent, ShellName, combined

# --- slots: what a value may be --------------------------------------------------------------

_PRONOUNS = frozenset("it this that them these those there here one".split())
# Words of a clause with a subject and a verb: "the file is saved" is not "the Save button".
_CLAUSAL = frozenset(
    "is are was were be been has have had will would should must can could does do did i you"
    " we they he she".split()
)
_BOUNDARIES = re.compile(r",|;|\band\b|\bthen\b", re.IGNORECASE)
_NUMBERS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_TEXT_OPENINGS = re.compile(
    r"^(?:the (?:words?|text|phrase|sentence|line|following)|these words|this text"
    r"|the following text|following)\s*:?\s+",
    re.IGNORECASE,
)
_FORMULA = re.compile(
    r"^the (sum|total|average|mean) of (?:cells? )?([A-Z]{1,3}[0-9]+)"
    r" (?:to|through|and|until|-) ([A-Z]{1,3}[0-9]+)$",
    re.IGNORECASE,
)
_URL = re.compile(
    r"^(?:[a-z]+://\S+|www\.\S+|localhost(?::\d+)?(?:/\S*)?|\d+\.\d+\.\d+\.\d+(?::\d+)?(?:/\S*)?"
    r"|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|edu|gov|info|co|uk|de|fr|eu|app)(?:/\S*)?)$",
    re.IGNORECASE,
)


def _phrases(choices: str) -> list[str]:
    return [c.strip() for c in choices.split("|")]


def _aliases(table: dict[str, str]) -> dict[str, str]:
    return {spoken: meant for meant, said in table.items() for spoken in _phrases(said)}


_APPLICATIONS = _aliases(APPLICATIONS)
_BUTTONS = _aliases(BUTTON_NAMES)
# Places people name rather than write: "the root filesystem" is /, "my home folder" ~.
_PLACES = _aliases(
    {
        "/": (
            "the root filesystem | the root file system | root filesystem | the root partition"
            " | the root drive | root | the main disk | the disk | my disk | the drive"
            " | the hard drive | the hard disk | the system disk | the root directory"
        ),
        "~": (
            "my home folder | my home directory | my home | home | the home folder"
            " | the home directory | my home dir | home directory | home folder"
        ),
        ".": (
            "here | this folder | this directory | the current folder | the current directory"
            " | the working directory | the current dir | the folder i am in | this dir"
        ),
    }
)
_MACHINE = frozenset(_phrases(WORDS["machine"]))
# What "open" may name that is no application: a part of one, or a document to open in one.
_NO_APPLICATION = frozenset(
    "tab window file folder directory document page link menu dialog url address website"
    " site sheet spreadsheet workbook presentation report letter list".split()
)
_DOCUMENT = re.compile(
    r"\.(?:txt|md|pdf|docx?|xlsx?|ods|odt|odp|pptx?|csv|json|ya?ml|png|jpe?g|gif|svg|html?|log)$",
    re.IGNORECASE,
)
# A text that names a cell ("12 in A1 and 30 in the next cell") is not one text to type.
_NAMES_A_CELL = re.compile(r"\b(?:in|into) (?:cell )?[A-Z]{1,3}[0-9]+\b")


def _alternation(phrases: list[str]) -> str:
    return "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))


def _fits(value: str, words: int = 6) -> bool:
    """A name of a few words, with no clause boundary in it."""
    found = value.split()
    return (
        0 < len(found) <= words
        and not _BOUNDARIES.search(value)
        and value.casefold() not in _PRONOUNS
    )


def _text(value: str) -> str | None:
    value = _TEXT_OPENINGS.sub("", value.strip())
    text = unquote(value)
    if text == value and re.search(r"\binto\b", value, re.IGNORECASE):
        return None  # "type hello into gedit": into what is not said as a field or a cell
    if text == value and _NAMES_A_CELL.search(value):
        return None
    return text or None


def _value(value: str) -> str | None:
    """A cell's value: a text, a number, a formula, or one said ("the sum of A1 to A3")."""
    formula = _FORMULA.match(value.strip())
    if formula:
        function = {"sum": "SUM", "total": "SUM", "average": "AVERAGE", "mean": "AVERAGE"}
        kind, first, last = formula.groups()
        return f"={function[kind.casefold()]}({first.upper()}:{last.upper()})"
    if unquote(value) == value and _BOUNDARIES.search(value):
        return None  # "12 and in A2 type 30": more than one value
    return _text(value)


def _content(value: str) -> str | None:
    """A new file's text: anything but a word that points at something else ("it")."""
    text = _text(value)
    return text if text and text.casefold() not in _PRONOUNS else None


def _application(value: str) -> str | None:
    """The name the launcher is asked for: a kind it knows ("text editor"), else as said;
    not a thing inside an application ("a new tab") nor a document ("notes.txt")."""
    name = re.sub(
        r"^(?:(?:the|a|an|my|your|this|that|new|up)\s+)+", "", value.strip(), flags=re.IGNORECASE
    )
    name = re.sub(r"\s+(?:app|application|program|window)$", "", name, flags=re.IGNORECASE)
    if not name or _BOUNDARIES.search(name) or name.casefold() in _PRONOUNS:
        return None
    if name.casefold() not in _APPLICATIONS and name.split()[-1].casefold() in _NO_APPLICATION:
        return None  # "a new tab", "the budget spreadsheet": a thing inside an application
    if " " not in name and _DOCUMENT.search(name):
        return None
    return _APPLICATIONS.get(name.casefold(), _APPLICATIONS.get(value.casefold(), name))


def _path(value: str) -> str | None:
    place = _PLACES.get(value.casefold())
    if place is not None:
        return place
    if value.casefold() in _PRONOUNS or _MACHINE & {value.casefold()}:
        return None
    return unquote(value)


def _file(value: str) -> str | None:
    """A path that looks like one: "notes.txt", "/etc/hostname", "~/x", or quoted."""
    if value[:1] in "'\"“‘" or re.search(r"[/.~]", value):
        return _path(value)
    return None


def _where(value: str) -> str | None:
    """Where disk space is asked about: a path, or the machine itself (its root)."""
    return "/" if value.casefold() in _MACHINE else _path(value)


def _count(value: str) -> str | None:
    word = value.casefold()
    return str(_NUMBERS.index(word) + 1) if word in _NUMBERS else value


def _cell(value: str) -> str | None:
    return value.upper()


def _name(value: str) -> str | None:
    """A control's or a table's name as said: a few words, no boundary, no place."""
    name = unquote(value)
    return name if _fits(value) else None


def _button(value: str) -> str | None:
    name = _name(value)
    return None if name is None else _BUTTONS.get(name.casefold(), name)


def _new_name(value: str) -> str | None:
    """A name to give (a folder, a file): none that says where it goes ("x in /tmp")."""
    if re.search(r"\s(?:in|into|inside|under|on|at)\s", value, re.IGNORECASE):
        return None
    return _name(value)


def _keys(value: str) -> str | None:
    """Keys as the keys tool takes them: "ctrl+s", "Return", "ctrl+shift+t Return";
    "ctrl-s" and "control s" too."""
    words = value.replace("-", "+").split()
    combos: list[str] = []
    for word in words:
        if combos and combos[-1].endswith("+"):
            combos[-1] += word
        elif combos and combos[-1].casefold() in MODIFIERS:
            combos[-1] += "+" + word
        else:
            combos.append(word)
    for combo in combos:
        *modifiers, key = combo.split("+") if combo != "+" else ["+"]
        if any(m.casefold() not in MODIFIERS for m in modifiers):
            return None
        if not (len(key) == 1 or key.casefold() in KEY_NAMES):
            return None
    return " ".join(combos) or None


def _url(value: str) -> str | None:
    return unquote(value) if value.casefold() not in _PRONOUNS else None


def _web(value: str) -> str | None:
    """An address that can only be one ("example.org", "http://…"): "open" it in a browser."""
    return unquote(value) if _URL.match(unquote(value)) else None


@dataclass(frozen=True)
class Slot:
    pattern: str  # what it matches in a clause (quoted texts are one masked word)
    read: Callable[[str], str | None]  # the value as meant; None: the line does not fit


_ONE = r"\S+"
_SOME = r".+?"
SLOTS: dict[str, Slot] = {
    "text": Slot(_SOME, _text),
    "value": Slot(_SOME, _value),
    "content": Slot(_SOME, _content),
    "app": Slot(_SOME, _application),
    "path": Slot(rf"{_alternation(list(_PLACES))}|{_ONE}", _path),
    "dir": Slot(rf"{_alternation(list(_PLACES))}|{_ONE}", _path),
    "file": Slot(_ONE, _file),
    "where": Slot(rf"{_alternation([*_PLACES, *_MACHINE])}|{_ONE}", _where),
    "count": Slot(rf"\d+|{'|'.join(_NUMBERS)}", _count),
    "cell": Slot(r"[A-Za-z]{1,3}[0-9]{1,7}", _cell),
    "field": Slot(_SOME, _name),
    "button": Slot(_SOME, _button),
    "kind": Slot(_SOME, str.casefold),  # the kind of control said: "button", "link", "tab"
    "column": Slot(_SOME, _name),
    "row": Slot(_SOME, _name),
    "keys": Slot(_SOME, _keys),
    "url": Slot(_ONE, _url),
    "web": Slot(_ONE, _web),
    "place": Slot(_ONE, _path),
    "name": Slot(_SOME, _new_name),
    "old": Slot(_SOME, _name),
    "new": Slot(_SOME, _new_name),
}
# Which field of an Op each slot fills (ops.py says what text and target hold per kind).
OP_FIELDS: dict[str, str] = {
    "text": "text",
    "value": "text",
    "app": "text",
    "keys": "text",
    "url": "text",
    "web": "text",
    "place": "text",
    "file": "text",
    "path": "text",
    "name": "text",
    "new": "text",
    "row": "text",
    "field": "target",
    "button": "target",
    "kind": "role",
    "cell": "target",
    "column": "target",
    "old": "target",
}

# Which argument of a shell intent (shell.COMMANDS) each slot is, and the arguments' defaults.
SHELL_ARGS: dict[str, str] = {
    "path": "path",
    "dir": "path",
    "file": "path",
    "where": "path",
    "count": "count",
    "content": "text",
}
SHELL_DEFAULTS: dict[str, dict[str, str]] = {
    "list_files": {"path": "."},
    "disk_free": {"path": "/"},
    "head": {"count": "10"},
}

# --- the table ---------------------------------------------------------------------------------

Meaning = ShellName | OpKind
SHELL_NAMES: frozenset[str] = frozenset(get_args(ShellName))


@dataclass(frozen=True)
class Line:
    template: Template
    means: Meaning
    # An application opened first, and an address gone to in it: "open example.org" opens a
    # web browser, "create a folder named x in /tmp" a file manager.
    opens: str | None = None
    needs_window: bool = False  # only about a window opened before ("what's the price of X")
    place: bool = False  # where the next steps are done: opened, unless it was just opened


def line(
    template: str,
    means: Meaning,
    opens: str | None = None,
    window: bool = False,
    place: bool = False,
) -> Line:
    patterns = {name: slot.pattern for name, slot in SLOTS.items()}
    return Line(Template.compile(template, patterns), means, opens, window, place)


# fmt: off
INTENTS: tuple[Line, ...] = (
    # --- questions the shell answers (shell.COMMANDS) ---
    line("[<ask>] [the|my] [current] [running] [linux] kernel [<version>] [<here>]", "kernel"),
    line("(which|what) [linux] kernel [<version>] (is|am i|are we|does|do i have|do we have) [<machine>] [running|using|installed|on|have|running on|in use] [on|in] [<machine>]", "kernel"),  # noqa: E501
    line("uname -r", "kernel"),
    line("[<ask>] [the] <system> [name|version|release] [<here>]", "os"),
    line("(which|what) (<system>|linux) (is|am i|are we|does) [<machine>|it|this] [running|installed|on|using|run|in use] [on|in] [<machine>]", "os"),  # noqa: E501
    line("[<ask>] [the] (hostname|host name|machine name|computer name|host) [<here>]", "hostname"),
    line("[<ask>] the name of <machine>", "hostname"),
    line("(what is|what's|how is) <machine> (called|named)", "hostname"),
    line("who am i [logged in as|running as]", "user"),
    line("whoami", "user"),
    line("(which|what) (user|account|username|user name) (am i|i am|i'm|is this|are we|is logged in|is running this) [logged in as|running as|using|as] [right now]", "user"),  # noqa: E501
    line("[<ask>] [the|my] [current] (user|user name|username|login|login name|account) [name] [(i am|i'm) (logged in as|using|running as)]", "user"),  # noqa: E501
    line("what (time|date|day|day of the week) is it [now|today|right now]", "time"),
    line("what (time|date|day) it is [now|today|right now]", "time"),
    line("[<ask>] [the|today's] [current] (time|date|date and time|time and date|day|local time|system time|clock) [now|today|right now|<here>]", "time"),  # noqa: E501
    line("[<ask>] today's date", "time"),
    line("what day is (it|today)", "time"),
    line("[<ask>] [the] [system] uptime [<here>]", "uptime"),
    line("how long (has|have) (<machine>|it|the server|we|you|the box) been (up|running|on|powered on|awake|alive) [for|now]", "uptime"),  # noqa: E501
    line("how long since the last (boot|reboot|restart)", "uptime"),
    line("how many <cpus> [are there|are available|does <machine> have|do i have|do we have|have i got|(are|are there) (in|on) <machine>|(in|on) <machine>|<machine> has]", "cpus"),  # noqa: E501
    line("[<ask>] [the] (number|count) of <cpus> [<here>]", "cpus"),
    line("[<ask>] [the] cpu (count|core count)", "cpus"),
    line("nproc", "cpus"),
    line("how much [<free>] <memory> [is|do i have|do we have|does <machine> have|have i got|is there|is installed] [<free>|used|in use|installed|in total|total|being used] [<here>]", "memory_free"),  # noqa: E501
    line("[<ask>] [the] [amount of] [<free>] <memory> [usage|available|left|free] [<here>]", "memory_free"),  # noqa: E501
    line("free -h", "memory_free"),
    line("how much [<free>] <space> [is|do i have|do we have|is there|there is|have i got|does <machine> have] [<free>|used|in use] [(on|in|of) {where}]", "disk_free"),  # noqa: E501
    line("[<ask>] [the] [amount of] [<free>] <space> [usage|left|available|free] [(on|in|of) {where}]", "disk_free"),  # noqa: E501
    line("(how full|how empty) is {where}", "disk_free"),
    line("is {where} (full|almost full|nearly full|running out of space)", "disk_free"),
    line("df [-h] [{path}]", "disk_free"),
    line("<list> [me] [all] [of] [the] <files> [(in|inside|under|within|of|from) [the] [<folder>] {dir}|here|in here]", "list_files"),  # noqa: E501
    line("list [all] [of] [the] [contents of|content of] [the] [<folder>] {dir}", "list_files"),
    line("<list> [me] [the] (contents|content|listing) of [the] <folder> {dir}", "list_files"),
    line("<list> [me] [a|the] [directory|file|folder] listing (of|for) [the] [<folder>] {dir}", "list_files"),  # noqa: E501
    line("(are there|is there|do i have|do we have) [any] <files> (in|inside|under) [the] [<folder>] {dir}", "list_files"),  # noqa: E501
    line("(what|which) <files> (are|exist|live|are there|can be found|do we have|do i have|are stored|are kept) (in|inside|under|within) [the] [<folder>] {dir}", "list_files"),  # noqa: E501
    line("what <files> (does|do) [the] [<folder>] {dir} (contain|have|hold)", "list_files"),
    line("(what is|what's) in the <folder> {dir}", "list_files"),
    line("what does the <folder> {dir} (contain|hold)", "list_files"),
    line("ls [-a|-A|-l|-la|-al|-1] [{dir}]", "list_files"),
    line("[<show>] [me] (what is|what's|whats) (in|inside) {path}", "inside"),
    line("what does {path} (contain|hold|have in it)", "inside"),
    line("<show> [me] [the] first [{count}] lines (of|in|from) [the] [file] {file}", "head"),
    line("<show> [me] the (top|beginning|start) [{count}] [lines] (of|in|from) [the] [file] {file}", "head"),  # noqa: E501
    line("head [-n] [{count}] {file}", "head"),
    line("[<show>] [me] [the] (contents|content|text) (of|in) [the] [file] {path}", "contents"),
    line("<show> [me] [the] file {path}", "contents"),
    line("<show> [me] {file}", "contents"),
    line("(cat|less|more) {file}", "contents"),
    line("what does [the] [file] {file} say", "contents"),
    line("what is (written|in the file) (in|at) {file}", "contents"),
    line("count [the] [number of] lines (of|in) [the] [file] {path}", "count_lines"),
    line("how many lines (are there in|are in|are there inside|in|does|are) [the] [file] {path} [have|contain|hold]", "count_lines"),  # noqa: E501
    line("[<ask>] [the] (number of lines|line count) (of|in|for) [the] [file] {path}", "count_lines"),  # noqa: E501
    line("how long is [the] [file] {file} [in lines]", "count_lines"),
    line("how many lines (has|have) [the] [file] {path} [got]", "count_lines"),
    line("wc -l {path}", "count_lines"),
    line("does [the] [file|folder|directory] {path} exist [<machine>]", "exists"),
    line("is there [a|an|any] [file|folder|directory|thing] [(called|named)] {path} [here|(on|in) <machine>]", "exists"),  # noqa: E501
    line("(check|tell me|see|find out|let me know) (if|whether) [the] [file|folder|directory] {path} (exists|is there|is present)", "exists"),  # noqa: E501
    line("[if|whether] [the] [file] {path} exists", "exists"),
    line("is [the] [file] {file} (there|present|around)", "exists"),
    line("do (i|we) have [a|any] [file] [(called|named)] {file}", "exists"),
    line("(create|make|write) [me] [a] [new] file [(called|named)] {file} (containing|with|with the text|that says|saying|with the contents|with the content|with content|holding|which says) {content}", "create_file"),  # noqa: E501
    line("(create|make) {file} (containing|with the text|with the contents|that says) {content}", "create_file"),  # noqa: E501
    line("(<write>|<save>) {content} (in|into|to) [a] [new] file (called|named) {file}", "create_file"),  # noqa: E501
    # --- a web browser ---
    line("<go> [the] [<page>] {url} [in the browser]", "goto"),
    line("<visit> [the] [<page>] {web} [in [the|a|an|my] [new] {app:browser} [window|tab]]", "goto", opens="web browser"),  # noqa: E501
    line("<open> [the|a|an|my] [new] {app:browser} [window] (at|on|to|with|showing) [the] [<page>] {place}", "goto", opens="web browser"),  # noqa: E501
    line("(visit|load) [the] [<page>] {url}", "goto"),
    # --- a file manager ---
    line("<open> [the|a|an|my] [new] {app:file manager} [window] (in|at|on|showing) [the] [<folder>] {place}", "goto", opens="file manager"),  # noqa: E501
    line("<open> [the] [<folder>] {place} in [the|a|an] [new] {app:file manager} [window]", "goto", opens="file manager"),  # noqa: E501
    line("<make> [a|an] [new] <folder> (named|called) {name} (in|inside|under|at) [the] [<folder>] {place}", "new_folder", opens="file manager"),  # noqa: E501
    line("(create|make|add) [a|an|one] [new] <folder> [(named|called|with the name)] {name}", "new_folder"),  # noqa: E501
    line("[a|an|one] [new] <folder> (named|called|with the name) {name}", "new_folder"),
    line("rename [the] [file|folder|directory] [(named|called)] {old} (to|as|into) {new}", "rename"),  # noqa: E501
    line("change the name of [the] [file|folder] {old} to {new}", "rename"),
    line("[have|get] {old} renamed (to|as) {new}", "rename"),
    # --- a spreadsheet or a table on a page ---
    line("<tell> [me] [the] (value|content|contents|text|number) (of|in|at|inside) [cell] {cell}", "read"),  # noqa: E501
    line("<tell> [me] (what is|what's) (in|at|inside) [cell] {cell}", "read"),
    line("(what is|what's|whats) (in|at|inside) cell {cell}", "read"),
    line("(what is|what's|whats) [the value of] cell {cell}", "read"),
    line("what does cell {cell} (say|contain|hold|show)", "read"),
    line("what cell {cell} (says|contains|holds|shows)", "read"),
    line("<tell> [me] cell {cell}", "read"),
    line("<tell> [me] the {column} (of|for) [the] {row} [in the table|on the page|in the sheet|there]", "read", window=True),  # noqa: E501
    line("(what is|what's|whats) the {column} (of|for) [the] {row} [in the table|on the page|in the sheet|there]", "read", window=True),  # noqa: E501
    line("<write> {value} (into|in|to|inside) [the] [cell] {cell}", "cell"),
    line("(in|into) [the] [cell] {cell} <write> {value}", "cell"),
    line("(set|fill|make) [the] [cell] {cell} (to|with|=) {value}", "cell"),
    # --- any window: fields, buttons, keys, saving, closing ---
    line("<write> {text} (into|in|inside|to|on) [the] {field} <field>", "type"),
    line("(in|into) the {field} <field> <write> {text}", "type"),
    line("fill [in|out] [the] {field} <field> with {text}", "type"),
    line("set [the] {field} <field> to {text}", "type"),
    line("<write> {text} (into|in|inside|to|on) <window>", "type"),
    line("<write> {text} (there|in there)", "type"),
    line("(in|into) <window> <write> {text}", "type"),
    line("<write> {text}", "type"),
    line("<press> [the] {keys} (key|keys|key combination|shortcut)", "keys"),
    line("use [the] [keyboard] shortcut {keys}", "keys"),
    line("<click> [on] [the] {button} {kind:button}", "click"),
    line("<press> {keys}", "keys"),
    line("(click|click on|tap|tap on) [the] {button}", "click"),
    line("(<press>|<click>) [on] [the] {button:sign}", "click"),
    line("<save> [<it>] (as|to|in|into|under|at) [a] [new] [file] [(called|named)] [the name] {file}", "save_as"),  # noqa: E501
    line("[have|get] [<it>] (saved|stored|kept) (as|to|in|into|under|at) {file}", "save_as"),
    line("<save> [<it>] [now|again]", "save"),
    line("[have|get] <it> saved", "save"),
    line("<close> [<it>|<window>|the window|{app}]", "close"),
    line("<open> {app}", "open"),
    # "in the calculator, press 8": that application (reading.py splits the place off)
    line("(in|inside|using|with) [the|a|an] {app:application}", "open", place=True),
)
# fmt: on

# Kinds of steps said again without their verb: "type 12 into A1, 30 into A2". A text typed
# into the window is not among them: in "type milk, eggs" eggs is more of the text.
ELLIPTICAL: frozenset[str] = frozenset({"cell", "click", "keys", "read", "rename", "new_folder"})


# --- reading a request ------------------------------------------------------------------------


@dataclass(frozen=True)
class ShellCall:
    """A question for the shell, and the values of its slots."""

    name: ShellName
    slots: tuple[tuple[str, str], ...]

    def intent(self) -> ShellIntent:
        return COMMANDS[self.name](dict(self.slots))


@dataclass(frozen=True)
class Part:
    """A clause and what it means: steps on the desktop, a shell question, or nothing."""

    clause: str
    ops: tuple[Op, ...] = ()
    shell: ShellCall | None = None
    line: Line | None = None
    words: str = ""  # the clause as it was read: quoted texts masked

    @property
    def understood(self) -> bool:
        return self.line is not None


@dataclass(frozen=True)
class Reading:
    request: str
    parts: tuple[Part, ...]

    @property
    def unread(self) -> list[str]:
        return [part.clause for part in self.parts if not part.understood]

    @property
    def ops(self) -> list[Op]:
        return [op for part in self.parts for op in part.ops]

    @property
    def questions(self) -> list[ShellCall]:
        return [part.shell for part in self.parts if part.shell is not None]

    def shell_intent(self) -> ShellIntent | None:
        """The request as shell questions, when every part is one."""
        if self.problem() or not self.questions or self.ops:
            return None
        return combined([call.intent() for call in self.questions])

    def problem(self) -> str | None:
        """Why the request cannot be planned whole, naming the part: None when it can."""
        if self.unread:
            return f"I do not understand {self.unread[0]!r}."
        if not self.parts:
            return "There is nothing to do."
        asked = next((p.clause for p in self.parts if p.shell is not None), None)
        acted = next((p.clause for p in self.parts if p.ops), None)
        if asked is not None and acted is not None:
            return (
                f"{asked!r} is a question for the shell and {acted!r} a step on the desktop; "
                "the offline model does one or the other in a request: ask them apart."
            )
        return None

    def plan(self) -> list[str] | None:
        """The plan in words, one step a line ("open 'gedit'", "kernel"): None if it FAILs."""
        if self.problem():
            return None
        return [describe(op) for op in self.ops] + [describe_call(c) for c in self.questions]


def read_request(request: str) -> Reading:
    """What each clause of `request` means."""
    masked = Masked.of(request)
    elliptical: dict[str, Part] = {}  # fragments read as the clause before them again

    def continues(before: str, fragment: str) -> bool:
        said = elliptical.get(before) or _read(masked, before, in_window=True)
        again = _again(masked, said, fragment)
        if again is not None:
            elliptical[fragment] = again
        return again is not None

    def reads(text: str) -> bool:
        return _read(masked, text, in_window=True).understood

    parts: list[Part] = []
    window = False  # a window is open: opened or gone to before in the request
    for clause in clauses(masked, continues, reads):
        part = _read(masked, clause, window)
        if not part.understood and parts:
            part = _again(masked, parts[-1], clause) or part
        part = _in_context(part, _opened(parts), window)
        window = window or any(op.kind in ("open", "goto") for op in part.ops)
        parts.append(part)
    return Reading(request, tuple(parts))


def _in_context(part: Part, opened: str | None, window: bool) -> Part:
    """A part without the opening it only implies, where the request opened a window for
    it before: "open gedit. In gedit, type x", "open the browser, visit example.org"."""
    if part.line is None or not part.ops or part.ops[0].kind != "open":
        return part
    if part.line.place and part.ops[0].text == opened:
        return replace(part, ops=())
    if part.line.opens == part.ops[0].text and window:
        return replace(part, ops=part.ops[1:])
    return part


def _alike(step: Op, before: Op) -> bool:
    """Steps of one kind, said one after the other: keys and buttons alike ("press 9,
    times, 9, equals"), a text into a field after a text into a field."""
    buttons = {"click", "keys"}
    if {step.kind, before.kind} <= buttons:
        return True
    return step.kind == before.kind and bool(step.target) == bool(before.target)


def _opened(parts: list[Part]) -> str | None:
    """The application the request opened last."""
    opened = [op.text for part in parts for op in part.ops if op.kind == "open"]
    return opened[-1] if opened else None


def _again(masked: Masked, before: Part, fragment: str) -> Part | None:
    """`fragment` read as the clause `before` said again without its verb: "30 into A2"
    after "type 12 into A1", "the 3 button" after "click the 7 button"; or in the same
    shape as it, "in A2 type 30" after "in A1 type 12". Only for the kinds of ELLIPTICAL
    and a text typed into a named field. A question after a question is one of its own:
    "the kernel version and the uptime"."""
    if before.shell is not None:
        alone = _read(masked, fragment, in_window=False)
        whole = _read(masked, f"{before.words} and {fragment}", in_window=False)
        return alone if alone.shell is not None and whole.shell is None else None
    if before.line is None or not before.ops:
        return None
    last = before.ops[-1]
    if last.kind not in ELLIPTICAL and not (last.kind == "type" and last.target):
        return None
    # Said again without its verb: no verb first ("paint a sunset" is no button after a
    # click), and no subject and verb within ("the file is saved").
    heard = fragment.split()
    verbless = bool(heard) and heard[0].casefold() not in KNOWN_STARTS | OTHER_VERBS
    verbless = verbless and not any(w.casefold() in _CLAUSAL for w in heard)
    words = before.words.split()
    for count in range(0, min(3, len(words) - 1) + 1):
        if count and not verbless:
            break
        candidate = " ".join([*words[:count], fragment])
        part = _read(masked, candidate, in_window=True)
        step = part.ops[-1] if part.ops else None
        if step and _alike(step, last):
            return part
    return None


def _read(masked: Masked, clause: str, in_window: bool) -> Part:
    for entry in INTENTS:
        if entry.needs_window and not in_window:
            continue
        found = entry.template.match(clause)
        if found is None:
            continue
        values = {name: SLOTS[name].read(masked.unmask(value)) for name, value in found.items()}
        if any(value is None for value in values.values()):
            continue
        slots = {name: value for name, value in values.items() if value is not None}
        return replace(_meant(entry, masked.unmask(clause), slots), words=clause)
    return Part(masked.unmask(clause), words=clause)


def _meant(entry: Line, clause: str, slots: dict[str, str]) -> Part:
    if entry.means in SHELL_NAMES:
        name: ShellName = entry.means  # type: ignore[assignment]
        args = {**SHELL_DEFAULTS.get(name, {})}
        args.update({SHELL_ARGS[slot]: value for slot, value in slots.items()})
        return Part(clause, shell=ShellCall(name, tuple(sorted(args.items()))), line=entry)
    kind: OpKind = entry.means  # type: ignore[assignment]
    if entry.opens is None:
        fields = {OP_FIELDS[name]: value for name, value in slots.items()}
        return Part(clause, (Op(kind, clause, **fields),), line=entry)
    # "open example.org", "create a folder named x in /tmp": open the application, go to
    # the address in it, then do the rest there; each step in its own words, as people read
    # them in the subtask the host hands on.
    address = next(slots.pop(name) for name in ("place", "web", "url") if name in slots)
    opened = Op("open", clause, text=slots.pop("app", entry.opens))
    ops = [opened, Op("goto", f"go to {_quoted(address)}", address)]
    if kind == "new_folder":
        ops.append(Op(kind, f"create a folder named {_quoted(slots['name'])}", slots["name"]))
    return Part(clause, tuple(ops), line=entry)


def _quoted(text: str) -> str:
    return text if len(text.split()) == 1 else repr(text)


def describe(op: Op) -> str:
    """An operation in one line: "open 'gedit'", "type 'Ada' into 'Name'"."""
    if op.kind in ("save", "close"):
        return op.kind
    if op.kind in ("type", "cell") and op.target:
        return f"{op.kind} {op.text!r} into {op.target!r}"
    if op.kind == "read":
        return f"read {op.target!r}" + (f" of {op.text!r}" if op.text else "")
    if op.kind == "rename":
        return f"rename {op.target!r} to {op.text!r}"
    if op.kind == "click":
        return f"click {op.target!r}"
    return f"{op.kind} {op.text!r}"


def describe_call(call: ShellCall) -> str:
    """A shell question in one line: "kernel", "disk_free path='/'"."""
    return " ".join([call.name, *(f"{name}={value!r}" for name, value in call.slots)])


def understand(request: str) -> ShellIntent | None:
    """The shell intent of a request that is shell questions only."""
    return read_request(request).shell_intent()
