"""What the benchmarks open: generated documents, pages and folders, and the applications
started on them on the bench's virtual desktop, each in a session of its own that is ended
whole afterwards (LibreOffice and Chromium fork helpers)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from html import escape as html_escape
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from dbus_fast.aio import MessageBus

from roundhouse.core.polling import until_async, within, within_async
from roundhouse.devices.contract import ControlList, WindowInfo
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.apps import prepare_office_profile
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import list_windows
from roundhouse.devices.linux.system import procfs
from roundhouse.devices.linux.system.bus_daemon import bus_daemon_message

READY_TIMEOUT = 60.0  # seconds: LibreOffice and Chromium start slowly on a loaded machine
SESSION_END_TIMEOUT = 10.0

Ready = Callable[[ControlList], bool]


@dataclass(frozen=True)
class Opened:
    window: WindowInfo
    process: subprocess.Popen[bytes]


@contextlib.asynccontextmanager
async def opened(
    desktop: Desktop,
    client: AtspiClient,
    argv: Sequence[str],
    ready: Ready,
    *,
    title: str | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Opened]:
    """Start `argv` on the desktop (Desktop.app_command adds what makes it expose its tree),
    wait for its window (the launched pid's, or the first whose title holds `title`: soffice
    and Chromium show theirs from another process) and until `ready` holds for its controls;
    end its whole session afterwards. `env` adds to the desktop's environment."""
    process = subprocess.Popen(
        desktop.app_command(argv),
        env={**desktop.env, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        window = await window_of(desktop, process.pid if title is None else None, title)
        window = await wait_ready(client, desktop, window, ready)
        yield Opened(window, process)
    finally:
        end_session(process)


async def window_of(desktop: Desktop, pid: int | None, title: str | None) -> WindowInfo:
    def shown() -> WindowInfo | None:
        return next(
            (
                window
                for window in list_windows(desktop)
                if (pid is None or window.pid == pid) and (title is None or title in window.title)
            ),
            None,
        )

    what = f"no window (pid {pid}, title {title!r})"
    return await until_async(shown, READY_TIMEOUT, what, every=0.1, error=RuntimeError)


async def wait_ready(
    client: AtspiClient, desktop: Desktop, window: WindowInfo, ready: Ready
) -> WindowInfo:
    """The window once its controls satisfy `ready`, as listed then (its title and
    rectangle may have changed while it loaded)."""

    async def is_ready() -> bool:
        return ready(await client.controls(window, fresh=True))

    await until_async(
        is_ready, READY_TIMEOUT, f"{window.title!r} was not ready", every=0.2, error=RuntimeError
    )
    now = [w for w in list_windows(desktop) if w.xid == window.xid]
    return now[0] if now else window


async def held_still(client: AtspiClient, window: WindowInfo, timeout: float = 10.0) -> None:
    """Until two reads of the window's controls half a second apart agree (a page that has
    just loaded still renames its tab and lays itself out), or `timeout` seconds."""
    before = await client.controls(window, fresh=True)

    async def still() -> bool:
        nonlocal before
        now = await client.controls(window, fresh=True)
        same, before = now.controls == before.controls, now
        return same

    await within_async(still, timeout, every=0.5, pause_first=True)


def has_control(role: str, name: str | None = None) -> Ready:
    def ready(listed: ControlList) -> bool:
        return any(c.role == role and (name is None or c.name == name) for c in listed.controls)

    return ready


def end_session(process: subprocess.Popen[bytes]) -> None:
    """Kill every process of the app's session and wait until none is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    within(lambda: not _session_members(process.pid), SESSION_END_TIMEOUT, every=0.05)


def _session_members(sid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = procfs.read_stat(int(entry.name))
            if stat is not None and stat.sid == sid and stat.state != "Z":
                members.append(int(entry.name))
    return members


XFCONF_SERVICE = Path("/usr/share/dbus-1/services/org.xfce.Xfconf.service")
THUNAR_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="thunar" version="1.0">
  <property name="last-view" type="string" value="ThunarDetailsView"/>
</channel>
"""


@contextlib.asynccontextmanager
async def thunar_settings(desktop: Desktop, config_home: Path) -> AsyncIterator[None]:
    """Thunar in its details view (its icon view exposes no files over AT-SPI), without
    touching the user's settings: Thunar keeps them in xfconf, whose daemon the desktop's
    bus would start with the user's HOME and which writes there. Started here first, with a
    configuration folder of the bench's own, it is the one Thunar talks to."""
    channel = config_home / "xfce4" / "xfconf" / "xfce-perchannel-xml" / "thunar.xml"
    channel.parent.mkdir(parents=True, exist_ok=True)
    channel.write_text(THUNAR_SETTINGS)
    daemon = _xfconfd()
    if daemon is None:
        yield  # no xfconf: Thunar keeps nothing, and shows its default view
        return
    process = subprocess.Popen(
        [daemon],
        env={**desktop.env, "XDG_CONFIG_HOME": str(config_home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        await _wait_for_name(desktop, "org.xfce.Xfconf")
        yield
    finally:
        end_session(process)


def _xfconfd() -> str | None:
    """The daemon's path, as the bus would start it (it lives in an arch-specific folder)."""
    try:
        lines = XFCONF_SERVICE.read_text().splitlines()
    except OSError:
        return None
    found = [line.split("=", 1)[1].strip() for line in lines if line.startswith("Exec=")]
    return found[0] if found and Path(found[0]).is_file() else None


async def _wait_for_name(desktop: Desktop, name: str) -> None:
    bus = await MessageBus(bus_address=desktop.bus_address).connect()
    try:

        async def owned() -> bool:
            reply = await bus.call(bus_daemon_message("NameHasOwner", "s", [name]))
            return reply is not None and bool(reply.body) and bool(reply.body[0])

        await until_async(
            owned, READY_TIMEOUT, f"{name} did not appear on the session bus", error=RuntimeError
        )
    finally:
        bus.disconnect()


def rss_mb(pid: int) -> float | None:
    """The process's resident memory now, in MB (None once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


# ---------------------------------------------------------------- documents


def chromium_argv(page: Path, profile: Path) -> list[str]:
    """Chromium on a local page, with a profile of its own (a killed browser leaves its
    profile locked for the next one)."""
    return ["chromium", f"--user-data-dir={profile}", "--window-size=1200,760", page.as_uri()]


def office_argv(kind: str, document: Path, profile: Path) -> list[str]:
    """LibreOffice (`kind`: calc, writer) on a document, in a profile without first-start
    dialogs made for this start alone (a killed instance leaves its profile locked)."""
    user = prepare_office_profile(profile).as_uri()
    return ["soffice", f"-env:UserInstallation={user}", f"--{kind}", "--norestore", "--nologo",
            str(document)]  # fmt: skip


# The GTK 3 plug-in is the one whose tree reaches AT-SPI ("gen" exposes nothing).
OFFICE_ENV = {"SAL_USE_VCLPLUGIN": "gtk3"}


FORM_PAGE_TITLE = "Roundhouse order form"


def form_page(path: Path, rows: int = 20) -> Path:
    """A small form (two entries, a select with a value, a check box, a button, a link) above
    a table of `rows` orders."""
    body = "".join(
        f"<tr><td>{n}</td><td>Item {n}</td><td>{n % 7 + 1}</td><td>{n * 3}.50</td></tr>"
        for n in range(1, rows + 1)
    )
    path.write_text(
        f"<!doctype html><html><head><title>{FORM_PAGE_TITLE}</title></head><body>"
        "<h1>Order</h1><form>"
        '<label>Name <input name="name" type="text" value="Ada"></label> '
        '<label>Email <input name="email" type="email"></label> '
        '<label>Size <select name="size"><option>Small</option>'
        "<option selected>Medium</option><option>Large</option></select></label> "
        '<label><input name="gift" type="checkbox" checked> Gift wrap</label> '
        '<button type="submit">Submit</button></form>'
        '<p><a href="#orders">More details</a></p>'
        '<h2 id="orders">Recent orders</h2><table border="1">'
        "<tr><th>Order</th><th>Item</th><th>Quantity</th><th>Price</th></tr>"
        f"{body}</table></body></html>\n"
    )
    return path


def table_page(path: Path, title: str, rows: int) -> Path:
    """The scaling page: a heading, a few controls and a table of `rows` rows of 4 cells."""
    body = "".join(
        f"<tr><td>{n}</td><td>Name {n}</td><td><a href='#r{n}'>open {n}</a></td>"
        f"<td>{n * 7 % 1000}</td></tr>"
        for n in range(1, rows + 1)
    )
    path.write_text(
        f"<!doctype html><html><head><title>{html_escape(title)}</title></head><body>"
        f"<h1>{html_escape(title)}</h1>"
        '<label>Filter <input name="filter"></label> <button>Apply</button>'
        "<table border='1'><tr><th>Id</th><th>Name</th><th>Link</th><th>Score</th></tr>"
        f"{body}</table></body></html>\n"
    )
    return path


def large_page(path: Path, title: str, sections: int = 68) -> Path:
    """A page of mixed content: per section a heading, a paragraph with a link, a form row
    (label, entry, check box, button) and a list of four items; ~33 accessible nodes each."""
    parts = []
    for n in range(1, sections + 1):
        parts.append(
            f"<section><h2>Section {n}</h2>"
            f"<p>Paragraph {n} says a little, then links <a href='#s{n}'>to section {n}</a>.</p>"
            f"<label>Field {n} <input name='f{n}'></label>"
            f"<label><input type='checkbox' name='c{n}'> Option {n}</label>"
            f"<button>Save {n}</button>"
            "<ul>" + "".join(f"<li>Item {n}.{k}</li>" for k in range(1, 5)) + "</ul>"
            "</section>"
        )
    path.write_text(
        f"<!doctype html><html><head><title>{html_escape(title)}</title></head><body>"
        f"<h1>{html_escape(title)}</h1>{''.join(parts)}</body></html>\n"
    )
    return path


def sheet(path: Path, rows: int = 50, columns: int = 20) -> Path:
    """A flat OpenDocument spreadsheet of rows × columns filled cells (numbers in odd
    columns, 101 in A1, text in even ones, "R1C2" in B1)."""
    return flat_ods(
        path,
        [
            [
                row * 100 + column if column % 2 else f"R{row}C{column}"
                for column in range(1, columns + 1)
            ]
            for row in range(1, rows + 1)
        ],
    )


def flat_ods(path: Path, rows: Sequence[Sequence[int | float | str | None]]) -> Path:
    """A flat OpenDocument spreadsheet (one XML file LibreOffice opens as it is): numbers
    as numbers, strings as text, None or "" as an empty cell."""
    lines = []
    for row in rows:
        cells = []
        for value in row:
            if value is None or value == "":
                cells.append("<table:table-cell/>")
            elif isinstance(value, int | float):
                cells.append(
                    f'<table:table-cell office:value-type="float" office:value="{value}">'
                    f"<text:p>{value}</text:p></table:table-cell>"
                )
            else:
                cells.append(
                    '<table:table-cell office:value-type="string">'
                    f"<text:p>{xml_escape(value)}</text:p></table:table-cell>"
                )
        lines.append(f"<table:table-row>{''.join(cells)}</table:table-row>")
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
        ' office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">'
        '<office:body><office:spreadsheet><table:table table:name="Sheet1">'
        f"{''.join(lines)}"
        "</table:table></office:spreadsheet></office:body></office:document>\n"
    )
    return path


def text_document(path: Path, pages: int = 20, paragraphs: int = 6) -> Path:
    """A flat OpenDocument text of `pages` pages: each starts on a new page with a heading
    and `paragraphs` paragraphs."""
    sentence = "The quick brown fox jumps over the lazy dog while the bench counts the time. "
    body = []
    for page in range(1, pages + 1):
        style = ' text:style-name="Break"' if page > 1 else ""
        body.append(f"<text:h text:outline-level='1'{style}>Page {page}</text:h>")
        body += [
            f"<text:p>{xml_escape(f'{page}.{n} ' + sentence * 4)}</text:p>"
            for n in range(1, paragraphs + 1)
        ]
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'
        ' xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
        ' office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">'
        "<office:automatic-styles>"
        '<style:style style:name="Break" style:family="paragraph">'
        '<style:paragraph-properties fo:break-before="page"/></style:style>'
        "</office:automatic-styles>"
        f"<office:body><office:text>{''.join(body)}</office:text></office:body>"
        "</office:document>\n"
    )
    return path


def folder(path: Path, files: int) -> Path:
    """A folder of `files` small text files (file-001.txt, ...)."""
    path.mkdir(parents=True, exist_ok=True)
    width = len(str(files))
    for number in range(1, files + 1):
        (path / f"file-{number:0{width}d}.txt").write_text(f"file {number}\n")
    return path


def text_lines(path: Path, lines: int) -> Path:
    """A plain text file of `lines` numbered lines."""
    sentence = "the quick brown fox jumps over the lazy dog"
    path.write_text("".join(f"{number:04d} {sentence}\n" for number in range(1, lines + 1)))
    return path
