"""The tree benchmark as a script: `python benchmarks/bench_tree.py [--json] [--runs N]`
is `roundhouse bench tree` (the measuring code is roundhouse.cli.bench; the pyatspi walker
it compares with is benchmarks/pyatspi_controls.py). Not a test: it asserts nothing about
time, it reports medians and ratios measured in the same run."""

from __future__ import annotations

import sys

from roundhouse.cli.app import app
from roundhouse.cli.bench import bench_app

if __name__ == "__main__":
    assert bench_app is not None  # importing roundhouse.cli.bench registered `bench`
    sys.exit(app(["bench", "tree", *sys.argv[1:]]))
