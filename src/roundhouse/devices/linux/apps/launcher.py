"""Which application to start for what was asked: "text editor", "Kate", "kwrite",
"mousepad /tmp/a.txt", "vim". Pure decisions over what desktop_files.py read:

    apps = Applications.load(desktop.env)
    candidates = resolve("text editor", apps)  # up to MAX_CANDIDATES, best first

A request is matched, in this order, as
1. a kind of application (KINDS: "text editor", "web browser", ...): the user's default
   for the kind's mime type first, then the other graphical applications of the kind.
   A kind stays generic even when an application is named so (GNOME's "Text Editor"), so
   the user's default still comes first;
2. an application's name (in the user's language or untranslated), desktop-file id or
   executable: "gedit", "org.gnome.gedit", "Kate", "kwrite";
3. a generic name that is no kind in KINDS ("Note Taker"), ranked as a kind;
4. a command line whose program is installed: "mousepad /tmp/a.txt";
5. a weaker match: part of a name, a keyword, a category, the comment.
Nothing: LaunchError, with the near names ("Did you mean ..."); Launcher.launch (launch.py)
reports it as a WindowError.

For a generic request (1, 3, 5) an application that runs in a terminal (Terminal=true,
vim) is never offered while a graphical one matches, even when it is the user's default:
"the text editor" means a window to type into. Asked for by name, it runs inside a
terminal emulator (x-terminal-emulator, else an installed one).
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from roundhouse.devices.linux.apps.desktop_files import (
    DesktopEntry,
    Xdg,
    program,
    read_defaults,
    read_entries,
)

MAX_CANDIDATES = 3  # tried in turn by Launcher.launch (launch.py) until one opens a window
MAX_LISTED = 40  # applications named in an error


class LaunchError(RuntimeError):
    """Nothing to start for the request; the message says what there is instead."""


@dataclass(frozen=True)
class Kind:
    """A kind of application people ask for without naming one."""

    label: str  # how the application list says what an app is for: "Text Editor"
    category: str  # the desktop-entry category of such apps: "TextEditor"
    mime_type: str | None  # whose default application (mimeapps.list) the user prefers
    requests: tuple[str, ...]  # what people call it, lower case


KINDS = (
    Kind("Text Editor", "TextEditor", "text/plain", ("text editor", "editor")),
    Kind("Web Browser", "WebBrowser", "x-scheme-handler/https", ("web browser", "browser")),
    Kind("File Manager", "FileManager", "inode/directory", ("file manager", "files")),
    Kind("Terminal", "TerminalEmulator", None, ("terminal", "terminal emulator")),
    Kind(
        "Spreadsheet",
        "Spreadsheet",
        "application/vnd.oasis.opendocument.spreadsheet",
        ("spreadsheet",),
    ),
    Kind(
        "Word Processor",
        "WordProcessor",
        "application/vnd.oasis.opendocument.text",
        ("word processor",),
    ),
    Kind("Calculator", "Calculator", None, ("calculator",)),
    Kind("Email", "Email", "x-scheme-handler/mailto", ("email", "email client", "mail client")),
    Kind("Image Viewer", "Viewer", "image/png", ("image viewer", "photo viewer")),
)
TERMINAL = next(kind for kind in KINDS if kind.category == "TerminalEmulator")
# The switch after which a terminal emulator runs a command given as separate arguments.
# Not listed: "-e" (xterm, konsole, alacritty, and Debian's x-terminal-emulator).
_RUN_SWITCHES = {
    "gnome-terminal": "--",
    "kgx": "--",
    "ptyxis": "--",
    "xfce4-terminal": "-x",  # its -e takes one string
    "mate-terminal": "-x",
    "terminator": "-x",
}


@dataclass(frozen=True)
class Applications:
    """What one desktop can start: its entries and its user's default applications."""

    entries: tuple[DesktopEntry, ...]  # in precedence order (desktop_files.read_entries)
    defaults: Mapping[str, tuple[str, ...]]  # mime type -> desktop ids, preferred first
    xdg: Xdg

    @classmethod
    def load(cls, env: Mapping[str, str]) -> Applications:
        """Read the entries and mimeapps.list files `env`'s XDG variables point at."""
        xdg = Xdg.from_env(env)
        return cls(tuple(read_entries(xdg)), read_defaults(xdg), xdg)


@dataclass(frozen=True)
class Candidate:
    """One way to satisfy a request: what to run and how to name it to the model."""

    argv: tuple[str, ...]  # ready to run (inside a terminal emulator when it needs one)
    label: str  # "gedit — Text Editor", or the command line as asked
    entry: DesktopEntry | None = None  # None: a command line


def resolve(request: str, apps: Applications) -> list[Candidate]:
    """Up to MAX_CANDIDATES ways to start what `request` names, best first."""
    wanted = _normalise(request)
    if not wanted:
        raise LaunchError("no application given")
    kind = next((k for k in KINDS if wanted in k.requests or wanted == k.label.casefold()), None)
    named = _ranked(apps.entries, lambda entry: _named(entry, wanted))
    # Named so first (GNOME's "Terminal" before XTerm), but after the user's defaults.
    if kind is not None and (of_kind := [*named, *_of_kind(kind, apps)]):
        return _candidates(request, _generic(of_kind, apps, kind.mime_type), apps)
    if named:
        return _candidates(request, named, apps)
    purpose = [e for e in apps.entries if wanted in _casefolded(e.generic_names)]
    if purpose:
        return _candidates(request, _generic(purpose, apps), apps)
    command = _command_line(request, apps)
    if command is not None:
        return [command]
    weak = _ranked(apps.entries, lambda entry: _weakly(entry, wanted))
    if weak:
        return _candidates(request, _generic(weak, apps), apps)
    raise LaunchError(_unknown(request, wanted, apps))


def describe(entry: DesktopEntry) -> str:
    """An application as people know it, with what it is for: "gedit — Text Editor",
    "Chromium — Web Browser", "Vim — Text Editor (runs in a terminal)"."""
    purpose = entry.generic_name or next(
        (kind.label for kind in KINDS if kind.category in entry.categories), ""
    )
    name = short_name(entry)
    text = f"{name} — {purpose}" if purpose and purpose.lower() != name.lower() else name
    return text + " (runs in a terminal)" if entry.terminal else text


def application_list(apps: Applications) -> list[str]:
    """Every application, described, in alphabetical order: the host's menu."""
    return sorted({describe(entry) for entry in apps.entries}, key=str.casefold)


def short_name(entry: DesktopEntry) -> str:
    """The name without a trailing generic name: "Chromium Web Browser" is "Chromium"."""
    suffix = f" {entry.generic_name}"
    if entry.generic_name and entry.name.lower().endswith(suffix.lower()):
        return entry.name[: -len(suffix)].strip() or entry.name
    return entry.name


# --- matching ---------------------------------------------------------------------------


def _normalise(request: str) -> str:
    """Case-folded, single spaces, without "the"/"a" before it or "app" after it."""
    words = request.casefold().split()
    if len(words) > 1 and words[0] in ("the", "a", "an"):
        words = words[1:]
    if len(words) > 1 and words[-1] in ("app", "application"):
        words = words[:-1]
    return " ".join(words)


def _casefolded(texts: Iterable[str]) -> set[str]:
    return {text.casefold() for text in texts}


def _named(entry: DesktopEntry, wanted: str) -> int | None:
    """How exactly the entry is what `wanted` names: 0 its name, 1 its desktop-file id
    (or the id's last part: "nautilus" for org.gnome.Nautilus), 2 its executable."""
    if wanted in _casefolded((*entry.names, short_name(entry))):
        return 0
    stem = entry.id.removesuffix(".desktop").casefold()
    if wanted in (entry.id.casefold(), stem, stem.rpartition(".")[2]):
        return 1
    if wanted == entry.executable.casefold():
        return 2
    return None


def _weakly(entry: DesktopEntry, wanted: str) -> int | None:
    """How an entry loosely matches: 0 part of its name, 1 a keyword or part of its
    generic name, 2 a category, 3 part of its comment. Only for whole requests of a few
    letters at least: "calculator and compute 12*7" names no application."""
    if len(wanted) < 3:
        return None
    if any(wanted in name for name in _casefolded(entry.names)):
        return 0
    if wanted in _casefolded(entry.keywords) or any(
        wanted in generic for generic in _casefolded(entry.generic_names)
    ):
        return 1
    if wanted in _casefolded(entry.categories):
        return 2
    if len(wanted) >= 4 and wanted in entry.comment.casefold():
        return 3
    return None


def _of_kind(kind: Kind, apps: Applications) -> list[DesktopEntry]:
    """The entries of a kind: its category or generic name, or the user's default for it."""
    defaults = set(apps.defaults.get(kind.mime_type, ())) if kind.mime_type else set()
    return [
        entry
        for entry in apps.entries
        if kind.category in entry.categories
        or kind.label.casefold() in _casefolded(entry.generic_names)
        or entry.id in defaults
    ]


def _generic(
    matches: Sequence[DesktopEntry], apps: Applications, mime_type: str | None = None
) -> list[DesktopEntry]:
    """The matches of a generic request: only the graphical ones when there are any; the
    user's defaults for `mime_type` first, the rest in the order given."""
    unique = list(dict.fromkeys(matches))
    graphical = [entry for entry in unique if not entry.terminal]
    preferred = apps.defaults.get(mime_type, ()) if mime_type else ()
    rank = {desktop_id: i for i, desktop_id in enumerate(preferred)}
    return sorted(graphical or unique, key=lambda entry: rank.get(entry.id, len(rank)))


def _ranked(
    entries: Iterable[DesktopEntry], score: Callable[[DesktopEntry], int | None]
) -> list[DesktopEntry]:
    """The entries that score at all, best (lowest) score first, else in the order given."""
    scored = [(found, i, e) for i, e in enumerate(entries) if (found := score(e)) is not None]
    return [entry for *_, entry in sorted(scored, key=lambda item: item[:2])]


def _candidates(
    request: str, entries: Sequence[DesktopEntry], apps: Applications
) -> list[Candidate]:
    """The first MAX_CANDIDATES entries as commands; terminal programs wrapped in a terminal."""
    chosen = list(dict.fromkeys(entries))[:MAX_CANDIDATES]
    terminal = terminal_command(apps) if any(entry.terminal for entry in chosen) else None
    found = []
    for entry in chosen:
        if not entry.terminal:
            found.append(Candidate(entry.argv, describe(entry), entry))
        elif terminal is not None:
            found.append(Candidate((*terminal, *entry.argv), describe(entry), entry))
    if not found:
        raise LaunchError(
            f"{request.strip()!r}: {short_name(chosen[0])} runs in a terminal, and no "
            "terminal emulator is installed (x-terminal-emulator or an application of "
            "category TerminalEmulator, e.g. xterm)"
        )
    return found


def _command_line(request: str, apps: Applications) -> Candidate | None:
    """The request as a command, if its program is installed; a terminal program (vim
    notes.txt) runs in a terminal emulator as its entry would."""
    try:
        argv = tuple(shlex.split(request))
    except ValueError:
        return None
    if not argv or not apps.xdg.installed(argv[0]):
        return None
    name = Path(program(argv)).name
    entry = next((e for e in apps.entries if e.terminal and e.executable == name), None)
    terminal = terminal_command(apps) if entry is not None else None
    if entry is None or terminal is None:
        return Candidate(argv, request.strip(), None)
    return Candidate((*terminal, *argv), request.strip(), entry)


def terminal_command(apps: Applications) -> tuple[str, ...] | None:
    """The start of a command line that runs a program in a new terminal window, or None
    when no terminal emulator is installed. Debian's x-terminal-emulator is the system's
    choice; else the first graphical terminal application."""
    if apps.xdg.installed("x-terminal-emulator"):
        return ("x-terminal-emulator", "-e")
    terminals = [entry for entry in _of_kind(TERMINAL, apps) if not entry.terminal]
    if not terminals:
        return None
    chosen = terminals[0]
    return (*chosen.argv, _RUN_SWITCHES.get(chosen.executable, "-e"))


def _unknown(request: str, wanted: str, apps: Applications) -> str:
    """What to tell the model when nothing matches: the near names, then what exists."""
    known: dict[str, str] = {}  # lower case -> as shown
    for entry in apps.entries:
        for name in (*entry.names, short_name(entry), entry.executable):
            known.setdefault(name.casefold(), short_name(entry))
    for kind in KINDS:
        for asked in kind.requests:
            known.setdefault(asked, asked)
    near = [known[key] for key in difflib.get_close_matches(wanted, list(known), n=5)]
    message = f"no application or command {request.strip()!r} here."
    if near:
        message += f" Did you mean {', '.join(dict.fromkeys(near))}?"
    names = sorted({short_name(entry) for entry in apps.entries}, key=str.casefold)
    listed = ", ".join(names[:MAX_LISTED]) or "none"
    more = f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return f"{message} Applications: {listed}{more}"
