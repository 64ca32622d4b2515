"""GIMP's metrics: an edited image against the original or a gold one, and GIMP's settings.

The image tests, each as OSWorld's function of the same name judges (the first path is the
agent's image, the second the reference; a missing path scores 0):
- "the same structure": SSIM (scikit-image) of the two RGB images >= 0.9 (window 7, or the
  smaller odd side); images of different sizes, or smaller than 7 pixels, differ;
- brightness / contrast / saturation: the mean grey level, the standard deviation of the
  pixels, the mean HSV saturation, compared one way, with the structure kept (brightness:
  by the mean squared error of the two images normalised to a mean of 128, under 0.03);
- mirror, palette (mode P), size (optionally of the opaque part), the text box on the left
  (a dark pixel within the left 5%), the triangle in the middle (its colour's centroid
  within 5% of the centre), a green background (where the reference is not black);
- check_config_status: a line of gimprc or sessionrc, "(key value)", holds the value;
- compare_image_list: each pair of images is pixel for pixel the same (after resizing the
  first to the second's size and mode).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from roundhouse.osworld.registry import Registry

METRICS: Registry[Callable[..., float]] = Registry()
SSIM_WINDOW = 7


def load_image(path: str) -> Any:
    """The image, read whole and its file closed (Pillow keeps a lazy image's file open)."""
    from PIL import Image

    with Image.open(path) as image:
        image.load()
    return image


_open = load_image


def same_structure(one: Any, two: Any, threshold: float = 0.9) -> bool:
    """SSIM of the two images (PIL) in RGB at or above `threshold`."""
    import numpy as np
    from skimage.metrics import structural_similarity

    if min(one.width, one.height, two.width, two.height) < SSIM_WINDOW:
        return False
    one, two = one.convert("RGB"), two.convert("RGB")
    if one.size != two.size:
        return False
    first, second = np.array(one), np.array(two)
    if first.shape != second.shape:
        return False
    side = min(first.shape[0], first.shape[1])
    window = SSIM_WINDOW if side >= SSIM_WINDOW else (side if side % 2 else side - 1)
    try:
        similarity = structural_similarity(first, second, win_size=window, channel_axis=2)
    except Exception:  # noqa: BLE001 - OSWorld counts an SSIM that fails as "not the same"
        return False
    return bool(similarity >= threshold)


def same_by_squared_error(one: Any, two: Any, threshold: float = 0.03) -> bool:
    import numpy as np
    from PIL import Image

    if one.size != two.size:
        one = one.resize(two.size, Image.Resampling.LANCZOS)
    one, two = one.convert("RGB"), two.convert("RGB")
    first = np.array(one, dtype=np.float32) / 255
    second = np.array(two, dtype=np.float32) / 255
    return bool(np.mean((first - second) ** 2) < threshold)


def brightness(image: Any) -> float:
    from PIL import ImageStat

    return float(ImageStat.Stat(image.convert("L")).mean[0])


def _normalised(image: Any, target: float) -> Any:
    factor = target / brightness(image)
    return image.point(lambda x: min(255, max(0, int(x * factor))))


def _score(ok: bool) -> float:
    return 1.0 if ok else 0.0


@METRICS.add
def check_structure_sim(src: str | None, tgt: str | None) -> float:
    if src is None or tgt is None:
        return 0.0
    try:
        one, two = _open(src), _open(tgt)
        return _score(one.size == two.size and same_structure(one, two))
    except Exception:  # noqa: BLE001 - OSWorld's scores an image it cannot read 0
        return 0.0


@METRICS.add
def check_brightness_decrease_and_structure_sim(
    src: str | None, tgt: str | None, threshold: float = 0.03
) -> float:
    if src is None or tgt is None:
        return 0.0
    one, two = _open(src), _open(tgt)
    darker = brightness(two) > brightness(one)
    kept = same_by_squared_error(_normalised(one, 128), _normalised(two, 128), threshold)
    return _score(darker and kept)


@METRICS.add
def check_saturation_increase_and_structure_sim(src: str | None, tgt: str | None) -> float:
    import numpy as np

    if src is None or tgt is None:
        return 0.0
    one, two = _open(src).convert("HSV"), _open(tgt).convert("HSV")
    more = float(np.mean(np.array(two.split()[1]))) < float(np.mean(np.array(one.split()[1])))
    h1, _, v1 = one.split()
    h2, _, v2 = two.split()
    return _score(more and same_structure(h1, h2) and same_structure(v1, v2))


@METRICS.add
def check_contrast_increase_and_structure_sim(src: str | None, tgt: str | None) -> float:
    import numpy as np

    if src is None or tgt is None:
        return 0.0
    one, two = _open(src), _open(tgt)

    def contrast(image: Any) -> float:
        return float(np.std(np.asarray(image, dtype=np.float32)))

    higher = contrast(two) < contrast(one)
    return _score(higher and same_structure(one, two, threshold=0.65))


@METRICS.add
def check_file_exists_and_structure_sim(src: str | None, tgt: str | None) -> float:
    if src is None or tgt is None or not os.path.isfile(src):
        return 0.0
    return _score(same_structure(_open(src), _open(tgt)))


@METRICS.add
def check_structure_sim_resized(src: str | None, tgt: str | None) -> float:
    if src is None or tgt is None:
        return 0.0
    one, two = _open(src), _open(tgt)
    if one.mode in ("RGBA", "LA") or "transparency" in one.info:
        one = one.convert("RGBA") if one.mode != "RGBA" else one
        box = one.split()[-1].getbbox()
        if box is None:
            return 0.0  # all transparent
        one = one.crop(box).convert("RGB")
    one = one.resize(two.size)
    two = two.convert("RGB") if two.mode != "RGB" else two
    return _score(same_structure(one, two))


@METRICS.add
def check_image_mirror(src: str | None, tgt: str | None) -> float:
    from PIL import Image

    if src is None or tgt is None:
        return 0.0
    flipped = _open(src).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return _score(same_structure(flipped, _open(tgt), 0.99))


@METRICS.add
def check_palette_and_structure_sim(src: str | None, tgt: str | None) -> float:
    if src is None or tgt is None:
        return 0.0
    source = _readable(src)
    if source is None:
        return 0.0
    try:
        target = _readable(tgt)
        if target is None:
            return 0.0
        try:
            return _score(source.mode == "P" and same_structure(source.convert("RGB"), target))
        finally:
            target.close()
    except Exception:  # noqa: BLE001 - OSWorld's scores any failure here 0
        return 0.0
    finally:
        source.close()


def _readable(path: str) -> Any:
    """The image, fully read; None when the file is missing, empty or not an image."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    try:
        return load_image(path)
    except Exception:  # noqa: BLE001 - any image that does not load is "none"
        return None


@METRICS.add
def check_image_size(src: str | None, rule: dict[str, Any]) -> float:
    if src is None:
        return 0.0
    image = _open(src)
    # (OSWorld's test reads "ignore_transparent and RGBA/LA, or any image with a
    # transparency entry": kept as it is.)
    if (
        rule.get("ignore_transparent", False)
        and image.mode in ("RGBA", "LA")
        or ("transparency" in image.info)
    ):
        image = image.convert("RGBA") if image.mode != "RGBA" else image
        box = image.split()[-1].getbbox()
        width, height = (0, 0) if box is None else (box[2] - box[0], box[3] - box[1])
    else:
        width, height = image.size
    ok_height = rule.get("height") is None or height == rule["height"]
    ok_width = rule.get("width") is None or width == rule["width"]
    return _score(ok_height and ok_width)


@METRICS.add
def check_textbox_on_leftside(src: str | None) -> float:
    import numpy as np

    if src is None:
        return 0.0
    image = _open(src)
    grey = np.array(image.convert("L"))
    width = image.size[0]
    dark = grey < 128
    rows = dark.any(axis=1)
    leftmost = int(dark[rows].argmax(axis=1).min(axis=0)) if rows.any() else width
    return _score(leftmost < width * 0.05)


@METRICS.add
def check_triangle_position(tgt: str | None) -> float:
    import numpy as np

    if tgt is None:
        return 0.0
    pixels = np.array(_open(tgt))
    colours, counts = np.unique(pixels.reshape(-1, pixels.shape[2]), axis=0, return_counts=True)
    triangle = colours[np.argsort(counts)][1]  # (the second rarest, as OSWorld's takes it)
    where = np.argwhere(np.all(pixels == triangle, axis=2))
    centre = np.array(pixels.shape[:2]) / 2
    tolerance = 0.05 * np.array(pixels.shape[:2])
    return _score(bool(np.all(np.abs(where.mean(axis=0) - centre) < tolerance)))


@METRICS.add
def check_green_background(src: str | None, tgt: str | None) -> float:
    import numpy as np

    if src is None or tgt is None:
        return 0.0
    source, target = _open(src), _open(tgt)
    ours, theirs = np.array(source), np.array(target)
    # Indexed [x, y] over the target's width and height, as OSWorld's loop does (an image
    # that is not square is read across: past its edge, an IndexError).
    for x in range(target.width):
        for y in range(target.height):
            if tuple(theirs[x, y][:3]) != (0, 0, 0):
                r, g, b = ours[x, y][:3]
                if not (g > r and g > b):
                    return 0.0
    return 1.0


@METRICS.add
def check_config_status(path: str | None, rule: dict[str, Any]) -> float:
    if path is None:
        return 0.0
    with open(path) as config:
        lines = config.readlines()
    key, value = rule["key"], rule["value"]
    for line in lines:
        if line.startswith("#") or line == "\n":
            continue
        items = line.strip().lstrip("(").rstrip(")\n").split()
        if isinstance(key, str) and items[0] == key and items[-1] == value:
            return 1.0
        if isinstance(key, list) and len(key) == 2 and items[:2] == key and items[-1] == value:
            return 1.0
    return 0.0


@METRICS.add
def compare_image_list(predicted: Any, gold: Any) -> float:
    from PIL import Image, ImageChops

    if not isinstance(predicted, list):
        predicted, gold = [predicted], [gold]
    for mine, theirs in zip(predicted, gold, strict=False):
        if not mine or not theirs:
            return 0.0
        one, two = load_image(mine), load_image(theirs)
        if one.size != two.size:
            one = one.resize(two.size, Image.Resampling.LANCZOS)
        if one.mode != two.mode:
            one = one.convert(two.mode)
        if ImageChops.difference(one, two).getbbox():
            return 0.0
    return 1.0
