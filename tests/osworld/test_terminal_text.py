"""OSWorld's /terminal and its vm_terminal_output getter: the focused terminal's text in GNOME
Terminal's active window, whichever name its version gives it on the accessibility bus."""

from __future__ import annotations

import pytest

from roundhouse.osworld.a11y_xml import terminal_text
from roundhouse.osworld.namespaces import NS


def tree(application: str, active: str = "true", focused: str = "true") -> str:
    return (
        f'<desktop-frame xmlns:st="{NS["st"]}"><application name="{application}">'
        f'<frame name="Terminal" st:active="{active}"><filler>'
        f'<terminal st:focused="{focused}">$ stty size\n30 100\n$   </terminal>'
        "</filler></frame></application></desktop-frame>"
    )


@pytest.mark.parametrize("name", ["gnome-terminal-server", "org.gnome.Terminal"])
def test_gnome_terminals_text_is_read_under_either_name(name: str) -> None:
    """3.46 (Debian 12) is its server's program name, 3.56 (Debian 13) its application id."""
    assert terminal_text(tree(name)) == "$ stty size\n30 100\n$"


def test_no_text_without_an_active_window_and_a_focused_terminal() -> None:
    assert terminal_text(tree("org.gnome.Terminal", active="false")) is None
    assert terminal_text(tree("org.gnome.Terminal", focused="false")) is None
    assert terminal_text(tree("xterm")) is None
