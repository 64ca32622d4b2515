"""Our Chrome getters read what OSWorld's own read: both ask the same profile on a roundhouse
desktop, theirs through `roundhouse serve --osworld` (their controller fetches the files),
ours from the desktop's home."""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path
from typing import Any

import httpx

from roundhouse.osworld.getters_chrome import GETTERS
from tests.osworld.conftest import HERE, run_theirs
from tests.osworld.test_server import Served, start_server, stop_server

PROFILE = "/home/user/.config/google-chrome"
PREFS, STATE, MARKS = (
    f"{PROFILE}/Default/Preferences",
    f"{PROFILE}/Local State",
    (f"{PROFILE}/Default/Bookmarks"),
)
CASES: list[dict[str, str]] = [
    {},  # no profile at all: each getter's fallback
    {PREFS: json.dumps({"enable_do_not_track": True, "profile": {"name": "Thomas"}})},
    {PREFS: json.dumps({"safebrowsing": {"enhanced": True}, "profile": {
        "default_content_setting_values": {}}})},  # fmt: skip
    {PREFS: json.dumps({"default_search_provider_data": {"template_url_data": {
        "short_name": "Bing"}}, "webkit": {"webprefs": {"default_font_size": 20}}})},  # fmt: skip
    {PREFS: json.dumps({"safebrowsing": {"enabled": False}, "enable_do_not_track": False}),
     STATE: json.dumps({"browser": {"enabled_labs_experiments": ["chrome-refresh-2023@2"]}})},
    {MARKS: json.dumps({"roots": {"bookmark_bar": {"children": [
        {"type": "folder", "name": "Favorites", "children": []}]}}})},  # fmt: skip
    {PREFS: "{not json", STATE: "[]", MARKS: ""},
    {PREFS: json.dumps({"profile": {}}), STATE: json.dumps({"browser": {}})},
    {PREFS: json.dumps({"extensions": {"settings": {
        "abc": {"path": "/home/user/ext/one", "manifest": {"name": "One"}},
        "def": {"path": "def/1.0_0", "manifest": {"name": "Two"}}}}})},  # fmt: skip
    {PREFS: json.dumps({"extensions": {"settings": {"abc": {"manifest": {"name": "One"}}}}})},
    {PREFS: json.dumps({"extensions": {"settings": {"abc": {"path": "p"}}}})},
    {PREFS: json.dumps({"extensions": {"settings": {}}})},
    {PREFS: json.dumps({"extensions": {}})},
]  # fmt: skip
# The profile's getters (the tabs' and the address bar's read a running Chromium and the
# tree: test_getters_agree_apps.py and test_apps.py).
PROFILE_GETTERS = sorted(set(GETTERS) - {"open_tabs_info", "active_url_from_accessTree"})


def test_chrome_getters_agree_with_osworlds(osworld_python: Path, tmp_path: Path) -> None:
    served: Served = start_server()
    try:
        home = Path(httpx.get(served.url + "/roundhouse/info", timeout=10).json()["home"])
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        for files in CASES:
            job = {"server": served.url, "cache": str(tmp_path),
                   "cases": [{"files": files, "getters": PROFILE_GETTERS}]}  # fmt: skip
            (seen,) = run_theirs(osworld_python, HERE / "drive_getters.py", job, tmp_path)
            theirs.append(seen)
            env = types.SimpleNamespace(home=home)
            ours.append({name: _ours(env, name) for name in PROFILE_GETTERS})
            for path in files:  # the next case starts from no profile
                (home / path.removeprefix("/home/user/")).unlink()
    finally:
        stop_server(served)
    for number, (mine, osworlds) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == osworlds, f"case {number}: {CASES[number]}"


def _ours(env: Any, name: str) -> dict[str, Any]:
    try:
        return {"value": asyncio.run(GETTERS[name](env, {}))}
    except Exception as error:  # noqa: BLE001 - what raised is the answer
        return {"raised": type(error).__name__}
