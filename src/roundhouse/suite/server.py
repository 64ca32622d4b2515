"""A task's own web server: serves the files of a folder on 127.0.0.1, and records every
form posted to it, so that a check reads what the browser really sent.

    server = TaskServer.bind()          # a free port, taken now: {server} is known
    server.start(root, record)          # serving, in a thread of its own
    ...                                 # the browser GETs pages and POSTs forms
    server.stop()                       # the port is free again

A POST is answered with a page that says what arrived ("Received: name=Ada") and appended
to `record` as one JSON line: {"method": "POST", "path": "/submit", "fields": {...}}.
Only loopback is ever bound: the suite runs where no network may be reached.
"""

from __future__ import annotations

import html
import json
import logging
import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAX_BODY = 1 << 20  # bytes a posted form may have; more is refused (413)


def read_posted(record: Path) -> list[dict[str, Any]]:
    """The requests a server recorded, oldest first (none when nothing was posted)."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line]


def form_fields(body: bytes) -> dict[str, str]:
    """An application/x-www-form-urlencoded body as its fields (the last of a repeated one)."""
    parsed = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in parsed.items()}


class _Handler(SimpleHTTPRequestHandler):
    """Files of the served folder for GET and HEAD; a recorded form for POST."""

    def __init__(self, *args: Any, directory: str, record: Path, lock: threading.Lock) -> None:
        self.record = record
        self.lock = lock
        super().__init__(*args, directory=directory)

    def do_POST(self) -> None:  # noqa: N802 (the name http.server dispatches to)
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 <= length <= MAX_BODY:
            self.send_error(413, f"a posted form has at most {MAX_BODY} bytes")
            return
        fields = form_fields(self.rfile.read(length))
        path = urlsplit(self.path).path
        with self.lock:
            with self.record.open("a", encoding="utf-8") as out:
                entry = {"method": "POST", "path": path, "fields": fields}
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        said = ", ".join(f"{name}={value}" for name, value in fields.items()) or "nothing"
        page = (
            "<!doctype html><html><head><meta charset='utf-8'><title>Received</title></head>"
            f"<body><h1>Received</h1><p>Received: {html.escape(said)}</p></body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        log.debug("task server: " + format, *args)


class TaskServer:
    """One task's server. Its port is taken at bind(), before anything is served, so the
    task's {server} placeholder can be filled before its setup runs."""

    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock
        host, port = sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"  # what {server} stands for
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def bind(cls) -> TaskServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))  # the kernel picks a free port
        sock.listen(16)  # a browser that comes early waits in the backlog
        return cls(sock)

    def start(self, root: Path, record: Path) -> None:
        """Serve the files under `root`; append every posted form to `record`."""
        if self._server is not None:
            raise RuntimeError("this task server already serves")
        handler = partial(_Handler, directory=str(root), record=record, lock=threading.Lock())
        server = ThreadingHTTPServer((HOST, 0), handler, bind_and_activate=False)
        server.socket.close()
        server.socket = self._socket
        server.server_address = self._socket.getsockname()
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="task-server")
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and free the port (also when it never started)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join()
            self._server = None
        self._socket.close()
