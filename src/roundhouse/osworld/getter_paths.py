"""Where a getter's paths lie on this desktop: OSWorld's paths on the VM as the task's home
holds them, and the plain names a getter may give files in the task's cache."""

from __future__ import annotations

import os
from pathlib import Path

from roundhouse.osworld.env import OsworldEnv
from roundhouse.osworld.steps import StepError


def local_path(env: OsworldEnv, path: str) -> Path:
    """OSWorld's path on this desktop: its /home/user and ~ are the task's home; a relative
    path is relative to the home (where OSWorld's server runs its commands)."""
    text = os.path.expandvars(env.places.local(path)) if "$" in path else env.places.local(path)
    if text.startswith("~/") or text == "~":
        text = str(env.home) + text[1:]
    return Path(text) if text.startswith("/") else env.home / text


def cache_name(name: str) -> str:
    """`name`, where it names a file in the task's cache and nothing beside it."""
    if not name or "/" in name or name in (".", ".."):
        raise StepError(f"{name!r} is not a plain file name in the task's cache")
    return name
