"""A screenshot at the size a family is sent (screen.py says which), or a part of it
enlarged to that size, as PNG bytes."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def png_at(file: Path, size: tuple[int, int]) -> bytes:
    """The PNG in `file`, resized (Lanczos) to `size` unless it is that size already."""
    with Image.open(file) as opened:
        image = opened.convert("RGB")
    if image.size != size:
        image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def png_of_part(file: Path, part: tuple[float, ...], size: tuple[int, int]) -> bytes:
    """The part of the PNG in `file` given as fractions of it (left, top, right, bottom),
    enlarged (Lanczos) to `size`: a zoom into the screenshot."""
    with Image.open(file) as opened:
        image = opened.convert("RGB")
    width, height = image.size
    left, top, right, bottom = part
    box = (
        min(int(left * width), width - 1),
        min(int(top * height), height - 1),
        max(round(right * width), int(left * width) + 1),
        max(round(bottom * height), int(top * height) + 1),
    )
    image = image.crop(box).resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
