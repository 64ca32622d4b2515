"""X11: XTest input, mss and XComposite screenshots, EWMH windows, on the desktop's display."""

from typing import Any

from Xlib import error  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import randr  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import display as protocol  # type: ignore[import-untyped, unused-ignore]

# python-xlib (0.33) registers RandR's three errors at codes 0, 1 and 2, not after RandR's
# first error code, and in a table of error classes that every connection of the process
# shares: from the first connection to a server with RandR on, a core BadValue (2) or
# BadRequest (1) on any connection was read as BadRRModeError or BadRRCrtcError, plain
# Exceptions with no sequence number. Its reader then raised AttributeError in the middle
# of the stream, and the connection's next request waited for ever (seen once in a full
# run: launch_application failed so, and list_windows hung). The core classes are put back
# after RandR's init; its own errors come as plain XErrors, with their codes.
_CLOBBERED = (randr.BadRROutput, randr.BadRRCrtc, randr.BadRRMode)
_randr_init = randr.init


def _core_errors_kept(table: dict[int, Any]) -> None:
    for code in _CLOBBERED:
        table[code] = error.xerror_class.get(code, error.XError)


def _init(disp: Any, info: Any) -> None:
    _randr_init(disp, info)
    _core_errors_kept(disp.display.error_classes)


randr.init = _init
_core_errors_kept(protocol.Display.error_classes)  # a connection made before this import
