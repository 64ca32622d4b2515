"""Benchmarks: ratios measured on this machine in one run, against a baseline in the same
run (`roundhouse bench ...`; docs/bench.md has the figures)."""
