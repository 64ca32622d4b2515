"""The `roundhouse` command. Each sub-module adds its commands to `app`."""

from __future__ import annotations

from roundhouse.cli import run as _run  # noqa: F401  (registers run and chat)
from roundhouse.cli.app import app


def main() -> None:
    app()
