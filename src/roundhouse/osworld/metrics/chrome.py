"""Chrome's metrics: over what getters_chrome.py reads of Chrome's profile, its tabs and
its extensions."""

from __future__ import annotations

import itertools
import re
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


# ---------------------------------------------------------------- tabs and extensions


def _extractor() -> Any:
    """tldextract from its bundled suffix list: it fetches none (no network here; OSWorld's
    falls back to the same list when its fetch fails)."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def same_site_url(one: Any, two: Any, full: bool = True) -> bool:
    """OSWorld's URL comparison: scheme (http when none), the registered domain without its
    suffix and a lone "www", the path without a lone "/", and (when `full`) the rest."""
    from urllib.parse import ParseResult, urlparse, urlunparse

    if one is None or two is None:
        return bool(one == two)

    def normal(url: str) -> str:
        if not re.match(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://", url):
            url = f"http://{url}"
        parts = urlparse(url)
        found = _extractor()(parts.netloc.lower())
        sub = "" if found.subdomain == "www" else found.subdomain
        place = f"{sub}.{found.domain}" if sub else found.domain
        return urlunparse(ParseResult(
            scheme=parts.scheme.lower(), netloc=place, path=parts.path if parts.path != "/" else "",
            params=parts.params if full else "", query=parts.query if full else "",
            fragment=parts.fragment if full else "",
        ))  # fmt: skip

    return normal(one) == normal(two)


@METRICS.add
def is_expected_tabs(open_tabs: Any, rule: dict[str, Any]) -> float:
    """The open tabs' URLs are the expected ones (as many, each matching one)."""
    if not open_tabs or rule["type"] != "url":
        return 0.0
    wanted, have = rule["urls"], [tab["url"] for tab in open_tabs]
    if len(wanted) != len(have):
        return 0.0
    return float(all(any(same_site_url(w, h) for h in have) for w in wanted))


@METRICS.add
def is_expected_url_pattern_match(result: Any, rules: dict[str, Any]) -> float:
    """Every pattern is found (re.search) in the URL (a string, or a tab's "url")."""
    if not result:
        return 0.0
    if isinstance(result, str):
        url = result
    elif isinstance(result, dict) and "url" in result:
        url = result["url"]
    else:
        return 0.0
    return float(all(re.search(pattern, url) for pattern in rules["expected"]))


@METRICS.add
def is_expected_active_tab_approximate(active: Any, rule: dict[str, Any]) -> float:
    """The active tab's URL is the expected one, queries aside."""
    from urllib.parse import urlparse, urlunparse

    if not active or rule["type"] != "url":
        return 0.0
    url = active.get("url") if isinstance(active, dict) else active

    def bare(text: Any) -> str:
        return str(urlunparse(urlparse(text)._replace(query="")))

    return 1.0 if bare(rule["url"]) == bare(url) else 0.0


@METRICS.add
def is_expected_installed_extensions(installed: Any, expected: dict[str, Any]) -> float:
    if not installed:
        return 0.0
    return float(set(expected["expected"]).issubset(set(installed)))
