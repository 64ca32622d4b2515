"""Label placement for annotated screenshots: pure geometry, synthetic layouts."""

from __future__ import annotations

import random
from itertools import combinations

from roundhouse.devices.contract import Rect as Box
from roundhouse.devices.linux.action.marks import (
    MAX_COVER,
    cover,
    place_labels,
    text_start,
)

TAG = (23, 14)  # a two-digit label at the screenshot's font size


def check(boxes: list[Box], labels: list[Box], image: tuple[int, int]) -> float:
    """Labels stay in the image and off one another; returns the largest cover."""
    assert len(labels) == len(boxes)
    for label in labels:
        assert label.within(*image), label
    for first, second in combinations(labels, 2):
        assert not first.overlap(second), (first, second)
    return max((cover(label, box) for label in labels for box in boxes), default=0.0)


def test_a_label_sits_just_above_its_box_when_there_is_room() -> None:
    box = Box(50, 50, 150, 80)
    [label] = place_labels([box], [TAG], (300, 200))
    assert label == Box(50, 36, 73, 50)  # touching the box's top edge, at its left end
    assert cover(label, box) == 0


def test_at_the_image_top_the_label_goes_left_else_below() -> None:
    left_room = Box(40, 0, 140, 30)
    [label] = place_labels([left_room], [TAG], (300, 200))
    assert label == Box(17, 0, 40, 14)
    corner = Box(0, 0, 100, 30)
    [label] = place_labels([corner], [TAG], (300, 200))
    assert label == Box(0, 30, 23, 44)


def test_a_box_filling_the_image_gets_its_label_in_a_corner_of_its_own() -> None:
    box = Box(0, 0, 300, 200)
    [label] = place_labels([box], [TAG], (300, 200))
    assert label == Box(277, 0, 300, 14)  # top right: text starts at the left
    assert cover(label, box) < MAX_COVER


def test_a_dense_form_list_and_grid_keep_labels_apart_and_off_the_controls() -> None:
    """The Qt test window's shape: fields 22 px high 6 px apart, a list with 14 px rows
    (nested in the list's box), and a grid of buttons 2 px apart."""
    image = (680, 420)
    boxes = [Box(11, 11, 669, 33), Box(11, 39, 669, 61), Box(11, 89, 122, 108)]
    boxes.append(Box(11, 114, 669, 136))
    boxes.append(Box(11, 142, 669, 262))  # the list
    boxes += [Box(12, 143 + 14 * row, 654, 157 + 14 * row) for row in range(8)]
    boxes += [
        Box(11 + 82 * column, 266 + 24 * row, 91 + 82 * column, 288 + 24 * row)
        for row in range(6)
        for column in range(8)
    ]
    labels = place_labels(boxes, [TAG] * len(boxes), image)
    assert check(boxes, labels, image) <= MAX_COVER
    # Nothing is drawn where a control's text begins (its left end, mid-height), but for
    # the list, whose text is its rows'.
    for box in boxes[:4] + boxes[5:]:
        assert not any(label.overlap(text_start(box)) for label in labels), box


def test_labels_never_overlap_however_crowded() -> None:
    """300 random controls, nested and overlapping: some labels must cover something, but
    no two labels overlap and every one is in the image."""
    chance = random.Random(7)
    image = (1280, 800)
    boxes = []
    for _ in range(300):
        width, height = chance.randint(8, 300), chance.randint(8, 60)
        left, top = chance.randint(0, image[0] - width), chance.randint(0, image[1] - height)
        boxes.append(Box(left, top, left + width, top + height))
    sizes = [(16 if n < 9 else 23 if n < 99 else 31, 14) for n in range(len(boxes))]
    check(boxes, place_labels(boxes, sizes, image), image)


def test_a_label_that_has_no_room_near_its_box_still_finds_a_free_place() -> None:
    """The box's every candidate place is taken by earlier labels: it goes further out."""
    image = (200, 120)
    crowd = [Box(x, y, x + 23, y + 14) for x in range(40, 140, 23) for y in range(20, 100, 14)]
    target = Box(86, 62, 90, 64)  # a tiny control in the middle of the crowd
    boxes = [*crowd, target]
    labels = place_labels(boxes, [TAG] * len(boxes), image)
    check(boxes, labels, image)
