"""Whether an environment names a graphical session: what decides between the GUI agents and
the shell agent (engine/compose.py) and between the current session and a virtual desktop
(desktops/opening.py). Light on purpose: a shell request imports nothing of the desktop."""

from __future__ import annotations

from collections.abc import Mapping


def has_display(env: Mapping[str, str]) -> bool:
    """An X display or a Wayland socket is named (whether it answers is for its backend)."""
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
