"""`roundhouse osworld fetch-files` against a real HTTP server on loopback: files land under
their URL's path, a partial file is resumed with a Range request, a whole one is kept, and
each is checked against the sha256 the server states."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roundhouse.cli import app
from roundhouse.osworld.files import FileCache, fetch_files

BODIES = {
    "/datasets/x/resolve/main/os/t1/setup.sh": b"#!/bin/sh\necho set up\n" * 200,
    "/datasets/x/resolve/main/os/t1/eval.sh": b"echo ok\n",
    "/datasets/x/resolve/main/calc/t2/big.xlsx": bytes(range(256)) * 400,
}
LIES = "/datasets/x/resolve/main/os/t1/lie.txt"  # the server states another sha256


class Server:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str]] = []  # method, path, Range
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
                self._answer(body=False)

            def do_GET(self) -> None:  # noqa: N802
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                served.requests.append((self.command, self.path, self.headers.get("Range", "")))
                data = BODIES.get(self.path, b"told wrong" if self.path == LIES else None)
                if data is None:
                    self.send_error(404)
                    return
                digest = hashlib.sha256(b"x" if self.path == LIES else data).hexdigest()
                start = 0
                if self.headers.get("Range", "").startswith("bytes="):
                    start = int(self.headers["Range"][6:].split("-")[0])
                    if start >= len(data):
                        self.send_response(416)
                        self.end_headers()
                        return
                    self.send_response(206)
                else:
                    self.send_response(200)
                self.send_header("ETag", f'"{digest}"')
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                if body:
                    self.wfile.write(data[start:])

            def log_message(self, *args: object) -> None:
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def gets(self) -> list[tuple[str, str]]:
        return [(path, rng) for method, path, rng in self.requests if method == "GET"]


@pytest.fixture
def server() -> Iterator[Server]:
    serving = Server()
    serving.thread.start()
    yield serving
    serving.http.shutdown()
    serving.http.server_close()


def test_files_land_under_their_path_and_a_second_run_keeps_them(
    server: Server, tmp_path: Path
) -> None:
    urls = [server.base + path for path in BODIES]
    first = fetch_files(urls, tmp_path)
    assert [f.how for f in first] == ["fetched"] * 3
    cache = FileCache(tmp_path)
    for path, body in BODIES.items():
        found = cache.find("https://mirror.example" + path)  # any host: the path is the key
        assert found is not None and found.read_bytes() == body
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    key = "datasets/x/resolve/main/os/t1/eval.sh"
    assert manifest[key]["sha256"] == hashlib.sha256(BODIES["/" + key]).hexdigest()
    server.requests.clear()
    again = fetch_files(urls, tmp_path)
    assert [f.how for f in again] == ["kept"] * 3
    assert server.gets() == []


def test_a_partial_file_is_resumed_where_it_stopped(server: Server, tmp_path: Path) -> None:
    path = "/datasets/x/resolve/main/calc/t2/big.xlsx"
    target = tmp_path / path.lstrip("/")
    target.parent.mkdir(parents=True)
    Path(str(target) + ".part").write_bytes(BODIES[path][:1000])
    (done,) = fetch_files([server.base + path], tmp_path)
    assert done.how == "resumed"
    assert server.gets() == [(path, "bytes=1000-")]
    assert target.read_bytes() == BODIES[path]
    assert not Path(str(target) + ".part").exists()


def test_a_file_whose_sha256_is_not_the_stated_one_is_not_kept(
    server: Server, tmp_path: Path
) -> None:
    (done,) = fetch_files([server.base + LIES], tmp_path)
    assert done.how.startswith("failed: sha256")
    assert FileCache(tmp_path).find(server.base + LIES) is None
    assert not list(tmp_path.rglob("*.part"))


def test_fetch_files_reads_the_tasks_and_says_what_failed(server: Server, tmp_path: Path) -> None:
    folder = tmp_path / "examples" / "os"
    folder.mkdir(parents=True)
    task = {
        "id": "t1",
        "instruction": "x",
        "config": [{"type": "download", "parameters": {"files": [
            {"url": server.base + "/datasets/x/resolve/main/os/t1/setup.sh", "path": "setup.sh"},
            {"url": server.base + "/datasets/x/resolve/main/os/t1/gone.sh", "path": "g.sh"}]}}],
        "evaluator": {"func": "exact_match",
                      "result": {"type": "cloud_file", "dest": "e.sh",
                                 "path": server.base + "/datasets/x/resolve/main/os/t1/eval.sh"},
                      "expected": {"type": "rule", "rules": {"expected": ""}}},
    }  # fmt: skip
    (folder / "t1.json").write_text(json.dumps(task))
    files = tmp_path / "files"
    result = CliRunner().invoke(app, ["osworld", "fetch-files", str(tmp_path), str(files)])
    assert result.exit_code == 1
    assert "2 of 3 files" in result.output and "1 failed" in result.output
    assert "gone.sh: failed: HTTP 404" in result.output
    assert (files / "datasets/x/resolve/main/os/t1/eval.sh").read_bytes() == BODIES[
        "/datasets/x/resolve/main/os/t1/eval.sh"
    ]
