"""The installed applications as freedesktop.org describes them: desktop entries and the
user's default application per file type. launcher.py decides among them; this module only
reads (it starts nothing).

Desktop Entry spec: every `*.desktop` file under `applications/` of each XDG data folder
($XDG_DATA_HOME, then each of $XDG_DATA_DIRS: Flatpak's and Snap's exports are among them
when installed). A file's desktop-file id is its path below that folder with '/' as '-'
(kde/kate.desktop is kde-kate.desktop); the first folder holding an id wins, and if its
file says Hidden the id is gone altogether.

Mime apps spec: the [Default Applications] group of each `mimeapps.list`, the desktop's own
(`gnome-mimeapps.list`) before the generic one, the user's configuration before the
system's; the first installed application listed for a mime type is its default.

Files are read defensively: whatever sits in those folders (a named pipe, a directory
called x.desktop, Latin-1 text) is skipped or read as well as it can be, never raised.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1 << 20  # a desktop entry or mimeapps.list is a few KiB; more is not one
MAIN_GROUP = "Desktop Entry"
DEFAULTS_GROUP = "Default Applications"
# Exec field codes (spec, "The Exec key"). We launch without files or URLs, so the file
# and URL codes go; %c is the entry's name and %k its file; the rest are deprecated.
_DROPPED_CODES = frozenset("fFuUiDdNnvm")
# String escapes (spec, "Possible value types"); "\;" separates nothing inside a list item.
_ESCAPES = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\", ";": ";"}
# `env` switches that take a value: `env -u VAR prog` runs prog, not VAR.
_ENV_SWITCHES_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir"})


@dataclass(frozen=True, kw_only=True)
class Xdg:
    """What the XDG specs read from one process environment (the desktop's, not ours)."""

    data_home: Path
    data_dirs: tuple[Path, ...]
    config_home: Path
    config_dirs: tuple[Path, ...]
    desktops: tuple[str, ...]  # XDG_CURRENT_DESKTOP "ubuntu:GNOME" -> ("ubuntu", "GNOME")
    locales: tuple[str, ...]  # suffixes of localized keys to try, best first: de_DE, de
    path: str  # PATH, where programs are looked up

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Xdg:
        home = Path(env.get("HOME") or Path.home())
        return cls(
            data_home=_folder(env.get("XDG_DATA_HOME"), home / ".local/share"),
            data_dirs=_folders(env.get("XDG_DATA_DIRS"), "/usr/local/share:/usr/share"),
            config_home=_folder(env.get("XDG_CONFIG_HOME"), home / ".config"),
            config_dirs=_folders(env.get("XDG_CONFIG_DIRS"), "/etc/xdg"),
            desktops=tuple(d for d in env.get("XDG_CURRENT_DESKTOP", "").split(":") if d),
            locales=locale_suffixes(env),
            path=env.get("PATH", os.defpath),
        )

    @property
    def application_dirs(self) -> tuple[Path, ...]:
        """Where desktop entries live, the one that wins first."""
        return tuple(folder / "applications" for folder in (self.data_home, *self.data_dirs))

    @property
    def mimeapps_files(self) -> tuple[Path, ...]:
        """The mimeapps.list files, most important first (mime apps spec, "File name and
        location"); defaults.list is the older name some distributions still ship."""
        desktop_lists = [f"{desktop.lower()}-mimeapps.list" for desktop in self.desktops]
        files = [
            folder / name
            for folder in (self.config_home, *self.config_dirs)
            for name in (*desktop_lists, "mimeapps.list")
        ]
        files += [
            folder / name
            for folder in self.application_dirs
            for name in (*desktop_lists, "mimeapps.list", "defaults.list")
        ]
        return tuple(files)

    def installed(self, program: str) -> bool:
        """Whether `program` (a name looked up on PATH, or a path) can be run."""
        return bool(program) and shutil.which(program, path=self.path) is not None


def _folder(value: str | None, default: Path) -> Path:
    # The spec ignores relative paths in these variables.
    return Path(value) if value and os.path.isabs(value) else default


def _folders(value: str | None, default: str) -> tuple[Path, ...]:
    folders = tuple(Path(part) for part in (value or "").split(":") if os.path.isabs(part))
    return folders or tuple(Path(part) for part in default.split(":"))


def locale_suffixes(env: Mapping[str, str]) -> tuple[str, ...]:
    """The suffixes of localized keys for the messages locale, best first (spec,
    "Localized values for keys"): de_DE.UTF-8@euro gives de_DE@euro, de_DE, de@euro, de."""
    value = next((env[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(name)), "")
    match = re.fullmatch(r"([A-Za-z]+)(?:_([A-Za-z0-9]+))?(?:\.[^@]*)?(?:@(.+))?", value)
    if match is None or match.group(1) in ("C", "POSIX"):
        return ()
    lang, country, modifier = match.groups()
    suffixes = []
    if country and modifier:
        suffixes.append(f"{lang}_{country}@{modifier}")
    if country:
        suffixes.append(f"{lang}_{country}")
    if modifier:
        suffixes.append(f"{lang}@{modifier}")
    suffixes.append(lang)
    return tuple(suffixes)


@dataclass(frozen=True)
class DesktopEntry:
    """One launchable application, with its texts in the user's language."""

    id: str  # desktop-file id: "org.gnome.gedit.desktop", "kde-kate.desktop"
    path: Path
    argv: tuple[str, ...]  # Exec with its field codes removed: starts it with no file
    names: tuple[str, ...]  # Name in the user's language first, then the untranslated one
    generic_names: tuple[str, ...] = ()  # "Text Editor"; none for Debian's gedit
    comment: str = ""
    keywords: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()  # "Utility", "TextEditor"
    mime_types: tuple[str, ...] = ()
    terminal: bool = False  # a program for a terminal (vim): it needs a terminal emulator

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def generic_name(self) -> str:
        return self.generic_names[0] if self.generic_names else ""

    @property
    def executable(self) -> str:
        """The program's file name: "firefox" for `env BAMF_...=x /snap/bin/firefox %u`."""
        return Path(program(self.argv)).name


def read_entries(xdg: Xdg) -> list[DesktopEntry]:
    """The applications a menu on this desktop would show and that can run here, in
    precedence order (the user's own folder first, then each data folder's files by id)."""
    seen: set[str] = set()
    entries: list[DesktopEntry] = []
    for folder in xdg.application_dirs:
        for desktop_id, path in _desktop_files(folder):
            if desktop_id in seen:
                continue
            text = read_text(path)
            if text is None:
                continue  # unreadable: it hides nothing either
            seen.add(desktop_id)  # even a Hidden entry hides this id in later folders
            entry = _entry(desktop_id, path, read_group(text, MAIN_GROUP), xdg)
            if entry is not None:
                entries.append(entry)
    return entries


def read_defaults(xdg: Xdg) -> dict[str, tuple[str, ...]]:
    """mime type -> desktop ids from every [Default Applications] group, the most important
    file first. The first of them that is installed is the user's default."""
    defaults: dict[str, list[str]] = {}
    for path in xdg.mimeapps_files:
        text = read_text(path)
        if text is None:
            continue
        for mime_type, value in read_group(text, DEFAULTS_GROUP).items():
            listed = defaults.setdefault(mime_type, [])
            listed += [desktop_id for desktop_id in split_list(value) if desktop_id not in listed]
    return {mime_type: tuple(ids) for mime_type, ids in defaults.items()}


def _desktop_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """(desktop-file id, path) of the .desktop files under `folder`, in a stable order.
    Symlinked subfolders are not followed: a link loop must not make us walk forever."""
    for root, dirs, files in os.walk(folder, onerror=_log_walk_error):
        dirs.sort()
        relative = Path(root).relative_to(folder)
        for name in sorted(files):
            if name.endswith(".desktop"):
                yield "-".join((*relative.parts, name)), Path(root, name)


def _log_walk_error(error: OSError) -> None:
    if not isinstance(error, FileNotFoundError):  # most data folders have no applications/
        log.info("cannot list %s: %s", error.filename, error)


def read_text(path: Path) -> str | None:
    """A small regular file's text; None for anything else. O_NONBLOCK: opening a named
    pipe nobody writes to returns at once instead of waiting for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if not isinstance(error, FileNotFoundError):
            log.info("cannot open %s: %s", path, error)
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            log.info("skipping %s: not a regular file", path)
            return None
        try:
            data = file.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            log.info("cannot read %s: %s", path, error)
            return None
    if len(data) > MAX_FILE_BYTES:
        log.info("skipping %s: larger than %d bytes", path, MAX_FILE_BYTES)
        return None
    # The specs say UTF-8; a file in another encoding still yields its ASCII keys.
    return data.decode("utf-8", errors="replace")


def read_group(text: str, group: str) -> dict[str, str]:
    """The keys of one [group] of an ini-like XDG file, values as written (still escaped).
    Keys keep their locale: "Name[de]". A repeated key keeps its first value."""
    values: dict[str, str] = {}
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            inside = line == f"[{group}]"
        elif inside and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), value.strip())
    return values


def unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)


def split_list(value: str) -> tuple[str, ...]:
    """A list value ("Utility;TextEditor;"), split at every ';' not escaped as "\\;"."""
    return tuple(unescape(item) for item in re.findall(r"(?:[^;\\]|\\.)+", value) if item.strip())


def _entry(desktop_id: str, path: Path, values: Mapping[str, str], xdg: Xdg) -> DesktopEntry | None:
    """The entry, or None when it is not an application this desktop would show and run."""

    def localized(key: str) -> str:
        """The key's value in the user's language if the file has one (still escaped)."""
        found = (values.get(f"{key}[{suffix}]") for suffix in xdg.locales)
        return next((value for value in found if value), values.get(key, ""))

    def both(key: str) -> tuple[str, ...]:
        """The value in the user's language, then the untranslated one when it differs."""
        texts = (unescape(localized(key)), unescape(values.get(key, "")))
        return tuple(dict.fromkeys(text for text in texts if text))

    def flag(key: str) -> bool:
        return values.get(key, "").lower() in ("true", "1")

    if values.get("Type") != "Application" or flag("Hidden") or flag("NoDisplay"):
        return None
    only = split_list(values.get("OnlyShowIn", ""))
    if only and not set(only) & set(xdg.desktops):
        return None
    if set(split_list(values.get("NotShowIn", ""))) & set(xdg.desktops):
        return None
    names = both("Name")
    if not names:
        return None
    argv = parse_exec(unescape(values.get("Exec", "")), names[0], path)
    try_exec = unescape(values.get("TryExec", ""))
    if not argv or (try_exec and not xdg.installed(try_exec)):
        return None
    if not xdg.installed(argv[0]) or not xdg.installed(program(argv)):
        return None
    return DesktopEntry(
        id=desktop_id,
        path=path,
        argv=argv,
        names=names,
        generic_names=both("GenericName"),
        comment=unescape(localized("Comment")),
        keywords=split_list(localized("Keywords")),
        categories=split_list(values.get("Categories", "")),
        mime_types=split_list(values.get("MimeType", "")),
        terminal=flag("Terminal"),
    )


def parse_exec(value: str, name: str, path: Path) -> tuple[str, ...]:
    """The argv of an (unescaped) Exec value, its field codes removed (spec, "The Exec
    key"): arguments split at spaces, "double quotes" with \\-escapes inside; single quotes
    too, which the spec does not allow but real files use. () when it is malformed."""
    args: list[str] = []
    current, in_argument, quote = "", False, ""
    chars = iter(value)
    for char in chars:
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                current += next(chars, "")
            else:
                current += char
        elif char in " \t\n":
            if in_argument:
                args.append(current)
            current, in_argument = "", False
        else:
            in_argument = True
            if char in "\"'":
                quote = char
            elif char == "\\":
                current += next(chars, "")
            else:
                current += char
    if quote:
        return ()
    if in_argument:
        args.append(current)
    return tuple(_expand(arg, name, path) for arg in args if not _is_dropped_code(arg))


def _is_dropped_code(arg: str) -> bool:
    return len(arg) == 2 and arg[0] == "%" and arg[1] in _DROPPED_CODES


def _expand(arg: str, name: str, path: Path) -> str:
    """Field codes inside an argument: %% is %, %c the name, %k the file; others go."""
    replacements = {"%": "%", "c": name, "k": str(path)}
    return re.sub(r"%(.)", lambda m: replacements.get(m.group(1), ""), arg)


def program(argv: tuple[str, ...] | list[str]) -> str:
    """The program a command runs: /snap/bin/firefox for `env BAMF_...=x /snap/bin/firefox`."""
    if not argv or Path(argv[0]).name != "env":
        return argv[0] if argv else ""
    rest = list(argv[1:])
    while rest and ("=" in rest[0] or rest[0].startswith("-")):
        switch = rest.pop(0)
        if switch in _ENV_SWITCHES_WITH_VALUE and rest:
            rest.pop(0)
    return rest[0] if rest else argv[0]
