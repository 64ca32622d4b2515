"""Where the numbers of an annotated screenshot go: pure geometry, no pixels.

    labels = place_labels(boxes, sizes, image=(width, height))

A number drawn inside its control hides the control's own text ("Name" reads "me"), so
each label goes outside its box where there is room in the image: above, else left, else
below or right, then further along those edges; only when every such place covers other
controls more does it go into a corner of its own box (drawn on a filled tag, so it stays
readable). Labels never overlap one another: one that would is shifted along its box's
edges, or further out. Among the places that are free of other labels, one that hides no
control's text start (its left end, mid-height) and the smallest fraction of any control
wins; ties go to the order above.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from roundhouse.devices.contract import Rect

# A label may hide this fraction of a control and still count as out of its way; a place
# hiding more is taken only when no other is free.
MAX_COVER = 0.1
# Hiding no more than this of any control is as good as free room: take the first such
# place (in a crowd, looking on for a perfect one costs time and gains nothing visible).
_SMALL_COVER = 0.02
_CELL = 64  # pixels: the grid that finds the boxes near a candidate place
_EDGE_STEPS = 4  # places tried along each edge, beyond its two ends
_TEXT_START = 40  # pixels at a control's left end where its text usually begins
_RINGS = 40  # how far (in label sizes) the last-resort search looks for a free place


def cover(label: Rect, control: Rect) -> float:
    """The fraction of `control` that `label` hides."""
    return label.overlap(control) / control.area if control.area else 0.0


def text_start(box: Rect) -> Rect:
    """Where a control's text usually begins: at its left end, around mid-height (fields,
    rows, check boxes; a button's centred text is not there, and nothing is lost)."""
    band = max(box.height // 4, 1)
    return Rect(box.left, box.top + band, box.left + min(_TEXT_START, box.width), box.bottom - band)


def place_labels(
    boxes: Sequence[Rect], sizes: Sequence[tuple[int, int]], image: tuple[int, int]
) -> list[Rect]:
    """One label rectangle per box (its tag of `sizes[i]` = (width, height)), in order.

    Rectes are the controls in image pixels, already clipped to the image; earlier boxes get
    the first pick. Labels overlap no other label while the image has room for them.
    """
    controls = _Grid(boxes)
    # A container's text is its children's: only the boxes holding none have a text start.
    texts = _Grid(text_start(box) for box in boxes if not controls.holds_another(box))
    labels = _Grid([])
    placed: list[Rect] = []
    for box, size in zip(boxes, sizes, strict=True):
        label = _place(box, size, image, controls, texts, labels)
        labels.add(label)
        placed.append(label)
    return placed


def _place(
    box: Rect,
    size: tuple[int, int],
    image: tuple[int, int],
    controls: _Grid,
    texts: _Grid,
    labels: _Grid,
) -> Rect:
    """The first place that hides (almost) nothing, else the one hiding least: no more
    than MAX_COVER of any control if it can, then no text start, then the least."""
    best: tuple[tuple[bool, bool, float], Rect] | None = None
    for place in _candidates(box, size):
        if not place.within(*image):
            continue
        cells = list(_cells(place))
        if labels.hits(place, cells):
            continue
        covered = controls.most_covered(place, cells)
        cost = (covered > MAX_COVER, texts.hits(place, cells), covered)
        if not cost[1] and covered <= _SMALL_COVER:
            return place  # (almost) free room, and the most natural such place
        if best is None or cost < best[0]:
            best = (cost, place)
    if best is not None:
        return best[1]
    return _free_place(box, size, image, labels)


def _candidates(box: Rect, size: tuple[int, int]) -> Iterator[Rect]:
    """Places for the label, most natural first: touching the box outside (above, left,
    below, right), then across its edges, along them, one label further out, then the
    box's corners (right ones first: text starts at the left)."""
    w, h = size
    above, below = box.top - h, box.bottom
    left, right = box.left - w, box.right
    yield _at(box.left, above, size)
    yield _at(left, box.top, size)
    yield _at(box.left, below, size)
    yield _at(right, box.top, size)
    yield _at(box.right - w, above, size)
    yield _at(box.right - w, below, size)
    yield _at(left, box.bottom - h, size)
    yield _at(right, box.bottom - h, size)
    # Across an edge, half in and half out: in a tight grid this hides least of either side.
    yield _at(box.left, box.top - h // 2, size)
    yield _at(box.left - w // 2, box.top, size)
    yield _at(box.right - w, box.top - h // 2, size)
    yield _at(box.left, box.bottom - h // 2, size)
    yield _at(box.right - w // 2, box.top, size)
    for x in _steps(box.left, box.right - w):
        yield _at(x, above, size)
        yield _at(x, below, size)
    for y in _steps(box.top, box.bottom - h):
        yield _at(left, y, size)
        yield _at(right, y, size)
    yield _at(box.left, above - h, size)
    yield _at(left - w, box.top, size)
    yield _at(box.left, below + h, size)
    yield _at(right + w, box.top, size)
    yield _at(box.right - w, box.top, size)
    yield _at(box.right - w, box.bottom - h, size)
    yield _at(box.left, box.top, size)
    yield _at(box.left, box.bottom - h, size)


def _steps(first: int, last: int) -> Iterator[int]:
    """Up to _EDGE_STEPS positions spread between first and last (both ends excluded)."""
    if last - first < 2:
        return
    count = min(_EDGE_STEPS, last - first - 1)
    for step in range(1, count + 1):
        yield first + (last - first) * step // (count + 1)


def _free_place(box: Rect, size: tuple[int, int], image: tuple[int, int], labels: _Grid) -> Rect:
    """The nearest place in the image free of labels, ring by ring around the box; when the
    image is full of labels (never seen in practice), the box's own corner."""
    w, h = size
    for ring in range(1, _RINGS + 1):
        for dx in range(-ring, ring + 1):
            for dy in (-ring, ring) if abs(dx) < ring else range(-ring, ring + 1):
                place = _at(box.left + dx * w, box.top + dy * h, size)
                if place.within(*image) and not labels.hits(place, list(_cells(place))):
                    return place
    return _at(max(min(box.left, image[0] - w), 0), max(min(box.top, image[1] - h), 0), size)


def _at(x: int, y: int, size: tuple[int, int]) -> Rect:
    return Rect(x, y, x + size[0], y + size[1])


class _Grid:
    """Rectes bucketed by _CELL-pixel cells: "which boxes may touch this one" without
    comparing with every box (hundreds of controls on a web page)."""

    def __init__(self, boxes: Iterable[Rect]) -> None:
        self.boxes: list[Rect] = []
        self._areas: list[int] = []
        self._cells: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
        for box in boxes:
            self.add(box)

    def add(self, box: Rect) -> None:
        index = len(self.boxes)
        self.boxes.append(box)
        self._areas.append(box.area)
        for cell in _cells(box):
            self._cells[cell].append(index)

    def most_covered(self, box: Rect, cells: list[tuple[int, int]]) -> float:
        """The largest fraction of one of the boxes that `box` (in `cells`) covers."""
        worst = 0.0
        for index in self.near(cells):
            shared = box.overlap(self.boxes[index])
            if shared and shared / self._areas[index] > worst:
                worst = shared / self._areas[index]
        return worst

    def near(self, cells: list[tuple[int, int]]) -> set[int]:
        """The boxes that share one of `cells`."""
        if len(cells) == 1:
            return set(self._cells.get(cells[0], ()))
        return {index for cell in cells for index in self._cells.get(cell, ())}

    def holds_another(self, box: Rect) -> bool:
        """Whether another of the boxes lies within `box`."""
        return any(
            other != box and box.contains(other)
            for other in (self.boxes[index] for index in self.near(list(_cells(box))))
        )

    def hits(self, box: Rect, cells: list[tuple[int, int]]) -> bool:
        return any(box.overlap(self.boxes[index]) for index in self.near(cells))


def _cells(box: Rect) -> Iterator[tuple[int, int]]:
    for column in range(box.left // _CELL, (box.right - 1) // _CELL + 1):
        for row in range(box.top // _CELL, (box.bottom - 1) // _CELL + 1):
            yield column, row
