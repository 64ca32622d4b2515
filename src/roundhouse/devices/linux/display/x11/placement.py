"""Windows placed as a desktop shows them, on X11: a program's first normal window, once it
appears, maximised through EWMH where asked (osworld/apps.py: OSWorld's VM shows GIMP's,
LibreOffice's, Thunderbird's and Chrome's so). Backend.when_shown."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from Xlib import X, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

from roundhouse.core.polling import within

log = logging.getLogger(__name__)


def when_shown(env: Mapping[str, str], window_class: str, maximise: bool, timeout: float) -> None:
    """Wait (up to `timeout` s) for a new normal window of the class; maximise it if asked."""
    display = env.get("DISPLAY", "")
    try:
        connection = Display(display)
    except (error.DisplayError, OSError) as problem:
        log.info("no display %s to maximise %s on: %s", display, window_class, problem)
        return
    try:
        root = connection.screen().root
        atom = connection.intern_atom
        seen = set(_client_ids(root, atom))
        deadline = time.monotonic() + timeout

        def new_window() -> Any:
            for xid in _client_ids(root, atom):
                if xid in seen:
                    continue
                window = connection.create_resource_object("window", xid)
                names = _classes(window)
                if names is None:
                    continue  # its class is not set yet: asked again next time
                seen.add(xid)
                if any(window_class in n for n in names) and _is_normal(window, atom):
                    return window
            return None

        window = within(new_window, timeout, every=0.2)
        if window is None:
            log.info("no %s window within %g s: left as it opened", window_class, timeout)
        elif maximise:
            _keep_maximised(connection, root, window, deadline)
    except (error.XError, error.ConnectionClosedError, OSError) as problem:
        log.info("maximising %s stopped: %s (the desktop went?)", window_class, problem)
    finally:
        with contextlib.suppress(error.XError, error.ConnectionClosedError, OSError):
            connection.close()  # the desktop may be gone already


STEADY = 3  # checks in a row (half a second apart) that a maximised window stays so


def _keep_maximised(connection: Any, root: Any, window: Any, deadline: float) -> None:
    """Ask the window manager to maximise the window until it has stayed maximised a
    moment: Thunderbird sizes its window itself just after it shows, which undid the first
    request."""
    atom = connection.intern_atom
    wanted = {atom("_NET_WM_STATE_MAXIMIZED_VERT"), atom("_NET_WM_STATE_MAXIMIZED_HORZ")}
    steady = 0

    def stayed() -> bool:
        nonlocal steady
        state = window.get_full_property(atom("_NET_WM_STATE"), 0)
        if state is not None and wanted <= set(state.value):
            steady += 1
            return steady >= STEADY
        steady = 0
        message = event.ClientMessage(
            window=window, client_type=atom("_NET_WM_STATE"),
            data=(32, [1, *sorted(wanted), 1, 0]),
        )  # fmt: skip
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        root.send_event(message, event_mask=mask)
        connection.flush()
        return False

    within(stayed, deadline - time.monotonic(), every=0.5)


def _client_ids(root: Any, atom: Any) -> list[int]:
    prop = root.get_full_property(atom("_NET_CLIENT_LIST"), 0)
    return list(prop.value) if prop is not None else []


def _is_normal(window: Any, atom: Any) -> bool | None:
    """Whether the window's EWMH type is normal (one that says none is); None when it is
    gone."""
    try:
        prop = window.get_full_property(atom("_NET_WM_WINDOW_TYPE"), 0)
    except error.BadWindow:
        return None
    return prop is None or not prop.value or prop.value[0] == atom("_NET_WM_WINDOW_TYPE_NORMAL")


def _classes(window: Any) -> list[str] | None:
    """The window's WM_CLASS names in lower case; None while it has none (or is gone)."""
    try:
        names = window.get_wm_class()
    except error.BadWindow:
        return None
    return [name.lower() for name in names] if names else None
