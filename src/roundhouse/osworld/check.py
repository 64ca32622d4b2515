"""Whether each OSWorld task can run here, and if not, why (`roundhouse osworld check`).

Every task lands in exactly one class, the first of these that holds:
1. needs the live web: it asks for OSWorld's proxy, or a step, its instruction or a result
   getter names a site (a URL that is not a file it downloads), or it logs in to Google;
2. needs an application not installed: one it launches, opens a document in, names among
   its related apps, or whose settings its getters read, or a service its commands need.
   `make test` installs every one Debian has (scripts/system-deps.sh), so on such a machine
   this class holds only what Debian lacks, each named with why: VS Code (no Debian
   package) and systemd's timedatectl (systemd is not PID 1 on a virtual desktop);
3. uses a step, getter or metric not implemented here (or a compare_table rule type);
4. needs files missing from the cache (`--files DIR`: see files.py);
5. runnable here.

What is installed is a fact about the machine, read when the check runs (Machine); the
classifying itself is pure.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from roundhouse.osworld.evaluate import missing
from roundhouse.osworld.files import FileCache, cache_key, download_urls, task_urls
from roundhouse.osworld.steps import STEPS
from roundhouse.osworld.tasks import OsworldItem, Step

Klass = Literal["runnable", "files", "web", "apps", "missing"]
CLASSES: dict[Klass, str] = {
    "runnable": "runnable here",
    "files": "needs files missing from the cache",
    "web": "needs the live web",
    "apps": "needs an application not installed",
    "missing": "uses a step, getter or metric not implemented",
}
URL = re.compile(r"https?://[^\s\"'\\)<>]+")
WEB_STEPS = frozenset({"login", "googledrive"})
WEB_GETTERS = frozenset({
    "googledrive_file", "info_from_website", "page_info", "pdf_from_url",
    "gotoRecreationPage_and_get_html_content",
})  # fmt: skip


@dataclass(frozen=True)
class App:
    """An application (or service) a task may need, and how to tell it is here."""

    name: str
    programs: tuple[str, ...] = ()  # any of these on PATH
    paths: tuple[str, ...] = ()  # or any of these existing
    why: str = ""  # why a machine with `make test`'s packages still lacks it

    @property
    def shown(self) -> str:
        return f"{self.name} ({self.why})" if self.why else self.name


APPS: dict[str, App] = {
    app.name: app
    for app in (
        App("Chromium (for Google Chrome)", ("chromium", "chromium-browser", "google-chrome")),
        App("LibreOffice Calc", ("localc",), ("/usr/lib/libreoffice/program/scalc",)),
        App("LibreOffice Writer", ("lowriter",), ("/usr/lib/libreoffice/program/swriter",)),
        App("LibreOffice Impress", ("loimpress",), ("/usr/lib/libreoffice/program/simpress",)),
        App("VS Code", ("code",), why="no Debian package"),
        App("GIMP", ("gimp",)),
        App("VLC", ("vlc",)),
        App("Thunderbird", ("thunderbird",)),
        App("Files (Nautilus)", ("nautilus",)),
        App("GNOME Terminal", ("gnome-terminal",)),
        App(
            "systemd (timedatectl)",
            (),
            ("/run/systemd/system",),
            why="systemd is not PID 1 on a virtual desktop",
        ),
        App("PulseAudio", ("pulseaudio",)),
    )
}
CHROME, CALC, WRITER, IMPRESS = (
    "Chromium (for Google Chrome)", "LibreOffice Calc", "LibreOffice Writer",
    "LibreOffice Impress",
)  # fmt: skip
PROGRAMS = {
    "google-chrome": CHROME, "chrome": CHROME, "chromium": CHROME, "chromium-browser": CHROME,
    "code": "VS Code", "gimp": "GIMP", "vlc": "VLC", "thunderbird": "Thunderbird",
    "nautilus": "Files (Nautilus)", "gnome-terminal": "GNOME Terminal",
}  # fmt: skip
# Words in a command that name what it needs (a getter's `timedatectl status`).
COMMAND_WORDS = {"timedatectl": "systemd (timedatectl)", "pulseaudio": "PulseAudio"}
RELATED = {
    "chrome": CHROME, "browser": CHROME, "libreoffice_calc": CALC, "libreoffice calc": CALC,
    "calc": CALC, "libreoffice_writer": WRITER, "writer": WRITER,
    "libreoffice_impress": IMPRESS, "impress": IMPRESS, "vs_code": "VS Code",
    "vscode": "VS Code", "gimp": "GIMP", "vlc": "VLC", "thunderbird": "Thunderbird",
    "terminal": "GNOME Terminal",
}  # fmt: skip
SUFFIXES = {
    **dict.fromkeys((".xlsx", ".xls", ".ods", ".csv"), CALC),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), WRITER),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), IMPRESS),
}
WINDOWS = {
    "visual studio code": "VS Code", "gnu image manipulation program": "GIMP",
    "thunderbird": "Thunderbird", "vlc": "VLC", "libreoffice impress": IMPRESS,
    "google chrome": CHROME, "terminal": "GNOME Terminal",
}  # fmt: skip
GETTER_APPS = {"vlc": "VLC", "vscode": "VS Code", "gimp": "GIMP", "thunderbird": "Thunderbird"}
METRIC_APPS = {"thunderbird": "Thunderbird", "vlc": "VLC", "qt_": "VLC", "pptx": IMPRESS,
               "slide": IMPRESS, "gimp": "GIMP"}  # fmt: skip


# What roundhouse leaves out on purpose, and why (named in the "missing" reason).
LEFT_OUT = {
    "metric 'compare_image_text'": "OCR with easyocr, whose weights are fetched from the "
    "network at first use (torch besides)",
    "getter 'chrome_appearance_mode_ui'": "newer than desktop-env 1.0.2, which the tests hold "
    "ours to; OSWorld's reads chrome://settings through Playwright",
}


@dataclass(frozen=True)
class Machine:
    """Which of APPS this machine has (read by `Machine.here()`, or stated by a test)."""

    installed: frozenset[str]

    @classmethod
    def here(cls, which: Callable[[str], str | None] = shutil.which) -> Machine:
        found = {
            app.name
            for app in APPS.values()
            if any(which(p) for p in app.programs) or any(Path(p).exists() for p in app.paths)
        }
        return cls(frozenset(found))


@dataclass(frozen=True)
class Verdict:
    klass: Klass
    reason: str  # why, in a line ("" for a runnable task)


def classify(item: OsworldItem, machine: Machine, files: FileCache | None) -> Verdict:
    task = item.task
    web = live_web(item)
    if web:
        return Verdict("web", web)
    absent = sorted(needed_apps(item) - machine.installed)
    if absent:
        return Verdict("apps", ", ".join(APPS[name].shown for name in absent))
    lacking = [f"step {s.type!r}" for s in task.steps() if s.type not in STEPS]
    lacking += missing(task.evaluator)
    if lacking:
        named = [f"{what} ({LEFT_OUT[what]})" if what in LEFT_OUT else what for what in lacking]
        return Verdict("missing", ", ".join(sorted(set(named))))
    absent_files = [url for url in task_urls(item) if files is None or files.find(url) is None]
    if absent_files:
        shown = str(cache_key(absent_files[0])).rsplit("/", 2)[-2:]
        more = f" and {len(absent_files) - 1} more" if len(absent_files) > 1 else ""
        return Verdict("files", f"{'/'.join(shown)}{more}")
    return Verdict("runnable", "")


def uses_google_drive(item: OsworldItem) -> bool:
    """The task uploads to or reads from Google Drive: the 8 OSWorld-Verified leaves out
    (its test_nogdrive.json lists the other 361)."""
    task = item.task
    return any(step.type == "googledrive" for step in task.steps()) or any(
        getter.type == "googledrive_file" for getter in task.evaluator.getters()
    )


def live_web(item: OsworldItem) -> str:
    """Why the task needs live sites ("" when it does not)."""
    task = item.task
    if task.proxy:
        return "it asks for OSWorld's proxy"
    for step in task.steps():
        if step.type in WEB_STEPS:
            return f"its {step.type} step signs in to Google"
        files = set(download_urls(step))
        urls = [u for u in _urls(step.parameters) if u not in files]
        if urls:
            return f"its {step.type} step opens {urls[0]}"
    urls = _urls(task.instruction)
    if urls:
        return f"its instruction names {urls[0]}"
    for part in task.evaluator.parts():
        getter = part.result
        if getter is None:
            continue
        if getter.type in WEB_GETTERS:
            return f"its {getter.type} getter reads a live page"
        if getter.type != "cloud_file":
            urls = _urls(getter.config)
            if urls:
                return f"its {getter.type} getter reads {urls[0]}"
    return ""


def needed_apps(item: OsworldItem) -> set[str]:
    task = item.task
    needs = {RELATED[a.lower()] for a in task.related_apps if a.lower() in RELATED}
    for step in task.steps():
        needs |= _step_apps(step)
    for part in task.evaluator.parts():
        needs |= {app for key, app in METRIC_APPS.items() if key in part.metric}
        for getter in (part.result, part.expected):
            if getter is None:
                continue
            needs |= {app for key, app in GETTER_APPS.items() if key in getter.type}
            needs |= _command_apps(getter.config.get("command"))
    return needs


def _step_apps(step: Step) -> set[str]:
    p = step.parameters
    if step.type in ("launch", "execute", "command"):
        return _command_apps(p.get("command"))
    if step.type == "open":
        suffix = Path(str(p.get("path", ""))).suffix.lower()
        return {SUFFIXES[suffix]} if suffix in SUFFIXES else set()
    if step.type in ("activate_window", "close_window"):
        name = str(p.get("window_name", "")).lower()
        return {app for key, app in WINDOWS.items() if key in name}
    if step.type in ("chrome_open_tabs", "chrome_close_tabs"):
        return {CHROME}
    return set()


def _command_apps(command: Any) -> set[str]:
    if isinstance(command, list):
        words = [str(w) for w in command]
    elif isinstance(command, str):
        words = command.split()
    else:
        return set()
    needs = {PROGRAMS[Path(words[0]).name]} if words and Path(words[0]).name in PROGRAMS else set()
    if words and words[0] in ("libreoffice", "soffice"):
        needs |= {app for flag, app in (("--calc", CALC), ("--writer", WRITER),
                                        ("--impress", IMPRESS)) if flag in words}  # fmt: skip
    text = " ".join(words)
    needs |= {app for word, app in COMMAND_WORDS.items() if re.search(rf"\b{word}\b", text)}
    return needs


def _urls(value: Any) -> list[str]:
    if isinstance(value, str):
        return URL.findall(value)
    if isinstance(value, list):
        return [u for item in value for u in _urls(item)]
    if isinstance(value, dict):
        return [u for item in value.values() for u in _urls(item)]
    return []


# ---------------------------------------------------------------- the table


def tally(verdicts: list[tuple[OsworldItem, Verdict]]) -> dict[str, Counter[Klass]]:
    counts: dict[str, Counter[Klass]] = {}
    for item, verdict in verdicts:
        counts.setdefault(item.domain, Counter())[verdict.klass] += 1
    return counts


def table(verdicts: list[tuple[OsworldItem, Verdict]]) -> str:
    """Counts per domain and class, and the total row."""
    counts = tally(verdicts)
    heads = {"runnable": "runnable", "files": "files", "web": "web", "apps": "apps",
             "missing": "missing"}  # fmt: skip
    columns: tuple[Klass, ...] = ("runnable", "files", "web", "apps", "missing")
    width = max([len("domain"), len("total"), *(len(d) for d in counts)])
    lines = [f"{'domain':{width}}  " + "  ".join(f"{heads[k]:>8}" for k in columns) + "     total"]
    total: Counter[Klass] = Counter()
    for domain in sorted(counts):
        row = counts[domain]
        total.update(row)
        cells = "  ".join(f"{row[k]:>8}" for k in columns)
        lines.append(f"{domain:{width}}  {cells}  {sum(row.values()):>8}")
    cells = "  ".join(f"{total[k]:>8}" for k in columns)
    lines.append(f"{'total':{width}}  {cells}  {sum(total.values()):>8}")
    legend = "; ".join(f"{heads[k]}: {CLASSES[k]}" for k in columns)
    return "\n".join([*lines, "", legend])
