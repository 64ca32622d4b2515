"""The one screenshot scaling and coordinate map (models/computer/screen.py): the sizes
each family is sent, and a model's point mapped back within one logical pixel, on a
monitor at scale 1.5, on the second of two monitors and on a window's own screenshot."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roundhouse.devices.contract import Rect
from roundhouse.models.computer.screen import (
    ScreenMap,
    fit_anthropic,
    fit_short_side,
    screen_map_for,
    smart_resize,
)

sides = st.integers(min_value=16, max_value=8000)


@given(sides, sides)
def test_anthropic_size_is_within_its_limits_and_keeps_the_aspect(width: int, height: int) -> None:
    sent_w, sent_h = fit_anthropic(width, height)
    assert max(sent_w, sent_h) <= 1568
    assert sent_w * sent_h <= 1_150_000
    assert sent_w <= width and sent_h <= height
    # The aspect within one pixel of the image's own.
    assert abs(sent_w - width * sent_h / height) <= 1 + width / height
    if max(width, height) <= 1568 and width * height <= 1_150_000:
        assert (sent_w, sent_h) == (width, height)


def test_anthropic_sizes_of_common_screens() -> None:
    assert fit_anthropic(1024, 768) == (1024, 768)
    assert fit_anthropic(1920, 1080) == (1429, 804)  # 1.15 MP binds before 1568
    assert fit_anthropic(3000, 400) == (1568, 209)  # the long side binds


@given(sides, sides)
def test_openai_size_has_a_short_side_of_at_most_768(width: int, height: int) -> None:
    sent_w, sent_h = fit_short_side(width, height)
    assert min(sent_w, sent_h) <= 768 and sent_w <= width and sent_h <= height
    assert abs(sent_w - width * sent_h / height) <= 1 + width / height
    assert fit_short_side(1920, 1080) == (1365, 768)
    assert fit_short_side(1024, 768) == (1024, 768)


@given(sides, sides, st.sampled_from([28, 32]))
def test_smart_resize_gives_multiples_of_its_factor_within_its_pixels(
    width: int, height: int, factor: int
) -> None:
    if max(width, height) / min(width, height) > 200:
        return
    low, high = 100 * factor * factor, 16384 * factor * factor
    sent_w, sent_h = smart_resize(width, height, factor, low, high)
    assert sent_w % factor == 0 and sent_h % factor == 0
    assert low <= sent_w * sent_h <= high


def test_smart_resize_as_qwen_publishes_it() -> None:
    # Qwen2-VL's own example sizes: 1920x1080 becomes 1932x1092 with factor 28.
    assert smart_resize(1920, 1080) == (1932, 1092)
    with pytest.raises(ValueError):
        smart_resize(10000, 20)


regions = st.builds(
    lambda left, top, width, height: Rect(left, top, left + width, top + height),
    st.integers(0, 4000),
    st.integers(0, 2000),
    st.integers(1, 4000),
    st.integers(1, 3000),
)


@given(regions, st.integers(1, 2000), st.integers(1, 2000), st.data())
def test_a_model_pixel_maps_within_one_logical_pixel_of_its_centre(
    region: Rect, sent_w: int, sent_h: int, data: st.DataObject
) -> None:
    screen = ScreenMap(region, (sent_w, sent_h))
    x = data.draw(st.integers(0, sent_w - 1))
    y = data.draw(st.integers(0, sent_h - 1))
    lx, ly = screen.to_logical(x, y)
    assert region.left <= lx < region.right and region.top <= ly < region.bottom
    centre_x = region.left + (x + 0.5) * region.width / sent_w
    centre_y = region.top + (y + 0.5) * region.height / sent_h
    assert abs(lx + 0.5 - centre_x) <= 1 and abs(ly + 0.5 - centre_y) <= 1


@given(regions, st.integers(1, 2000), st.integers(1, 2000), st.data())
def test_a_logical_point_survives_the_round_trip(
    region: Rect, sent_w: int, sent_h: int, data: st.DataObject
) -> None:
    """Seen by the model where to_model puts it and rounded to the model's pixel, a logical
    pixel comes back within that pixel's footprint: within one logical pixel when the image
    is not smaller than the region, itself when they are the same size."""
    screen = ScreenMap(region, (sent_w, sent_h))
    lx = data.draw(st.integers(region.left, region.right - 1))
    ly = data.draw(st.integers(region.top, region.bottom - 1))
    mx, my = screen.to_model(lx, ly)
    back_x, back_y = screen.to_logical(round(mx), round(my))
    assert abs(back_x - lx) <= max(1, math.ceil(region.width / sent_w))
    assert abs(back_y - ly) <= max(1, math.ceil(region.height / sent_h))
    if (sent_w, sent_h) == (region.width, region.height):
        assert (back_x, back_y) == (lx, ly)


@given(regions, st.integers(0, 999), st.integers(0, 999))
def test_the_0_999_grid_maps_onto_the_region(region: Rect, x: int, y: int) -> None:
    screen = ScreenMap(region, (1000, 700), grid=1000)
    lx, ly = screen.to_logical(x, y)
    assert abs(lx + 0.5 - (region.left + (x + 0.5) * region.width / 1000)) <= 1
    assert abs(ly + 0.5 - (region.top + (y + 0.5) * region.height / 1000)) <= 1


def test_a_monitor_at_scale_one_and_a_half_on_the_right_of_another() -> None:
    """Two monitors: 1920x1080 at 1, then 1280x800 logical at 1.5 (its shot: 1920x1200).
    The second's shot, sent to Claude, maps back onto its own logical place."""
    second = Rect(1920, 0, 3200, 800)
    screen = screen_map_for(second, (1920, 1200), "anthropic")
    assert screen.sent == fit_anthropic(1920, 1200)
    # A button centred at logical (2560, 400) on that monitor is where the model sees it.
    mx, my = screen.to_model(2560, 400)
    assert screen.to_logical(round(mx), round(my)) in {
        (2560 + dx, 400 + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)
    }
    assert screen.to_logical(0, 0) == (1920, 0)
    assert screen.to_logical(10_000, 10_000) == (3199, 799)  # held to the edge


def test_a_window_screenshot_maps_from_its_own_corner() -> None:
    window = Rect(300, 200, 1100, 800)
    screen = ScreenMap(window, (800, 600))
    assert screen.to_logical(0, 0) == (300, 200)
    assert screen.to_logical(799, 599) == (1099, 799)
    assert screen.to_logical(400, 300) == (700, 500)


def test_unknown_targets_and_empty_images_are_refused() -> None:
    with pytest.raises(ValueError):
        screen_map_for(Rect(0, 0, 10, 10), (10, 10), "gemini-ish")
    with pytest.raises(ValueError):
        ScreenMap(Rect(0, 0, 10, 10), (0, 10))
