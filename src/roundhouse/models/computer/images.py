"""A screenshot at the size a family is sent (screen.py says which), as PNG bytes."""

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
