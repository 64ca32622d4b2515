"""OSWorld's getters: what an evaluator reads of the system, in the shapes its metrics take.

Each getter is called with the environment and its own keys, as OSWorld's `get_<type>(env,
config)` is, and returns what OSWorld's returns:
- vm_file {path, dest, multi, gives}: the file copied into the task's cache; its local path
  (None for a file that is not there; a list when `gives` names several);
- cloud_file {path (a URL), dest, multi, gives}: the dataset's file, from the file cache;
- cache_file {path}: a file in the task's cache (written by an execute step's stdout);
- vm_command_line / vm_command_error {command, shell}: a command's stdout / stderr;
- vm_terminal_output: the focused terminal's text in GNOME Terminal's active window;
- list_directory {path}: the folder as a tree {type, name, children};
- rule {rules}: its rules as they are written;
- accessibility_tree: the desktop's tree in OSWorld's XML;
- vm_screen_size, vm_window_size {app_class_name}.
Chrome's getters are in getters_chrome.py, the applications' (GIMP, VLC, slides, the
wallpaper) in getters_apps.py. A getter OSWorld has and roundhouse does not
makes the task "not runnable here" (check.py), never a silent 0.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from roundhouse.osworld.a11y_xml import terminal_text
from roundhouse.osworld.env import OsworldEnv
from roundhouse.osworld.files import BadURL
from roundhouse.osworld.getter_paths import cache_name, local_path
from roundhouse.osworld.getters_apps import GETTERS as APP_GETTERS
from roundhouse.osworld.getters_chrome import GETTERS as CHROME_GETTERS
from roundhouse.osworld.registry import Registry
from roundhouse.osworld.steps import NotRunnable, StepError

Getter = Callable[[OsworldEnv, dict[str, Any]], Awaitable[Any]]
# Each getter by its `type` in a task's evaluator; Chrome's come from getters_chrome.py.
GETTERS: Registry[Getter] = Registry()
GETTERS.include(CHROME_GETTERS)
GETTERS.include(APP_GETTERS)


def _pairs(config: dict[str, Any]) -> tuple[list[str], list[str], set[int]]:
    if config.get("multi", False):
        paths, dests = list(config["path"]), list(config["dest"])
    else:
        paths, dests = [config["path"]], [config["dest"]]
    return [str(p) for p in paths], [str(d) for d in dests], set(config.get("gives", [0]))


def _given(found: list[str | None]) -> Any:
    return found[0] if len(found) == 1 else found


@GETTERS.add
async def vm_file(env: OsworldEnv, config: dict[str, Any]) -> Any:
    paths, dests, gives = _pairs(config)
    if not config.get("multi", False) and config.get("time_suffix", False):
        stamp = datetime.now().strftime(config.get("time_format", "%Y%m%d_%H%M%S"))
        stem, suffix = os.path.splitext(dests[0])
        dests = [f"{stem}_{stamp}{suffix}"]
    found: list[str | None] = []
    for index, (path, dest) in enumerate(zip(paths, dests, strict=False)):
        source = local_path(env, path)
        target = env.cache / cache_name(dest)
        ok = source.is_file()
        if ok:
            shutil.copyfile(source, target)
        if index in gives:
            found.append(str(target) if ok else None)
    return _given(found)


@GETTERS.add
async def cloud_file(env: OsworldEnv, config: dict[str, Any]) -> Any:
    paths, dests, gives = _pairs(config)
    found: list[str | None] = []
    for index, (url, dest) in enumerate(zip(paths, dests, strict=False)):
        target = env.cache / cache_name(dest)
        if not target.exists():
            try:
                cached = env.files.find(url) if env.files is not None else None
            except BadURL as error:
                raise StepError(str(error)) from None
            if cached is None:
                raise NotRunnable(f"the file {url} is not in the file cache")
            shutil.copyfile(cached, target)
        if index in gives:
            found.append(str(target))
    return _given(found)


@GETTERS.add
async def cache_file(env: OsworldEnv, config: dict[str, Any]) -> Any:
    path = env.cache / str(config["path"])
    if not path.exists():
        raise FileNotFoundError(f"{config['path']} is not in the task's cache")
    return str(path)


@GETTERS.add
async def vm_command_line(env: OsworldEnv, config: dict[str, Any]) -> Any:
    output = await _command(env, config)
    return None if output is None else output.output


@GETTERS.add
async def vm_command_error(env: OsworldEnv, config: dict[str, Any]) -> Any:
    output = await _command(env, config)
    return None if output is None else output.error


async def _command(env: OsworldEnv, config: dict[str, Any]) -> Any:
    """As OSWorld's /execute: None where its server answers an error (a program that is not
    there, a command over its time)."""
    try:
        return await env.run(env.command(config["command"], bool(config.get("shell", False))))
    except (OSError, TimeoutError, ValueError):
        return None


@GETTERS.add
async def vm_terminal_output(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return terminal_text(await env.accessibility_xml())


@GETTERS.add
async def accessibility_tree(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return await env.accessibility_xml()


@GETTERS.add
async def rule(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return config["rules"]


@GETTERS.add
async def list_directory(env: OsworldEnv, config: dict[str, Any]) -> Any:
    start = local_path(env, str(config["path"]))
    if not start.is_dir():
        return None  # OSWorld's server answers 400, and its controller gives None
    return directory_tree(start, env.places.osworld(str(start)))


def directory_tree(folder: Path, shown: str | None = None) -> dict[str, Any]:
    """A folder as OSWorld's /list_directory gives it: {type, name, children}, in the order
    the folder lists its entries; {error} for one that cannot be read. `shown` is the path
    the caller named it by (the task's home is "user", as OSWorld's is)."""
    try:
        entries = os.listdir(folder)
    except OSError as error:
        return {"error": str(error)}
    children: list[dict[str, Any]] = []
    for entry in entries:
        path = folder / entry
        if path.is_dir():
            children.append(directory_tree(path))
        else:
            children.append({"type": "file", "name": entry})
    name = os.path.basename(shown) if shown is not None else folder.name
    return {"type": "directory", "name": name, "children": children}


@GETTERS.add
async def vm_screen_size(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return {"width": env.desktop.width, "height": env.desktop.height}


@GETTERS.add
async def vm_window_size(env: OsworldEnv, config: dict[str, Any]) -> Any:
    wanted = str(config["app_class_name"]).lower()
    for window in env.display.windows.list_windows():
        if window.application.lower() == wanted:
            return {"width": window.rect.width, "height": window.rect.height}
    return None
