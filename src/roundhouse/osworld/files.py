"""The files OSWorld's tasks download, kept in a local folder (`--files DIR`).

OSWorld's tasks fetch their documents and scripts from the dataset
xlangai/ubuntu_osworld_file_cache (through huggingface.co or a mirror such as hf-mirror.com)
in `download` steps and `cloud_file` getters. Here a file is kept under its URL's path, so
the same file is found whichever host a task names:

    https://hf-mirror.com/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/ID/setup.sh
    -> DIR/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/ID/setup.sh

`roundhouse osworld fetch-files EXAMPLES DIR` fills the folder on a machine with the network:
each file is written beside its place as NAME.part and renamed when whole, a .part left by
an interrupted run is resumed (an HTTP Range request), and DIR/manifest.json records each
file's size and sha256, which a later run checks before it counts a file as fetched. A
server that states a file's sha256 (its ETag, as Hugging Face does for large files) is
checked against it too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from roundhouse.osworld.tasks import OsworldItem, Step

if TYPE_CHECKING:
    import httpx

MANIFEST = "manifest.json"
CHUNK = 1 << 16
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 120.0  # between two chunks of one file
SHA256 = re.compile(r'^(?:W/)?"?([0-9a-f]{64})"?$')


class BadURL(ValueError):
    """A URL whose path cannot name a file in the cache (empty, '..', not http)."""


def cache_key(url: str) -> PurePosixPath:
    """The file's place in the cache: its URL's path, decoded, without the leading '/'."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BadURL(f"{url!r} is not an http(s) URL")
    segments = [unquote(segment) for segment in parts.path.split("/") if segment]
    if not segments or any(s in (".", "..") or "/" in s or "\x00" in s for s in segments):
        raise BadURL(f"{url!r} has no usable path for the file cache")
    return PurePosixPath(*segments)


@dataclass(frozen=True)
class FileCache:
    root: Path

    def path(self, url: str) -> Path:
        return self.root.joinpath(*cache_key(url).parts)

    def find(self, url: str) -> Path | None:
        """The cached file for `url`, or None when it is not there (or the URL is unusable)."""
        try:
            path = self.path(url)
        except BadURL:
            return None
        return path if path.is_file() else None


def task_urls(item: OsworldItem) -> list[str]:
    """The files a task downloads: its download steps' and cloud_file getters' URLs."""
    urls: list[str] = []
    for step in item.task.steps():
        urls.extend(download_urls(step))
    for getter in item.task.evaluator.getters():
        if getter.type == "cloud_file":
            path = getter.config.get("path")
            urls.extend(path if isinstance(path, list) else [path] if path else [])
    return [url for url in urls if isinstance(url, str)]


def download_urls(step: Step) -> list[str]:
    if step.type != "download":
        return []
    files = step.parameters.get("files", [])
    return [f["url"] for f in files if isinstance(f, dict) and isinstance(f.get("url"), str)]


# ---------------------------------------------------------------- fetching


@dataclass(frozen=True)
class Fetched:
    url: str
    path: Path
    size: int
    sha256: str
    how: str  # "fetched", "resumed", "kept" (already whole), or "failed: why"


Progress = Callable[[Fetched, int, int], None]


def fetch_files(
    urls: Iterable[str], root: Path, *, client: httpx.Client | None = None,
    progress: Progress | None = None,
) -> list[Fetched]:  # fmt: skip
    """Fetch every URL into the cache (each once), resuming partial files and skipping
    whole ones; the manifest is written after every file, so an interrupted run loses
    nothing fetched."""
    import httpx  # only a fetch needs it

    wanted = list(dict.fromkeys(urls))
    root.mkdir(parents=True, exist_ok=True)
    manifest = _read_manifest(root)
    own = client is None
    http = client or httpx.Client(
        timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT), follow_redirects=True
    )
    done: list[Fetched] = []
    try:
        for index, url in enumerate(wanted):
            outcome = _fetch_one(http, url, FileCache(root), manifest)
            if not outcome.how.startswith("failed"):
                manifest[str(cache_key(url))] = {
                    "url": url, "size": outcome.size, "sha256": outcome.sha256,
                }  # fmt: skip
                _write_manifest(root, manifest)
            done.append(outcome)
            if progress is not None:
                progress(outcome, index + 1, len(wanted))
    finally:
        if own:
            http.close()
    return done


def _fetch_one(http: httpx.Client, url: str, cache: FileCache, manifest: dict[str, Any]) -> Fetched:
    try:
        target = cache.path(url)
    except BadURL as error:
        return Fetched(url, cache.root, 0, "", f"failed: {error}")
    known = manifest.get(str(cache_key(url)))
    if target.is_file() and known and known.get("size") == target.stat().st_size:
        digest = _sha256(target)
        if digest == known.get("sha256"):
            return Fetched(url, target, known["size"], digest, "kept")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    try:
        how = _download(http, url, part)
    except (OSError, _http_error()) as error:
        return Fetched(url, target, 0, "", f"failed: {type(error).__name__}: {error}")
    if how.startswith("failed"):
        return Fetched(url, target, 0, "", how)
    digest = _sha256(part)
    stated = _stated_sha256(http, url)
    if stated is not None and stated != digest:
        part.unlink(missing_ok=True)  # a bad resume must not be resumed again
        return Fetched(url, target, 0, "", f"failed: sha256 {digest} but the server says {stated}")
    os.replace(part, target)
    return Fetched(url, target, target.stat().st_size, digest, how)


def _download(http: httpx.Client, url: str, part: Path) -> str:
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with http.stream("GET", url, headers=headers) as response:
        if response.status_code == 416 and have:  # the part is already whole
            return "resumed"
        if response.status_code not in (200, 206):
            return f"failed: HTTP {response.status_code}"
        resumed = response.status_code == 206 and have > 0
        with open(part, "ab" if resumed else "wb") as out:
            for chunk in response.iter_bytes(CHUNK):
                out.write(chunk)
    return "resumed" if resumed else "fetched"


def _stated_sha256(http: httpx.Client, url: str) -> str | None:
    """The sha256 the server states for the file (Hugging Face's ETag of a large file)."""
    try:
        response = http.head(url)
    except _http_error():
        return None
    for header in ("x-linked-etag", "etag"):
        match = SHA256.match(response.headers.get(header, ""))
        if match:
            return match.group(1)
    return None


def _http_error() -> type[Exception]:
    import httpx

    return httpx.HTTPError


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}  # files are checked again against what they hold
    return data if isinstance(data, dict) else {}


def _write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    path = root / MANIFEST
    part = path.with_name(f".{MANIFEST}.part")
    part.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(part, path)
