"""Which display server a desktop has, opened: X11, or a Wayland compositor's family.

A Wayland session is known by its environment (XDG_SESSION_TYPE, WAYLAND_DISPLAY); its
family by XDG_CURRENT_DESKTOP, else by what the compositor offers: wlroots' virtual
input protocols, KWin's fake input, or Mutter's remote desktop on the session bus.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.session import WaylandFamily, family_of
from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable
from roundhouse.devices.linux.display.gnome.server import open_gnome
from roundhouse.devices.linux.display.kde.server import open_kde
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError
from roundhouse.devices.linux.display.wlroots.server import open_wlroots
from roundhouse.devices.linux.display.x11.server import open_x11

FAMILIES = "sway and the other wlroots compositors, GNOME (Mutter) and KDE Plasma (KWin)"


def open_display(desktop: Desktop) -> DisplayServer:
    """The display server of `desktop`, connected."""
    if not desktop.wayland:
        return open_x11(desktop.display)
    env = desktop.env
    family = wayland_family(env)
    try:
        if family == "wlroots":
            return open_wlroots(env)
        if family == "gnome":
            return open_gnome(env)
        return open_kde(env)
    except DisplayUnavailable:
        raise
    except (WaylandError, DBusCallError, OSError, RuntimeError) as error:
        raise DisplayUnavailable(f"cannot drive this {family} session: {error}") from None


def wayland_family(env: Mapping[str, str]) -> WaylandFamily:
    """The compositor family of a Wayland session: XDG_CURRENT_DESKTOP, else the
    interfaces the compositor offers. DisplayUnavailable for one we do not drive."""
    family = family_of(env)
    if family is not None:
        return family
    try:
        with Connection.open(env) as wayland:
            offered = {found.interface for found in wayland.registry().values()}
    except WaylandError as error:
        raise DisplayUnavailable(f"the Wayland session is not usable: {error}") from None
    return family_from_globals(offered, env)


def family_from_globals(offered: Set[str], env: Mapping[str, str]) -> WaylandFamily:
    """The family whose interfaces a compositor offers (pure)."""
    if "zwlr_virtual_pointer_manager_v1" in offered:
        return "wlroots"
    if "org_kde_kwin_fake_input" in offered or "org_kde_plasma_shell" in offered:
        return "kde"
    if "gtk_shell1" in offered:
        return "gnome"
    desktop = env.get("XDG_CURRENT_DESKTOP") or "not set"
    raise DisplayUnavailable(
        f"this Wayland compositor is not one roundhouse drives (XDG_CURRENT_DESKTOP: "
        f"{desktop}; it offers neither wlroots' virtual input, KWin's fake input nor "
        f"Mutter's shell): roundhouse drives {FAMILIES}. Set XDG_CURRENT_DESKTOP if yours "
        "is one of them, or run an X11 session."
    )


def list_windows(desktop: Desktop) -> list[WindowInfo]:
    """One-off listing (connects and disconnects); keep a DisplayServer for more."""
    with open_display(desktop) as display:
        return display.windows.list_windows()
