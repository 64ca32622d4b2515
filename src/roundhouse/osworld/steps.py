"""OSWorld's config and postconfig steps, carried out on a roundhouse desktop.

What each step does, in OSWorld's words and ours:
- launch {command, shell}: start a program and leave it running. `google-chrome` runs
  Chromium with DevTools on the environment's own port (env.py); OSWorld's `socat` that
  forwards Chrome's port to 9222 is not needed and not run; `pkill NAME` ends the processes
  of this desktop only (never another task's), Chrome's name standing for Chromium's too.
- execute / command {command, shell, stdout, stderr, until}: run a command to its end, the
  placeholders filled; `stdout`/`stderr` name files in the task's cache that keep the output
  (a `cache_file` getter reads them); `until` runs it again until the output says so
  (bounded here: UNTIL_TIMEOUT).
- open {path}: open a file in its application (LibreOffice for documents, else the desktop's
  default) and wait for its window, which is then activated.
- activate_window / close_window {window_name, strict, by_class}: as wmctrl -a / -c: the
  first window whose title holds the name (case ignored), or whose title is the name
  (`strict`), or whose class holds it (`by_class`). A window not there (after waiting
  WINDOW_WAIT) is passed over, as wmctrl's failure is in OSWorld.
- download {files: [{url, path}]}: copy each file from the file cache to its path, which
  must lie in the task's home or /tmp (OSWorld's files all do).
- sleep {seconds}; chrome_open_tabs {urls_to_open}; chrome_close_tabs {urls_to_close}
  (through DevTools' HTTP interface).

A step OSWorld has but this module does not (login, googledrive, update_browse_history)
makes the task "not runnable here"; check.py says so before anything runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from roundhouse.core.polling import until_async, within_async
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.reaper import (
    TAG_ENV,
    Marks,
    belonging,
    protected,
    terminate,
    x_client_pids,
)
from roundhouse.devices.linux.system import procfs
from roundhouse.osworld.env import CHROME_NAMES, OsworldEnv
from roundhouse.osworld.files import BadURL
from roundhouse.osworld.registry import Registry
from roundhouse.osworld.tasks import Step

log = logging.getLogger(__name__)

WINDOW_WAIT = 5.0  # seconds a window named by activate/close_window may take to appear
OPEN_TIMEOUT = 60.0  # seconds an opened file may take to show its window
UNTIL_TIMEOUT = 60.0
DEVTOOLS_WAIT = 30.0
KILL_GRACE = 3.0
OFFICE_SUFFIXES = frozenset(
    ".xlsx .xls .ods .csv .docx .doc .odt .rtf .pptx .ppt .odp .odg".split()
)


class StepError(RuntimeError):
    """A step that could not be carried out; the message says which and why."""


class NotRunnable(StepError):
    """The step needs what this machine or roundhouse lacks (a file, an application)."""


Runner = Callable[[OsworldEnv, dict[str, Any]], Awaitable[None]]
# Each runner by its step's `type` in a task file (OSWorld's setup controller's names).
STEPS: Registry[Runner] = Registry()


async def run_steps(env: OsworldEnv, steps: list[Step]) -> None:
    """Carry out the steps in order; the first that fails stops them (StepError)."""
    for index, step in enumerate(steps, start=1):
        runner = STEPS.get(step.type)
        if runner is None:
            raise NotRunnable(f"step {index} is {step.type!r}, which roundhouse does not carry out")
        try:
            await runner(env, step.parameters)
        except (KeyError, TypeError, ValueError) as error:
            raise StepError(f"step {index} ({step.type}): bad parameters: {error}") from None
        except OSError as error:
            raise StepError(f"step {index} ({step.type}): {error}") from None
        except StepError as error:
            raise type(error)(f"step {index} ({step.type}): {error}") from None


# ---------------------------------------------------------------- programs


@STEPS.add
async def launch(env: OsworldEnv, p: dict[str, Any]) -> None:
    argv = _argv(env, p["command"], bool(p.get("shell", False)), split_spaces=True)
    if _is_port_forward(argv):
        return  # Chromium listens on the environment's own DevTools port already
    killing = kill_command(argv)
    if killing is not None:
        await pkill(env, killing)
        return
    _require(argv)
    env.spawn(argv)


@STEPS.add
@STEPS.named("command")
async def execute(env: OsworldEnv, p: dict[str, Any]) -> None:
    command = p["command"]
    command = env.places.fill(command) if isinstance(command, str) else [
        env.places.fill(str(arg)) for arg in command
    ]  # fmt: skip
    argv = _argv(env, command, bool(p.get("shell", False)))
    killing = kill_command(argv)
    if killing is not None:
        await pkill(env, killing)
        return
    until: dict[str, Any] = p.get("until") or {}

    async def reached() -> bool:
        try:
            result = await env.run(argv)
        except FileNotFoundError:
            raise NotRunnable(f"{argv[0]!r} is not installed") from None
        except TimeoutError as error:
            raise StepError(str(error)) from None
        for key, text in (("stdout", result.output), ("stderr", result.error)):
            if p.get(key):
                (env.cache / _plain_name(str(p[key]))).write_text(text, encoding="utf-8")
        return not until or _until_met(until, result.returncode, result.output, result.error)

    what = f"{shlex.join(argv)[:120]} did not reach {until}"
    await until_async(reached, UNTIL_TIMEOUT, what, every=0.3, error=StepError)


def _until_met(until: dict[str, Any], code: int, out: str, err: str) -> bool:
    return (
        ("returncode" in until and code == until["returncode"])
        or ("stdout" in until and str(until["stdout"]) in out)
        or ("stderr" in until and str(until["stderr"]) in err)
    )


@STEPS.add
async def sleep(env: OsworldEnv, p: dict[str, Any]) -> None:
    seconds = float(p["seconds"])
    if not 0 <= seconds <= 600:
        raise ValueError(f"sleep of {seconds} s")
    await asyncio.sleep(seconds)


def _argv(env: OsworldEnv, command: Any, shell: bool, *, split_spaces: bool = False) -> list[str]:
    if not command:
        raise StepError("an empty command")
    if isinstance(command, str) and not shell and split_spaces:
        command = command.split()  # OSWorld's launch splits a string on spaces
    if isinstance(command, list):
        command = [str(arg) for arg in command]
    argv = env.command(command, shell)
    if shell and isinstance(command, list) and len(command) == 1:
        argv = env.command(command[0], True)
    return argv


SHELL_C = frozenset({"sh", "bash", "dash"})


def kill_command(argv: list[str]) -> list[str] | None:
    """pkill's (or killall's) arguments when the command is one of them, alone or as a
    shell's whole `-c` command: run by `pkill` here, on this desktop's processes only."""
    if len(argv) == 3 and Path(argv[0]).name in SHELL_C and argv[1] == "-c":
        if any(ch in argv[2] for ch in ";&|`$<>\n"):
            return None
        argv = shlex.split(argv[2])
    if not argv or Path(argv[0]).name not in ("pkill", "killall"):
        return None
    if Path(argv[0]).name == "killall":  # killall names whole process names
        return [f"^{re.escape(name)}$" if not name.startswith("-") else name for name in argv[1:]]
    return argv[1:]


def _require(argv: list[str]) -> None:
    if argv[0] != "/bin/sh" and shutil.which(argv[0]) is None:
        raise NotRunnable(f"{argv[0]!r} is not installed")


def _is_port_forward(argv: list[str]) -> bool:
    """socat tcp-listen:9222,fork tcp:localhost:1337: OSWorld's way to reach Chrome."""
    text = " ".join(argv)
    return Path(argv[0]).name == "socat" or text.startswith("/bin/sh -c socat ")


async def pkill(env: OsworldEnv, args: list[str]) -> None:
    """End this desktop's processes whose name matches (pkill's pattern, or with -f the whole
    command line); Chrome's names match Chromium. Another desktop's are never touched.
    Waits until they are gone (SIGTERM, then SIGKILL)."""
    full = "-f" in args
    names = [a for a in args if not a.startswith("-")]
    if not names:
        raise StepError("pkill without a pattern")
    pattern = re.compile(names[0])
    plain = names[0].strip("^$").replace("\\", "")
    chrome = plain in CHROME_NAMES or any(pattern.search(name) for name in CHROME_NAMES)
    await asyncio.to_thread(_end_matching, env, pattern, full, chrome)


def _end_matching(env: OsworldEnv, pattern: re.Pattern[str], full: bool, chrome: bool) -> None:
    table = procfs.snapshot(TAG_ENV)
    # A Wayland session has no X server to name its clients: its processes carry the tag.
    clients = frozenset() if env.desktop.wayland else x_client_pids(env.desktop.display)
    marks = Marks(tag=env.desktop.env.get(TAG_ENV), x_clients=clients)
    ours = belonging(table, marks, protected(table, os.getpid()))
    victims = []
    for pid in ours:
        try:
            argv = (procfs.PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone
        line = b" ".join(argv).decode(errors="replace")
        # The kernel keeps 15 characters of a name: gnome-terminal-server is
        # "gnome-terminal-"; the program's own name is asked too.
        names = [line] if full else [table[pid].name, Path(argv[0].decode(errors="replace")).name]
        if any(pattern.search(n) or (chrome and "chrom" in n) for n in names):
            victims.append(table[pid].record)
    terminate(victims, grace=KILL_GRACE)


# ---------------------------------------------------------------- files


@STEPS.add
async def download(env: OsworldEnv, p: dict[str, Any]) -> None:
    for entry in p["files"]:
        url, path = str(entry["url"]), str(entry["path"])
        try:
            cached = env.files.find(url) if env.files is not None else None
        except BadURL as error:
            raise StepError(str(error)) from None
        if cached is None:
            where = f"in {env.files.root}" if env.files else "(no --files folder given)"
            raise NotRunnable(f"the file {url} is not in the file cache {where}")
        target = destination(env, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(shutil.copyfile, cached, target)


def destination(env: OsworldEnv, path: str) -> Path:
    """Where a file for OSWorld's `path` goes: in the task's home (a relative path is
    relative to it, and stays in it) or /tmp; anywhere else is refused."""
    local = env.places.local(path)
    local = str(env.home) + local[1:] if local.startswith("~/") else local
    home = env.home.resolve()
    allowed = [home, Path("/tmp").resolve()] if local.startswith("/") else [home]
    target = (env.home / local).resolve()
    for folder in allowed:
        if target == folder or folder in target.parents:
            return target
    raise StepError(f"{path!r} lies outside the task's home and /tmp: refused")


@STEPS.named("open")
async def open_path(env: OsworldEnv, p: dict[str, Any]) -> None:
    path = env.places.local(str(p["path"]))
    local = Path(path if path.startswith("/") else env.home / path)
    if local.exists():
        suffix = local.suffix.lower()
        opener = "libreoffice" if suffix in OFFICE_SUFFIXES else "xdg-open"
        argv = [opener, str(local)]
        names = (local.name, local.stem)
    elif shutil.which(path):
        argv, names = [path], (path, path)
    else:
        raise StepError(f"no file or program {p['path']!r} to open")
    _require(argv)
    env.spawn(env.app_command(argv))
    window = await _wait_window(env, lambda w: any(n in w.title for n in names), OPEN_TIMEOUT)
    if window is None:
        raise StepError(f"no window for {local.name} within {OPEN_TIMEOUT:g} s")
    await env.display.windows.activate(window.xid)


# ---------------------------------------------------------------- windows


def window_matcher(name: str, strict: bool, by_class: bool) -> Callable[[WindowInfo], bool]:
    """wmctrl's choice: -a NAME (title holds it, case ignored), -F (title is it), -x (class)."""

    def matches(window: WindowInfo) -> bool:
        subject = window.application if by_class else window.title
        return subject == name if strict else name.lower() in subject.lower()

    return matches


@STEPS.add
async def activate_window(env: OsworldEnv, p: dict[str, Any]) -> None:
    matches = window_matcher(str(p["window_name"]), bool(p.get("strict")), bool(p.get("by_class")))
    window = await _wait_window(env, matches, WINDOW_WAIT)
    if window is None:
        log.info("activate_window: no window %r (passed over, as wmctrl's miss is)", p)
        return
    await env.display.windows.activate(window.xid)


@STEPS.add
async def close_window(env: OsworldEnv, p: dict[str, Any]) -> None:
    matches = window_matcher(str(p["window_name"]), bool(p.get("strict")), bool(p.get("by_class")))
    window = next((w for w in env.display.windows.list_windows() if matches(w)), None)
    if window is None:
        log.info("close_window: no window %r (passed over, as wmctrl's miss is)", p)
        return
    await env.display.windows.close_window(window.xid)


async def _wait_window(
    env: OsworldEnv, matches: Callable[[WindowInfo], bool], timeout: float
) -> WindowInfo | None:

    async def found() -> WindowInfo | None:
        windows = await asyncio.to_thread(env.display.windows.list_windows)
        return next((w for w in windows if matches(w)), None)

    return await within_async(found, timeout, every=0.1)


# ---------------------------------------------------------------- Chrome


@STEPS.add
async def chrome_open_tabs(env: OsworldEnv, p: dict[str, Any]) -> None:
    """Open each URL in a tab of its own; the tab the browser started with is closed, as
    OSWorld's (through Playwright) closes it."""
    urls = [str(url) for url in p["urls_to_open"]]
    async with _devtools(env) as http:
        before = await _first_pages(http)
        for url in urls:
            response = await http.put(f"/json/new?{quote(url, safe=':/?&=%#,<>')}")
            response.raise_for_status()
        if urls:
            for target in before:
                await http.get(f"/json/close/{target['id']}")


async def _first_pages(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    """The browser's own first tab(s): DevTools answers before the first tab exists."""

    async def pages() -> list[dict[str, Any]] | None:
        return [t for t in await _targets(http) if t.get("type") == "page"] or None

    return await within_async(pages, DEVTOOLS_WAIT, every=0.1) or []


@STEPS.add
async def chrome_close_tabs(env: OsworldEnv, p: dict[str, Any]) -> None:
    async with _devtools(env) as http:
        for url in [str(url) for url in p["urls_to_close"]]:
            for target in await _targets(http):
                if target.get("type") == "page" and same_url(str(target.get("url")), url):
                    await http.get(f"/json/close/{target['id']}")
                    break


class _devtools:
    """An HTTP client for the environment's Chromium DevTools, once it answers."""

    def __init__(self, env: OsworldEnv) -> None:
        self._client = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{env.devtools_port}", timeout=10.0
        )

    async def __aenter__(self) -> httpx.AsyncClient:
        refused: list[httpx.HTTPError] = []

        async def answers() -> bool:
            try:
                (await self._client.get("/json/version")).raise_for_status()
            except httpx.HTTPError as error:
                refused[:] = [error]
                return False
            return True

        if not await within_async(answers, DEVTOOLS_WAIT, every=0.2):
            await self._client.aclose()
            raise StepError(f"Chromium's DevTools never answered: {refused[0]}")
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()


async def _targets(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    response = await http.get("/json/list")
    response.raise_for_status()
    data = response.json()
    return [t for t in data if isinstance(t, dict)] if isinstance(data, list) else []


def same_url(one: str, other: str) -> bool:
    """Two URLs for the same page: scheme, a leading www. and a trailing / do not count."""

    def norm(url: str) -> str:
        url = re.sub(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "", url.strip()).lower()
        url = url.removeprefix("www.")
        return url.rstrip("/")

    return norm(one) == norm(other)


def _plain_name(name: str) -> str:
    if "/" in name or name in (".", "..") or not name:
        raise StepError(f"{name!r} is not a plain file name in the task's cache")
    return name
