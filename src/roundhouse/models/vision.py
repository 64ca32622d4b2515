"""Screenshots for a vision model: shrunk to a longest side, and the way back to the screen.

A model sees the image we sent, not the screen: a point it names in a screenshot that was
shrunk by `scale` is at (x / scale, y / scale) on the screen.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image


@dataclass(frozen=True)
class PreparedImage:
    file: Path
    data_url: str  # data:image/png;base64,...
    scale: float  # sent size / original size (1.0: sent as is)
    original_size: tuple[int, int]
    sent_size: tuple[int, int]


def scale_for(size: tuple[int, int], max_side: int) -> float:
    """The factor that brings the longest side down to max_side (never enlarges)."""
    longest = max(size)
    return 1.0 if longest <= max_side else max_side / longest


def to_screen(x: float, y: float, scale: float) -> tuple[int, int]:
    """A point the model gave in the sent image, in screen pixels."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    return round(x / scale), round(y / scale)


def prepare_image(file: Path, max_side: int) -> PreparedImage:
    """Read a PNG, shrink it so its longest side is at most max_side, encode it as a data URL."""
    with Image.open(file) as opened:
        original = (opened.width, opened.height)
        scale = scale_for(original, max_side)
        sent = original
        image: Image.Image = opened
        if scale < 1.0:
            sent = (max(1, round(original[0] * scale)), max(1, round(original[1] * scale)))
            image = opened.resize(sent, Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return PreparedImage(file, f"data:image/png;base64,{encoded}", scale, original, sent)
