"""The `roundhouse bench` group: each benchmark module adds its command to it."""

from __future__ import annotations

import typer

bench_app = typer.Typer(help="Benchmarks, measured on this machine in one run.")
