"""Keyboard layouts other than US: under German and French AZERTY, type_text delivers exactly
what it was given into gedit (GTK 3) and GNOME Text Editor (GTK 4), and ctrl+z undoes it.

Keys are found by keysym in the keymap the application reads them with: on X11 the
server's (setxkbmap de), on sway our virtual keyboard's, built from the session's layout,
on GNOME and KDE the session's own (GNOME Shell's input sources, KWin's kxkbrc). In all
"z" is another key under de and fr than under us, "1" needs Shift under fr, "@" and "€"
need AltGr, and "é" and "à" are keys of fr that de lacks, as "ö" is a key of de that fr
lacks: on GNOME and KDE, which take no keys of ours, those are typed with the layout's
dead keys (´ e, ` a, ¨ o), as a person types them."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator

import pytest
from tests.desktop.conftest import wait_until_async
from tests.person.conftest import WATCHED, Apps, settings_for

from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools

TEXT = "Größe zyx é à 1234 @€"
LAYOUTS = ("de", "fr")
EDITORS = {
    "gedit": (["gedit", "--standalone"], "Untitled"),
    "gnome-text-editor": (["gnome-text-editor", "--standalone", "--new-window"], "New"),
}


@pytest.fixture(scope="module", params=list(itertools.product(WATCHED, LAYOUTS)), ids=str)
def laid_out(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    kind, layout = request.param
    with VirtualDesktop(settings_for(kind, layout=layout).desktop) as started:
        yield started


@pytest.fixture
async def tools(laid_out: Desktop) -> AsyncIterator[DesktopTools]:
    settings = settings_for(laid_out.kind, layout=laid_out.env.get("XKB_DEFAULT_LAYOUT", ""))
    async with await DesktopTools.open(laid_out, settings) as opened:
        yield opened


@pytest.mark.parametrize("editor", list(EDITORS))
async def test_the_text_arrives_exactly_and_ctrl_z_undoes(
    laid_out: Desktop, tools: DesktopTools, apps: Apps, editor: str
) -> None:
    argv, title = EDITORS[editor]
    window = await apps.start(laid_out, tools, argv, title)

    async def document() -> str:
        listed = await tools.get_controls(window.xid)
        texts = [c for c in listed["controls"] if c["role"] == "text"]
        return str(texts[0]["text"] or "") if texts else ""

    async def focused_document() -> bool:
        listed = await tools.get_controls(window.xid)
        return any(c["role"] == "text" and "focused" in c["states"] for c in listed["controls"])

    await wait_until_async(focused_document, 20, f"{editor}'s document to take the keys")
    typed = await tools.type_text(TEXT)
    assert typed["route"] == "keyboard", typed

    async def holds_it() -> str | None:
        now = await document()
        return now if now == TEXT else None

    await wait_until_async(holds_it, 10, f"{TEXT!r} in {editor} (it holds {await document()!r})")
    await tools.press_keys("ctrl+z")

    async def undone() -> bool:
        now = await document()
        return now != TEXT and TEXT.startswith(now)

    await wait_until_async(undone, 10, f"ctrl+z to undo in {editor}")
