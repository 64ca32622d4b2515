"""How the offline planner reads a request as people write it: split into clauses, without
the words that only carry politeness, with verbs known by what they mean.

    clauses("Please open gedit. Type the words blue sky, then save it to /tmp/s.txt")
    -> ["open gedit", "Type the words blue sky", "save it to /tmp/s.txt"]

A request is cut at sentence ends, ";" and "then" (hard boundaries), and at ",", "and" and
", and" only where what follows starts a clause of its own: a verb, a question, or the
same kind of step again without its verb ("type 12 into A1, 30 into A2"). So "type milk,
eggs and bread" stays one clause, and "type hello, paint a sunset" is two: the second is
a verb the planner does not know, which it FAILs rather than type. A quoted text is never
cut. The intents (intents.py) say in templates what a clause may mean:

    "<write> {text} (into|in) the {field} (field|box)"

<write> is every verb of WORDS["write"], (a|b) one of, [a|b] optionally one of, {field} a
slot (SLOTS in intents.py). Adding a synonym is adding it to WORDS. Pure logic: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

# --- words by meaning --------------------------------------------------------------------
# A template's <name> stands for any of these; each entry is a phrase, lower case.

WORDS: dict[str, str] = {
    # verbs of the desktop
    "open": "open | open up | launch | start | start up | run | bring up | fire up | pull up",
    "write": (
        "type | type in | type out | write | write down | enter | put | input | key in | jot down"
        " | note down"
    ),
    "save": "save | store | keep",
    "close": "close | quit | exit | shut",
    "click": "click | click on | press | hit | push | tap | tap on | select | choose | pick",
    "press": "press | hit | push | strike",
    "go": "go to | navigate to | browse to | head to | head over to | take me to | surf to",
    "visit": "visit | load | open | open up | bring up | pull up",
    "make": "create | make | add | set up",
    "tell": (
        "tell me | tell | say | read | read out | read me | report | give me | show me | show"
        " | let me know | find | find out | look up | get | check"
    ),
    # verbs and openings of the shell's questions
    "show": (
        "show | show me | display | print | print out | output | give me | tell me | let me see"
        " | get | read | read out | read me | list"
    ),
    "list": "list | list out | show | show me | display | print | give me | tell me | get",
    "ask": (
        "what is | what's | whats | what are | tell me | show me | show | give me | print"
        " | display | report | let me know | know | find out | check | get | i would like"
        " | i'd like | do you know | can you tell me | what was"
    ),
    # what a step acts on
    "it": (
        "it | this | that | the file | the document | the text | the note | the notes | my work"
        " | your work | the changes | my changes | everything | the page | the sheet"
        " | the spreadsheet | this file | this document | the new file | the new document"
    ),
    # "in it", "there", "into the document": the window just opened
    "window": (
        "it | there | the document | the window | the editor | the text editor | the file"
        " | the app | the application | the program | the new document | the empty document"
        " | the open document | the new file | this document | this window | the page"
    ),
    "field": "field | box | entry | input | text box | textbox | input field | text field",
    "page": "page | web page | site | website | url | address",
    "button": (
        "button | checkbox | check box | tab | menu item | link | option | radio button | icon"
    ),
    # what the shell's questions are about
    "machine": (
        "this machine | this computer | this system | this box | this host | this server"
        " | this pc | the machine | the computer | the system | my machine | my computer"
        " | my system | the server | this linux box | this vm | here"
    ),
    "files": (
        "files | file names | filenames | entries | files and folders | files and directories"
        " | files and subfolders | items | things | documents | everything | all files"
    ),
    "folder": "folder | directory | dir | subfolder | sub-folder",
    "space": (
        "disk space | space | disk | storage | room | storage space | drive space | space on disk"
        " | hard disk space | hard drive space"
    ),
    "free": "free | available | left | remaining | unused | spare | left over",
    "memory": "memory | ram | system memory | main memory",
    "version": "version | release | version number | release number | build",
    # applications named by what they are (APPLICATIONS says what each is launched as)
    "browser": (
        "web browser | browser | internet browser | chromium | chrome | google chrome | firefox"
        " | mozilla firefox | epiphany | the web | web"
    ),
    "file manager": (
        "file manager | file browser | files app | file explorer | files | folder browser"
        " | thunar | nautilus | dolphin | nemo | pcmanfm"
    ),
    "system": (
        "operating system | os | distribution | distro | linux distribution | linux distro"
        " | linux version | version of linux | os version | os release | system version"
        " | flavor of linux | flavour of linux | version of debian | debian version"
        " | version of ubuntu | ubuntu version"
    ),
    "cpus": (
        "cpus | cpu cores | cores | processors | processor cores | cpu threads | threads | vcpus"
        " | cpu's | logical cpus"
    ),
}

# What people call an application, and the name the launcher is asked for (its KINDS,
# apps/launcher.py, know these kinds); any other name goes as it is said ("gedit").
APPLICATIONS: dict[str, str] = {
    "text editor": "text editor | editor | text editor app | notepad | plain text editor",
    "web browser": "web browser | browser | internet browser | the internet | the web | internet",
    "file manager": "file manager | file browser | files | file explorer | folder browser",
    "terminal": "terminal | terminal window | terminal emulator | console | command line",
    "spreadsheet": "spreadsheet | spreadsheet app | spreadsheet program | spreadsheet editor",
    "calculator": "calculator | calculator app | calc app",
    "word processor": "word processor | word processing app | document editor",
}

# Applications known by name, besides the kinds above and WORDS' browsers and file managers.
NAMED = (
    "gedit | mousepad | kate | kwrite | gnome text editor | gnome-text-editor | libreoffice"
    " | libreoffice calc | libreoffice writer | localc | lowriter | calc | writer | xterm"
    " | konsole | gnome terminal | gnome-terminal | gnome calculator | gnome-calculator"
    " | galculator | kcalc"
)
# An application named as the place a step is done in: "in the calculator, press 8".
WORDS["application"] = " | ".join(
    [*APPLICATIONS.values(), WORDS["browser"], WORDS["file manager"], NAMED]
)

# Buttons people name by what they do: a calculator's "plus" is its "+" button.
BUTTON_NAMES: dict[str, str] = {
    "+": "plus | the plus sign | plus sign",
    "−": "minus | the minus sign | minus sign | subtract",
    "×": "times | multiply | multiplied by | the times sign | multiplication sign",
    "÷": "divide | divided by | the division sign | division sign",
    "=": "equals | equal | equals sign | the equals sign | equal sign",
    ".": "decimal point | the decimal point",
    "%": "percent | percent sign",
    "√": "square root",
}

WORDS["sign"] = " | ".join(BUTTON_NAMES.values())
# "on this machine", "of this computer", "here": what a question about the machine may end with
WORDS["here"] = " | ".join(
    [
        f"{at} {machine.strip()}"
        for at in ("on", "of", "for", "in", "running on", "used by")
        for machine in WORDS["machine"].split("|")
    ]
    + ["here", "on here"]
)

# Key names the keys tool knows (devices/linux/display/x11/input.py), lower case.
KEY_NAMES = frozenset(
    """
    enter return escape esc tab space spacebar backspace bksp delete del home end up down
    left right pageup pagedown page_up page_down pgup pgdn insert ins menu plus minus
    capslock printscreen print
    """.split()
) | frozenset(f"f{n}" for n in range(1, 25))
MODIFIERS = frozenset("ctrl control shift alt super win meta altgr".split())

# Openings and endings that carry no meaning: "please", "could you", "I'd like you to".
LEADING_FILLERS = (
    "please | pls | plz | kindly | ok | okay | so | hey | hi | now | then | also | and | next"
    " | first | firstly | first of all | second | secondly | finally | lastly | after that"
    " | afterwards | once done | when done | once that is done | once that's done"
    " | once it is open | once it's open | when it opens | when it is open | when it's open"
    " | just | quickly | simply | go ahead and | can you | could you | would you | will you"
    " | can u | could u | would you please | i would like you to | i'd like you to"
    " | i would like to | i'd like to | i want you to | i want to | i need you to | i need to"
    " | i wanna | we need to | help me | let us | let's | try to | be so kind as to"
    " | do me a favor and | do me a favour and | you should | you can | you could | i'd love you to"
    " | would you be so kind as to | is it possible to | i'd love it if you could"
    " | i need | i want | i would like | i'd like | i wish | in it | in there | inside it"
)
# Openings of a question that wrap it: "tell me how much memory is free".
QUESTION_OPENINGS = (
    "tell me | i want to know | i would like to know | i'd like to know | i need to know"
    " | do you know | can you tell me | could you tell me | let me know | i wonder | show me"
    " | find out | check"
)
QUESTION_WORDS = "how | what | what's | which | who | whether | if | when | where | is | does"
TRAILING_FILLERS = "please | for me | for me please | if you can | if possible | if you could"
THANKS = "thanks | thank you | thx | cheers"  # only after a comma: "type thank you" types it

# Verbs that are a clause alone: "type hello and save".
ALONE = frozenset("save close quit exit".split())

# Verbs the planner does not act on, which still start a clause: "type hello, paint a
# sunset" is two clauses, and the second FAILs; it is never typed.
OTHER_VERBS = frozenset(
    """
    add are bold book buy calculate call can cancel change check clear compose compute
    convert copy could count create cut delete divide do does download drag draw drop edit
    email empty erase fetch fill find fix format forward give highlight how install is jot
    kill let list log look mail make maximise maximize message minimise minimize move
    multiply mute order paint paste pick ping play post print reboot record refresh reload
    remind remove rename replace reply resize restart schedule scroll search send set
    share show shut shutdown sign sort subtract sum switch take tell text translate turn
    underline undo uninstall unzip update upload use wait what when where which who why
    will would zip zoom
    """.split()
)

# An abbreviation's dot does not end a sentence.
_ABBREVIATIONS = frozenset("e.g i.e etc dr mr mrs ms st vs no approx".split())


def phrases(name: str) -> list[str]:
    """The phrases of a WORDS entry, longest first (so "open up" is tried before "open")."""
    return sorted((p.strip() for p in WORDS[name].split("|")), key=len, reverse=True)


def _alternation(choices: str) -> str:
    """Phrases as a regex alternation, longest first, each word apart by one space, an
    apostrophe matching ' and ’."""
    ordered = sorted((c.strip() for c in choices.split("|")), key=len, reverse=True)
    return "|".join(re.escape(c).replace("'", "['’]") for c in ordered)


# The WORDS entries that are verbs, or the openings of questions.
VERBS = "open write save close click press go visit make tell show list ask".split()
# A clause after a comma or "and" that begins with one of these is a clause of its own.
KNOWN_STARTS = frozenset(phrase.split()[0] for name in VERBS for phrase in phrases(name)) - {"i"}
_LEADING = re.compile(
    rf"^(?:(?:(?:{_alternation(QUESTION_OPENINGS)})\s+(?=(?:{_alternation(QUESTION_WORDS)})\s)"
    rf"|(?:{_alternation(LEADING_FILLERS + ' | ' + THANKS)})\b)[\s,:]*)+",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    rf"(?:[\s,]+(?:{_alternation(TRAILING_FILLERS)})|\s*,\s*(?:{_alternation(THANKS)}))+$",
    re.IGNORECASE,
)
# End punctuation, but not a path of dots ("list the files in ..").
_END_PUNCTUATION = re.compile(r"(?<![\s.])[\s?!.,;:]+$")

# --- quoted texts ---------------------------------------------------------------------------

_QUOTED = re.compile(r"""(?<!\w)(?:'[^']*'|"[^"]*"|“[^”]*”|‘[^’]*’)(?!\w)""")
_MASK = re.compile(r"\x00(\d+)\x00")


@dataclass(frozen=True)
class Masked:
    """A request with its quoted texts replaced by \\x00N\\x00, so nothing cuts them."""

    text: str
    quoted: tuple[str, ...]

    @classmethod
    def of(cls, request: str) -> Masked:
        quoted: list[str] = []

        def hide(match: re.Match[str]) -> str:
            quoted.append(match.group(0))
            return f"\x00{len(quoted) - 1}\x00"

        return cls(_QUOTED.sub(hide, request), tuple(quoted))

    def unmask(self, text: str) -> str:
        return _MASK.sub(lambda m: self.quoted[int(m.group(1))], text)


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) > 1 and (text[0], text[-1]) in (("'", "'"), ('"', '"'), ("“", "”"), ("‘", "’")):
        return text[1:-1]
    return text


# --- clauses ----------------------------------------------------------------------------------

# Sentence ends; then hard boundaries; then soft ones, kept only before a clause of its own.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
_HARD = re.compile(r"\s*;\s*|,?\s+(?:and\s+)?(?:then|after\s+that|afterwards),?\s+", re.IGNORECASE)
_IN_APPLICATION = re.compile(
    rf"^\s*((?:in|inside|using|with) (?:the |a |an )?(?:{_alternation(WORDS['application'])}))"
    rf"(?:\s*,\s*|\s+)(?=\S)",
    re.IGNORECASE,
)
_SOFT = re.compile(r"(\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)", re.IGNORECASE)

# Whether a fragment is the clause before it said again without its verb ("30 into A2"
# after "type 12 into A1"), and whether a text reads as a clause: intents.py decides.
Continues = Callable[[str, str], bool]
Reads = Callable[[str], bool]


def clauses(masked: Masked, continues: Continues, reads: Reads) -> list[str]:
    """The clauses of a request (quoted texts still masked), fillers and end punctuation gone,
    in the order given."""
    found = []
    for sentence in _sentences(masked.text):
        for piece in _HARD.split(sentence):
            piece = _LEADING.sub("", piece)
            place = _IN_APPLICATION.match(piece)
            if place:  # "in the calculator press 8": where, then what
                found.append(place.group(1))
                piece = piece[place.end() :]
            found += _soft_split(piece, continues, reads)
    return [clause for clause in (tidy(c) for c in found) if clause]


def _sentences(text: str) -> Iterator[str]:
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].split()
        if before and before[-1].rstrip(".").casefold() in _ABBREVIATIONS:
            continue
        yield text[start : match.start()]
        start = match.end()
    yield text[start:]


def _soft_split(piece: str, continues: Continues, reads: Reads) -> list[str]:
    parts = _SOFT.split(piece)
    current, found = parts[0], []
    for separator, fragment in zip(parts[1::2], parts[2::2], strict=True):
        # "In the Name field, type Ada": a place said first is no clause alone.
        placed = not reads(tidy(current)) and reads(tidy(current + separator + fragment))
        if not placed and (starts_clause(fragment) or continues(tidy(current), tidy(fragment))):
            found.append(current)
            current = fragment
        else:
            current += separator + fragment
    return [*found, current]


def starts_clause(fragment: str) -> bool:
    """Whether a fragment after a comma or "and" begins a clause of its own: a filler
    ("please"), or a verb, known or not; but not a verb that is the fragment's only word
    and no clause alone ("milk, eggs and fish": a fish; "type it and save": save it)."""
    text = fragment.strip()
    if _LEADING.match(text):
        return True
    words = text.split()
    if not words:
        return False
    first = words[0].casefold().strip(",:.!?")
    if len(words) == 1:
        return first in ALONE
    return first in KNOWN_STARTS or first in OTHER_VERBS


def tidy(clause: str) -> str:
    """A clause without its leading and trailing fillers and end punctuation, its spaces
    single."""
    text = " ".join(clause.split())
    previous = None
    while previous != text:
        previous = text
        text = _END_PUNCTUATION.sub("", text)
        text = _LEADING.sub("", text)
        text = _TRAILING.sub("", text)
    return text


# --- templates ------------------------------------------------------------------------------

# What follows each piece of a template: a space, or a comma and a space ("In the Name field,
# type Ada").
_GAP = ",? "
_TOKEN = re.compile(r"\s*(<\w+>|\{\w+(?::[\w ]+)?\}|[\[\]()|]|[^\s\[\]()|<{]+)")


@dataclass(frozen=True)
class Template:
    """A clause's shape: words, <WORDS>, (one|of), [optional|words], {slots}, groups nested.
    Each piece of the pattern ends with the space (or ", ") that follows it. Its regex is
    compiled at its first use: the whole table takes ~0.2 s, which a command that never
    reads a request (another model's run, a bench) should not pay."""

    source: str
    regex: str

    @classmethod
    def compile(cls, source: str, slot_patterns: dict[str, str]) -> Template:
        tokens = _TOKEN.findall(source)
        regex, rest = _sequence(tokens, slot_patterns)
        if rest:
            raise ValueError(f"template {source!r}: unbalanced at {' '.join(rest)!r}")
        return cls(source, regex)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.IGNORECASE)

    def match(self, clause: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(clause + " ")
        if found is None:
            return None
        return {name: value.strip() for name, value in found.groupdict().items() if value}


def _sequence(tokens: list[str], slots: dict[str, str]) -> tuple[str, list[str]]:
    """Pieces up to a "|" or a closing bracket; returns the pattern and the tokens left."""
    pieces = []
    while tokens and tokens[0] not in ("|", ")", "]"):
        token, tokens = tokens[0], tokens[1:]
        if token in ("(", "["):
            choices = []
            while True:
                choice, tokens = _sequence(tokens, slots)
                choices.append(choice)
                closing, tokens = tokens[0], tokens[1:]
                if closing != "|":
                    break
            if closing != {"(": ")", "[": "]"}[token]:
                raise ValueError(f"{token} closed by {closing}")
            # The longer choice first: "click on the Save button" is not a click on "on the Save".
            choices.sort(key=len, reverse=True)
            pieces.append(f"(?:{'|'.join(choices)})" + ("?" if token == "[" else ""))
        elif token.startswith("<"):
            pieces.append(f"(?:{_alternation(WORDS[token[1:-1]])}){_GAP}")
        elif token.startswith("{"):
            name, _, word_class = token[1:-1].partition(":")
            shape = _alternation(WORDS[word_class]) if word_class else slots[name]
            pieces.append(f"(?P<{name}>{shape}){_GAP}")
        else:
            pieces.append(re.escape(token).replace("'", "['’]") + _GAP)
    return "".join(pieces), tokens
