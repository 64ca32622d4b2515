"""Which idle protocol and which lock protocols the wlroots person watch asks by, from the
globals a compositor offers (sway 1.7 offers the KDE idle protocol and the input
inhibitor; sway 1.10 ext-idle-notify-v1 and ext-session-lock-v1)."""

from __future__ import annotations

import pytest

from roundhouse.devices.linux.display.wayland.idle import (
    EXT_IDLE,
    EXT_INPUT_IDLE,
    KDE_IDLE,
    idle_protocol,
)
from roundhouse.devices.linux.display.wlroots.lockers import (
    INHIBIT,
    SESSION_LOCK,
    lock_protocols,
)

SWAY_1_7 = {"wl_seat": 7, "org_kde_kwin_idle": 1, INHIBIT: 1}
SWAY_1_10 = {"wl_seat": 9, "ext_idle_notifier_v1": 1, SESSION_LOCK: 1}


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        (SWAY_1_7, KDE_IDLE),
        (SWAY_1_10, EXT_IDLE),
        # Version 2's input notification sees input through an idle inhibitor.
        ({**SWAY_1_10, "ext_idle_notifier_v1": 2}, EXT_INPUT_IDLE),
        # Both offered (sway 1.8): the standard one.
        ({**SWAY_1_7, "ext_idle_notifier_v1": 1}, EXT_IDLE),
        ({"wl_seat": 9}, None),
    ],
)
def test_the_idle_protocol_is_the_best_offered(offered: dict[str, int], expected: object) -> None:
    assert idle_protocol(offered) == expected


def test_the_input_inhibitor_is_asked_before_the_session_lock() -> None:
    # Asking for the inhibitor locks nothing; asking for the session lock may lock it.
    assert lock_protocols(set(SWAY_1_7)) == (INHIBIT,)
    assert lock_protocols(set(SWAY_1_10)) == (SESSION_LOCK,)
    assert lock_protocols({INHIBIT, SESSION_LOCK}) == (INHIBIT, SESSION_LOCK)
    assert lock_protocols({"wl_seat"}) == ()
