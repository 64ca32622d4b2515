"""The `roundhouse` command. Each sub-module adds its commands to `app`."""

from __future__ import annotations

# Importing a command module registers its commands.
from roundhouse.cli import batch as _batch  # noqa: F401
from roundhouse.cli import bench as _bench  # noqa: F401
from roundhouse.cli import bench_batch as _bench_batch  # noqa: F401
from roundhouse.cli import bench_observation as _bench_observation  # noqa: F401
from roundhouse.cli import desktop as _desktop  # noqa: F401
from roundhouse.cli import desktop_io as _desktop_io  # noqa: F401
from roundhouse.cli import report as _report  # noqa: F401
from roundhouse.cli import run as _run  # noqa: F401
from roundhouse.cli import serve as _serve  # noqa: F401
from roundhouse.cli.app import app


def main() -> None:
    app()
