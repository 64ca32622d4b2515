"""What kind of session a desktop is, read from its environment, and the environment
applications get in a Wayland session.

A session is X11 or Wayland (XDG_SESSION_TYPE, else which display variable is set), and
on Wayland one of the compositor families roundhouse drives: "sway" (wlroots), "gnome"
(Mutter) or "kde" (KWin), known by XDG_CURRENT_DESKTOP. A session that does not say is
told apart later by what its compositor offers (display/choose.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

SessionKind = Literal["x11", "sway", "gnome", "kde"]
SESSION_KINDS: tuple[SessionKind, ...] = ("x11", "sway", "gnome", "kde")
WaylandFamily = Literal["wlroots", "gnome", "kde"]

# XDG_CURRENT_DESKTOP (colon-separated, case as desktops write it) -> the family.
_DESKTOPS: dict[str, WaylandFamily] = {
    "gnome": "gnome",
    "gnome-classic": "gnome",
    "ubuntu": "gnome",
    "pop": "gnome",
    "kde": "kde",
    "plasma": "kde",
    "sway": "wlroots",
    "wlroots": "wlroots",
    "hyprland": "wlroots",
    "labwc": "wlroots",
    "river": "wlroots",
    "wayfire": "wlroots",
    "niri": "wlroots",
}
# What a virtual session of each kind says it is, as its own desktop would.
CURRENT_DESKTOP: dict[str, str] = {"sway": "sway", "gnome": "GNOME", "kde": "KDE"}


def is_wayland(env: Mapping[str, str]) -> bool:
    """Whether the session is Wayland: XDG_SESSION_TYPE says so, or it says nothing and
    WAYLAND_DISPLAY is set."""
    session_type = env.get("XDG_SESSION_TYPE", "").lower()
    if session_type in ("x11", "tty"):
        return False
    return bool(env.get("WAYLAND_DISPLAY")) or session_type == "wayland"


def family_of(env: Mapping[str, str]) -> WaylandFamily | None:
    """The compositor family XDG_CURRENT_DESKTOP names (None: it names none we know)."""
    for name in env.get("XDG_CURRENT_DESKTOP", "").split(":"):
        family = _DESKTOPS.get(name.strip().lower())
        if family is not None:
            return family
    if env.get("SWAYSOCK"):
        return "wlroots"
    return None


def software_rendering(env: dict[str, str]) -> None:
    """Have GTK 4 draw on the CPU (a renderer the caller set is kept). A virtual desktop has
    no GPU: GTK 4 would draw with OpenGL on llvmpipe, and under load its main thread spent
    its time presenting the frames of an animation (Files' "Loading…" spinner) and never
    ran the callbacks that end the load. Nautilus 43 beside two busy CPUs stayed "Loading…"
    in 4 of 14 starts, its main thread inside swrast_dri each time; with GTK 4's cairo
    renderer, in 0 of 8."""
    env.setdefault("GSK_RENDERER", "cairo")


def wayland_env(
    base: Mapping[str, str],
    *,
    wayland_display: str,
    runtime_dir: str,
    bus_address: str | None,
    current_desktop: str | None = None,
    virtual: bool = False,
) -> dict[str, str]:
    """The environment for applications in a Wayland session: its socket, runtime
    folder and session bus, toolkits on Wayland with their accessibility switched on.

    On a virtual session (`virtual`) there is no X server (DISPLAY goes: a stray one would
    put applications on another desktop), settings are in memory, GTK 4 draws on the CPU
    (software_rendering), and XDG_SESSION_TYPE
    and XDG_CURRENT_DESKTOP say what the session is. On a person's own session these stay
    as the session set them.
    """
    env = dict(base)
    env["WAYLAND_DISPLAY"] = wayland_display
    env["XDG_RUNTIME_DIR"] = runtime_dir
    if bus_address is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus_address
    if virtual:
        env.pop("DISPLAY", None)
        env["XDG_SESSION_TYPE"] = "wayland"
        if current_desktop:
            env["XDG_CURRENT_DESKTOP"] = current_desktop
        env["GSETTINGS_BACKEND"] = "memory"
        software_rendering(env)
    for name in ("NO_AT_BRIDGE", "GTK_A11Y", "AT_SPI_BUS", "GDK_BACKEND"):
        env.pop(name, None)
    # Qt 6 would take XWayland where there is one; Chromium and Electron need a switch
    # (Desktop.app_command adds it).
    env["QT_QPA_PLATFORM"] = "wayland;xcb"
    env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] = "1"
    env["QT_ACCESSIBILITY"] = "1"
    env["GNOME_ACCESSIBILITY"] = "1"
    env["MOZ_ENABLE_WAYLAND"] = "1"
    return env


def runtime_dir_of(env: Mapping[str, str]) -> str:
    """The session's runtime folder (where its sockets are)."""
    return env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
