"""Chrome's getters: what OSWorld's read of Chrome's profile, read from this desktop's.

Chromium runs here for OSWorld's google-chrome with its profile where OSWorld's getters look
for Chrome's (~/.config/google-chrome, env.py), so these read the same files: Default/
Preferences, Default/Bookmarks and Local State. Each gives what OSWorld's gives, its
fallback included when the file is missing or does not parse. The open tabs come from
Chromium's DevTools, the active tab's URL from the address bar in the accessibility tree
(the application named Google Chrome, as a11y_xml.py names Chromium, as OSWorld's VM has).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from roundhouse.osworld.env import CHROME_PROFILE, OsworldEnv
from roundhouse.osworld.registry import Registry

Getter = Callable[[OsworldEnv, dict[str, Any]], Awaitable[Any]]
GETTERS: Registry[Getter] = Registry()
DEVTOOLS_TIMEOUT = 10.0
DEFAULT_FONTS = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13}


def _profile(env: OsworldEnv, name: str) -> Any:
    """A JSON file of the Chrome profile; raises when it is missing or does not parse."""
    return json.loads(Path(env.home / CHROME_PROFILE / name).read_text(encoding="utf-8"))


def _preferences(env: OsworldEnv) -> Any:
    return _profile(env, "Default/Preferences")


def _read(env: OsworldEnv, read: Callable[[Any], Any], fallback: Any, name: str) -> Any:
    try:
        return read(_profile(env, name))
    except Exception:  # noqa: BLE001 - OSWorld's getters answer their fallback on any error
        return fallback


@GETTERS.add
async def enable_do_not_track(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return _read(env, lambda d: "true" if d.get("enable_do_not_track", {}) else "false",
                 "false", "Default/Preferences")  # fmt: skip


@GETTERS.add
async def enable_safe_browsing(env: OsworldEnv, config: dict[str, Any]) -> Any:
    def read(data: Any) -> str:
        safe = data.get("safebrowsing", {})
        on = bool(safe.get("enhanced", False)) or bool(safe.get("enabled", False))
        return "true" if on else "false"

    return _read(env, read, "false", "Default/Preferences")


@GETTERS.add
async def data_delete_automacally(env: OsworldEnv, config: dict[str, Any]) -> Any:
    def read(data: Any) -> str:
        present = data["profile"].get("default_content_setting_values", None) is not None
        return "true" if present else "false"

    return _read(env, read, "Google", "Default/Preferences")  # (OSWorld's fallback, as is)


@GETTERS.add
async def profile_name(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return _read(env, lambda d: d.get("profile", {}).get("name", None), None, "Default/Preferences")


@GETTERS.add
async def default_search_engine(env: OsworldEnv, config: dict[str, Any]) -> Any:
    def read(data: Any) -> Any:
        provider = data.get("default_search_provider_data", {})
        return provider.get("template_url_data", {}).get("short_name", "Google")

    return _read(env, read, "Google", "Default/Preferences")


@GETTERS.add
async def chrome_font_size(env: OsworldEnv, config: dict[str, Any]) -> Any:
    fallback = {"default_fixed_font_size": 13, "default_font_size": 16}
    return _read(env, lambda d: d.get("webkit", {}).get("webprefs", dict(DEFAULT_FONTS)),
                 fallback, "Default/Preferences")  # fmt: skip


@GETTERS.add
async def enabled_experiments(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return _read(env, lambda d: d.get("browser", {}).get("enabled_labs_experiments", []), [],
                 "Local State")  # fmt: skip


@GETTERS.add
async def bookmarks(env: OsworldEnv, config: dict[str, Any]) -> Any:
    path = env.home / CHROME_PROFILE / "Default" / "Bookmarks"
    if not path.is_file() or not path.read_bytes():
        return []
    return json.loads(path.read_text(encoding="utf-8")).get("roots", {})


def _extensions(env: OsworldEnv, read: Callable[[dict[str, Any]], Any]) -> Any:
    """Each installed extension's value from Preferences' extensions.settings; "Google"
    (OSWorld's fallback, as it is) when the file is missing, does not parse or lacks it."""
    try:
        settings = _preferences(env).get("extensions", {}).get("settings", {})
        return [read(settings[key]) for key in settings]
    except Exception:  # noqa: BLE001 - OSWorld's answers its fallback on any error
        return "Google"


@GETTERS.add
async def find_unpacked_extension_path(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return _extensions(env, lambda extension: extension["path"])


@GETTERS.add
async def find_installed_extension_name(env: OsworldEnv, config: dict[str, Any]) -> Any:
    return _extensions(env, lambda extension: extension["manifest"]["name"])


@GETTERS.add
async def open_tabs_info(env: OsworldEnv, config: dict[str, Any]) -> Any:
    """Each open tab's title and URL, from Chromium's DevTools ([] when it does not answer:
    OSWorld's starts Chrome and asks again; here the task's own Chromium is the one)."""
    try:
        async with httpx.AsyncClient(timeout=DEVTOOLS_TIMEOUT) as http:
            answer = await http.get(f"http://127.0.0.1:{env.devtools_port}/json/list")
            answer.raise_for_status()
            targets = answer.json()
    except (httpx.HTTPError, ValueError):
        return []
    return [{"title": t.get("title", ""), "url": t.get("url", "")} for t in targets
            if isinstance(t, dict) and t.get("type") == "page"]  # fmt: skip


ADDRESS_BAR = "application[name=Google\\ Chrome] entry[name=Address\\ and\\ search\\ bar]"


@GETTERS.add
async def active_url_from_accessTree(env: OsworldEnv, config: dict[str, Any]) -> Any:  # noqa: N802
    """The address bar's text in the accessibility tree, after `goto_prefix` (https://)."""
    return url_in_tree(await env.accessibility_xml(), config.get("goto_prefix", "https://"))


def url_in_tree(tree: str, prefix: str) -> str | None:
    import lxml.etree
    from lxml.cssselect import CSSSelector

    from roundhouse.osworld.namespaces import NS

    try:
        root = lxml.etree.fromstring(tree.encode())
    except (ValueError, lxml.etree.XMLSyntaxError):
        return None
    found = CSSSelector(ADDRESS_BAR, namespaces=NS)(root)
    if not found or not found[-1].text:
        return None
    return f"{prefix}{found[0].text}"
