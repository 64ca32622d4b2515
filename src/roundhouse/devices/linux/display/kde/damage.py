"""What KWin draws, as it draws it: a KWin script that stays loaded and reports each
window's damage.

KWin tells its scripts when a window is damaged (its `damaged` signal), where no other
client is told anything. The script calls a method we serve (kwin._Sink.Drawn) with the
window's frame, which bumps a Changes (changes.py): what the settle waits on and the kept
reads ask. KWin names no smaller rectangle to a script, so a caret's blink counts as a
change of its whole window here. Windows that open, close or are activated are reported too.
"""

from __future__ import annotations

import logging

from roundhouse.devices.linux.display.base import Closing
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.kde.kwin import KWinRefused, KWinScripts
from roundhouse.devices.linux.display.wayland.dbus import BusGone, DBusCallError

log = logging.getLogger(__name__)

# Plasma 6 names them windowList/windowAdded..., Plasma 5.27 clientList/clientAdded...
_DAMAGE = """
const drawn = w => {
  if (!w) return;
  const f = w.frameGeometry;
  callDBus(%(service)s, %(path)s, %(interface)s, 'Drawn',
           JSON.stringify([f.x, f.y, f.width, f.height]));
};
const watch = w => { if (w && w.damaged) w.damaged.connect(() => drawn(w)); };
(workspace.windowList ? workspace.windowList() : workspace.clientList()).forEach(watch);
(workspace.windowAdded || workspace.clientAdded).connect(w => { watch(w); drawn(w); });
(workspace.windowRemoved || workspace.clientRemoved).connect(drawn);
(workspace.windowActivated || workspace.clientActivated).connect(drawn);
"""


class KWinDamage(Closing):
    """The damage script, loaded for the display server's life."""

    def __init__(self, scripts: KWinScripts) -> None:
        self._scripts = scripts
        self._plugin: str | None = None

    def start(self) -> Changes | None:
        """What KWin draws; None where it refuses the script (the settle then compares
        screenshots)."""
        try:
            self._plugin = self._scripts.keep(_DAMAGE)
        except (KWinRefused, DBusCallError, BusGone, TimeoutError) as error:
            log.info("KWin reports no damage (%s): the settle compares screenshots", error)
            return None
        return self._scripts.drawn

    def close(self) -> None:
        if self._plugin is not None:
            self._scripts.unload(self._plugin)
            self._plugin = None
