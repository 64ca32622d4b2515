"""Chrome's metrics: over what getters_chrome.py reads of Chrome's profile."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.registry import Registry

METRICS: Registry[Callable[..., float]] = Registry()


@METRICS.add
def is_expected_bookmarks(bookmarks: Any, rule: dict[str, Any]) -> float:
    """The bookmark bar holds exactly the folders (or sites) named; or its 'Liked Authors'
    folder holds one of each author's pages and nothing else."""
    if not bookmarks:
        return 0.0
    bar = bookmarks["bookmark_bar"]["children"]
    kind = rule["type"]
    if kind == "bookmark_bar_folders_names":
        folders = {b["name"] for b in bar if b["type"] == "folder"}
        return 1.0 if folders == set(rule["names"]) else 0.0
    if kind == "bookmark_bar_websites_urls":
        sites = {b["url"] for b in bar if b["type"] == "url"}
        return 1.0 if sites == set(rule["urls"]) else 0.0
    if kind == "liked_authors_websites_urls":
        folder = next(
            (b for b in bar if b["type"] == "folder" and b["name"] == "Liked Authors"), None
        )
        if folder is None:
            return 0.0
        liked = {b["url"] for b in folder["children"] if b["type"] == "url"}
        choices = [[url] if isinstance(url, str) else url for url in rule["urls"]]
        return 1.0 if any(set(pick) == liked for pick in itertools.product(*choices)) else 0.0
    raise TypeError(f"{kind} not support yet!")


@METRICS.add
def check_enabled_experiments(enabled_experiments: Any, rule: dict[str, Any]) -> float:
    """The flags enabled in chrome://flags, in order, are the ones named."""
    names = [experiment.split("@")[0] for experiment in enabled_experiments]
    if rule["type"] == "names":
        return 1.0 if names == rule["names"] else 0.0
    raise TypeError(f"{rule['type']} not support yet!")


@METRICS.add
def check_font_size(font_size: Any, rule: dict[str, Any]) -> float:
    """The default font size is the value, or strictly between min and max."""
    size = font_size["default_font_size"]
    if rule["type"] == "value":
        return 1.0 if size == rule["value"] else 0.0
    if rule["type"] == "range":
        return 1.0 if rule["min"] < size < rule["max"] else 0.0
    raise TypeError(f"{rule['type']} not support yet!")
