"""The tree benchmark as a script: `python benchmarks/bench_tree.py [--json] [--runs N]`
is `roundhouse bench tree` (the measuring code is roundhouse.bench.tree; the pyatspi walker
it compares with is benchmarks/pyatspi_controls.py). Not a test: it asserts nothing about
time, it reports medians and ratios measured in the same run."""

from __future__ import annotations

import sys

from roundhouse.cli import app  # the whole command, the bench group with it

if __name__ == "__main__":
    sys.exit(app(["bench", "tree", *sys.argv[1:]]))
