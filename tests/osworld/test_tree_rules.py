"""OSWorld's tree rules, written once (osworld/tree_rules.py) for /accessibility and for the
bench's linearised table."""

from __future__ import annotations

from roundhouse.bench import osworld as bench_osworld
from roundhouse.osworld import a11y_xml, tree_rules
from roundhouse.osworld.tree_rules import placed, shown_text, state_name, tag


def test_an_object_is_named_and_read_as_osworlds_server_does() -> None:
    assert tag("push button") == "push-button" and tag("  ") == "unknown"
    assert state_name("multi-line") == "multi_line"
    assert shown_text("a\ufffcb\ufffdc") == "abc"
    assert placed({"visible", "showing"}) and not placed({"showing"})


def test_the_server_and_the_bench_walk_by_the_same_limits() -> None:
    assert a11y_xml.LIMITS.max_depth == tree_rules.MAX_DEPTH == bench_osworld.MAX_DEPTH
    assert a11y_xml.MAX_WIDTH is bench_osworld.MAX_WIDTH is tree_rules.MAX_WIDTH
