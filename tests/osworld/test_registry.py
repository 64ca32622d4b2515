"""The registries of OSWorld's steps, getters and metrics: each name once."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from roundhouse.osworld.getters import GETTERS
from roundhouse.osworld.metrics import METRICS
from roundhouse.osworld.registry import Registry
from roundhouse.osworld.steps import STEPS, execute, open_path


def test_a_function_is_registered_by_its_name_or_the_one_given() -> None:
    registry: Registry[Callable[[], int]] = Registry()

    @registry.add
    def one() -> int:
        return 1

    @registry.named("two")
    def second() -> int:
        return 2

    assert registry == {"one": one, "two": second}
    assert one() == 1  # the decorator hands the function back as it was


def test_a_name_registered_twice_is_refused() -> None:
    registry: Registry[Callable[[], int]] = Registry()
    registry.add(lambda: 1)
    with pytest.raises(ValueError, match="'<lambda>' is registered twice"):
        registry.add(lambda: 2)
    other: Registry[Callable[[], int]] = Registry({"<lambda>": lambda: 3})
    with pytest.raises(ValueError, match="registered twice"):
        registry.include(other)


def test_the_shipped_registries_hold_osworlds_names() -> None:
    assert STEPS["open"] is open_path and STEPS["command"] is STEPS["execute"] is execute
    assert {"vm_file", "bookmarks", "vm_window_size"} <= set(GETTERS)  # Chrome's are in
    assert {"exact_match", "compare_table", "compare_docx_files", "check_font_size"} <= set(METRICS)
