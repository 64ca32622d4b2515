"""Folders as bytes, for machines that share no file system: a suite goes out to the Ray
nodes this way, and each task's log folder comes home to the driver.

Unpacking accepts only plain files and folders inside the target: a bundle from another
machine can never write outside it, nor leave links or devices behind.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath


class BundleError(ValueError):
    pass


def folder_files(root: Path) -> list[str]:
    """The regular files under `root`, as sorted relative POSIX paths (links not followed)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def digest(root: Path, files: list[str]) -> str:
    """What the files hold, names included: equal digests, equal folders."""
    total = hashlib.sha256()
    for name in sorted(files):
        total.update(name.encode() + b"\0")
        total.update(hashlib.sha256((root / name).read_bytes()).digest())
    return total.hexdigest()


def pack(root: Path, files: list[str] | None = None) -> bytes:
    """The files (default: all of them) under `root`, as a gzipped tar."""
    buffer = io.BytesIO()
    # Level 1: logs are mostly JSON and already-compressed PNGs; speed matters more.
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for name in sorted(folder_files(root) if files is None else files):
            tar.add(root / name, arcname=name, recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, target: Path) -> None:
    """Unpack into `target`, which must not exist yet; it appears whole or not at all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            for member in members:
                _check(member)
            if hasattr(tarfile, "data_filter"):  # 3.11.4+: the library checks again
                tar.extractall(staging, members=members, filter="data")
            else:  # pragma: no cover - older 3.11 releases
                tar.extractall(staging, members=members)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _check(member: tarfile.TarInfo) -> None:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        raise BundleError(f"the bundle holds {member.name!r}, outside its folder")
    if not (member.isfile() or member.isdir()):
        raise BundleError(f"the bundle holds {member.name!r}, which is not a plain file")
