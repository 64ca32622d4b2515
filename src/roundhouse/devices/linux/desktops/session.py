"""The environment of the processes on a desktop: its display and buses, accessibility
switched on for every toolkit, and on a virtual desktop its own settings and renderer."""

from __future__ import annotations

import os
from collections.abc import Mapping

from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.devices.linux.display.backends import BACKENDS

# What a process we start carries of the session it was started in, and a new desktop's
# own processes must not: its displays, buses and desktop tag, and each backend's own marks
# (SWAYSOCK, LABWC_PID: a session of that kind sets them, and a process that carried one
# into another session would be taken for that kind's).
SESSION_VARIABLES = tuple(
    dict.fromkeys(
        (
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "DBUS_SESSION_BUS_ADDRESS",
            "DBUS_SYSTEM_BUS_ADDRESS",
            "XDG_SESSION_TYPE",
            "XDG_CURRENT_DESKTOP",
            "XDG_RUNTIME_DIR",
            TAG_ENV,
            *(mark for backend in BACKENDS for mark in backend.marks),
        )
    )
)


def without_session(environ: Mapping[str, str]) -> dict[str, str]:
    """Our environment without the session we run in: what a new desktop's own processes
    start from."""
    return {key: value for key, value in environ.items() if key not in SESSION_VARIABLES}


def software_rendering(env: dict[str, str]) -> None:
    """Have GTK 4 draw on the CPU (a renderer the caller set is kept). A virtual desktop has
    no GPU: GTK 4 would draw with OpenGL on llvmpipe, and under load its main thread spent
    its time presenting the frames of an animation (Files' "Loading…" spinner) and never
    ran the callbacks that end the load. Nautilus 43 beside two busy CPUs stayed "Loading…"
    in 4 of 14 starts, its main thread inside swrast_dri each time; with GTK 4's cairo
    renderer, in 0 of 8."""
    env.setdefault("GSK_RENDERER", "cairo")


def x11_env(
    display: str,
    bus_address: str | None,
    base: Mapping[str, str] | None = None,
    runtime_dir: str | None = None,
    tag: str | None = None,
) -> dict[str, str]:
    """The environment for processes on an X11 desktop, accessibility switched on.

    A virtual desktop (`runtime_dir` given) has its own XDG_RUNTIME_DIR: the AT-SPI bus
    launcher puts its socket there, so desktops (and the user's session) never share or
    delete each other's; in-memory settings (no dconf-service, no dconf warnings); and GTK 4
    drawing on the CPU (software_rendering). On the user's own desktop, apps keep the
    user's settings and renderer. A virtual desktop's `tag` marks every process started
    with this environment as the desktop's, to end when it stops.
    """
    env = dict(os.environ if base is None else base)
    env["DISPLAY"] = display
    if bus_address is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus_address
    if runtime_dir is not None:
        env["XDG_RUNTIME_DIR"] = runtime_dir
        env["GSETTINGS_BACKEND"] = "memory"
        software_rendering(env)
        # Set or cleared: a process that started us with another desktop's tag (say, a
        # terminal on that desktop) must not pass it on to the apps of this one.
        env.pop(TAG_ENV, None)
        if tag is not None:
            env[TAG_ENV] = tag
    # On the current display a tag stays: it came with DISPLAY from whoever started us on
    # that virtual desktop (batch runs each task so), and what we launch there is its too.
    # A Wayland session around us must not pull toolkits away from this X display.
    for name in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "NO_AT_BRIDGE", "GTK_A11Y", "AT_SPI_BUS"):
        env.pop(name, None)
    env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] = "1"  # Qt 6 ignores QT_ACCESSIBILITY alone
    env["QT_ACCESSIBILITY"] = "1"
    # Firefox builds its tree at start with this; without it the web content appears only
    # after a screen reader has asked once, and the first look sees an empty page.
    env["GNOME_ACCESSIBILITY"] = "1"
    return env


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
    (software_rendering), and XDG_SESSION_TYPE and XDG_CURRENT_DESKTOP say what the
    session is. On a person's own session these stay as the session set them.
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
    # (desktops/apps.py adds it).
    env["QT_QPA_PLATFORM"] = "wayland;xcb"
    env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] = "1"
    env["QT_ACCESSIBILITY"] = "1"
    env["GNOME_ACCESSIBILITY"] = "1"
    env["MOZ_ENABLE_WAYLAND"] = "1"
    return env


def runtime_dir_of(env: Mapping[str, str]) -> str:
    """The session's runtime folder (where its sockets are)."""
    return env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"


def bus_path(runtime_dir: str) -> str:
    """The address of a virtual desktop's session bus, in its runtime folder."""
    return f"unix:path={os.path.join(runtime_dir, 'bus')}"
