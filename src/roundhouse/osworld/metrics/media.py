"""VLC's metrics: its settings in vlcrc, what its HTTP interface says it plays, whether its
window fills the screen, and the image and video comparisons of the vlc domain.

vlcrc is read line by line as OSWorld reads it: a line that holds `KEY=` gives the value
after its last "=", commented or not (VLC writes every default as "#key=value"); the last
such line wins, and a key written nowhere has VLC's default. compare_images is SSIM of the
two images in grey, resized to the smaller's size (scikit-image, as OSWorld's);
compare_videos compares the first 100 frames' perceptual hashes (ImageHash);
compare_audios aligns the two sounds' normalised MFCCs (librosa) by dynamic time warping
(fastdtw, cosine distance) and scores exp(-distance per step).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse
from xml.etree import ElementTree as ET

from roundhouse.osworld.metrics.images import load_image
from roundhouse.osworld.registry import Registry

log = logging.getLogger(__name__)
METRICS: Registry[Callable[..., float]] = Registry()
SLIDER_DEFAULT = "153;210;153;20;210;20;255;199;15;245;39;29"
BLACKISH = 100  # each of red, green and blue under this
META = 'information/category[@name="meta"]/info[@name="{}"]'
FILE_FIELDS = ("filename", "title", "uri", "location", "name")
URL_FIELDS = ("url", "URI", "location", "title", "filename")
STREAM = 'information/category[@name="Stream 0"]/info[@name="{}"]'


def _config(path: str) -> str:
    with open(path, "rb") as file:
        return file.read().decode("utf-8")


def _setting(text: str, marker: str, default: str) -> str:
    value = default
    for line in text.split("\n"):
        if marker in line:
            value = line.split("=")[-1].strip()
    return value


def _wanted(rule: dict[str, Any], key: str) -> Any:
    wanted = rule[key]
    return str(wanted) if isinstance(wanted, int) else wanted


def _setting_metric(key: str, default: str) -> Callable[[str, dict[str, Any]], float]:
    """A metric: the vlcrc setting `key` equals the rule's expected_<key>."""
    rule_key = "expected_" + key.replace("-", "_")

    def metric(path: str, rule: dict[str, Any]) -> float:
        text = _config(path)
        wanted = _wanted(rule, rule_key)
        return 1.0 if _setting(text, f"{key}=", default) == wanted else 0.0

    return metric


for _key, _default, _name in (
    ("qt-bgcone", "1", "check_qt_bgcone"),
    ("qt-max-volume", "125", "check_qt_max_volume"),
    ("qt-minimal-view", "0", "check_qt_minimal_view"),
    ("one-instance-when-started-from-file", "1", "check_one_instance_when_started_from_file"),
    ("play-and-exit", "0", "check_play_and_exit"),  # (OSWorld's main; not in desktop-env 1.0.2)
):
    METRICS.named(_name)(_setting_metric(_key, _default))


@METRICS.add
def check_global_key_play_pause(path: str, rule: dict[str, Any]) -> float:
    """A global key is set for play/pause (any value but an empty one)."""
    text = _config(path)
    wanted = _wanted(rule, "expected_global_key_play_pause")
    value = "0"
    for line in text.split("\n"):
        if "global-key-play-pause=" in line:
            value = "0" if line.split("=")[-1].strip() == "" else "1"
    return 1.0 if value == wanted else 0.0


@METRICS.add
def check_qt_slider_colours(path: str, rule: dict[str, Any]) -> float:
    text = _config(path)
    colours = SLIDER_DEFAULT
    for line in text.split("\n"):
        if "qt-slider-colours" in line:  # (no "=": the key's name alone, as OSWorld's)
            colours = line.split("=")[-1].strip()
    try:
        if rule["type"] == "match":
            return 1.0 if colours == rule["expected_qt_slider_colours"] else 0.0
        if rule["type"] == "blackish":
            values = [int(part) for part in colours.split(";")]
            triples = zip(values[0::3], values[1::3], values[2::3], strict=False)
            return 1.0 if all(all(v < BLACKISH for v in rgb) for rgb in triples) else 0.0
    except Exception:  # noqa: BLE001 - OSWorld's gives 0 for any error here
        return 0.0
    return None  # type: ignore[return-value]  # an unknown type: OSWorld's returns None


@METRICS.add
def is_vlc_recordings_folder(path: str, rule: dict[str, Any]) -> float:
    text = _config(path)
    for line in text.split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return 1.0 if line.split("=")[-1].strip() == rule["recording_file_path"] else 0.0
    return 0.0


@METRICS.add
def is_vlc_fullscreen(window_size: Any, screen_size: Any) -> float:
    if screen_size is None or window_size is None:
        return 0.0
    same = (window_size["width"], window_size["height"]) == (
        screen_size["width"], screen_size["height"],
    )  # fmt: skip
    return 1.0 if same else 0.0


@METRICS.add
def is_vlc_playing(status_path: str, rule: dict[str, Any]) -> float:
    """VLC's status.xml says it plays, and (rule type) the file or URL asked for."""
    tree = ET.fromstring(_config(status_path))
    state = tree.find("state")
    if state is None or state.text != "playing":
        if state is None:
            raise AttributeError("status.xml has no <state>")
        return 0.0
    if rule["type"] == "file_name":
        found = _first_text(tree, [META.format(f) for f in FILE_FIELDS])
        if not found:
            return 0.0
        wanted = rule["file_name"]
        return 1.0 if os.path.basename(found) == wanted or found.endswith(wanted) else 0.0
    if rule["type"] == "url":
        paths = [META.format(f) for f in URL_FIELDS]
        paths += [STREAM.format(f) for f in ("Codec", "Type", "Language")]
        found = _first_text(tree, paths)
        if not found:
            return 0.0
        return 1.0 if _same_stream(rule["url"], found) else 0.0
    return 0.0


def _first_text(tree: ET.Element, paths: list[str]) -> str | None:
    for path in paths:
        element = tree.find(path)
        if element is not None and element.text:
            return element.text
    return None


def _same_stream(wanted: str, found: str) -> bool:
    if wanted in found or found.endswith(wanted):
        return True
    try:
        expected = urlparse(wanted)
        if found == os.path.basename(expected.path):  # an HLS stream shows its file's name
            return True
        if "://" in found:
            actual = urlparse(found)
            return expected.netloc == actual.netloc and expected.path in actual.path
    except ValueError:
        return False
    return False


@METRICS.add
def compare_images(first: str | None, second: str | None, **options: Any) -> float:
    """SSIM of the two images in grey at the smaller one's size; with
    reference_base_result, how far above that base (0 under it plus 0.01)."""
    import numpy as np
    from PIL import Image
    from skimage.metrics import structural_similarity

    if not first or not second:
        return 0.0
    base = options.get("reference_base_result")
    one, two = load_image(first).convert("L"), load_image(second).convert("L")
    size = min(one.size, two.size)  # (tuples: by width, then height, as OSWorld's min)
    one = one.resize(size, Image.Resampling.LANCZOS)
    two = two.resize(size, Image.Resampling.LANCZOS)
    similarity = float(structural_similarity(np.array(one), np.array(two)))
    if base is None:
        return similarity
    return (similarity - base) / (1 - base) if similarity >= base + 0.01 else 0.0


@METRICS.add
def compare_videos(
    first: str, second: str, max_frames_to_check: int = 100, threshold: int = 5
) -> float:
    """The same length (within the frames checked) and at most `threshold` frames whose
    perceptual hashes differ by more than `threshold`."""
    import cv2
    import imagehash
    from PIL import Image

    one, two = cv2.VideoCapture(first), cv2.VideoCapture(second)
    checked = mismatched = 0
    try:
        while checked < max_frames_to_check:
            ok_one, frame_one = one.read()
            ok_two, frame_two = two.read()
            if not ok_one or not ok_two:
                return 1.0 if ok_one == ok_two else 0.0
            hashes = [
                imagehash.phash(Image.fromarray(cv2.cvtColor(f, cv2.COLOR_BGR2RGB)))
                for f in (frame_one, frame_two)
            ]
            checked += 1
            if hashes[0] - hashes[1] > threshold:
                mismatched += 1
                if mismatched > threshold:
                    return 0.0
        return 1.0
    finally:
        one.release()
        two.release()


@METRICS.add
def compare_audios(first: str | None, second: str | None) -> float:
    """1 for two sounds that cannot be read (or are empty), 0 for one; else exp(-d), d the
    DTW distance of their normalised MFCCs over the alignment's length."""
    import numpy as np
    from fastdtw import fastdtw
    from scipy.spatial.distance import cosine

    if not first or not second:
        return 0.0
    with warnings.catch_warnings():
        # librosa's audio reading imports audioread, which imports aifc (deprecated in
        # Python 3.11, gone in 3.13): a warning of theirs, not a failure to read.
        warnings.simplefilter("ignore", DeprecationWarning)
        import librosa
        import librosa.core.audio  # noqa: F401 - its imports made under the filter
    sounds = []
    for path in (first, second):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                sounds.append(librosa.load(path))
        except Exception as error:  # noqa: BLE001 - a sound that cannot be read counts as none
            log.info("compare_audios: %s: %s", path, error)
            sounds.append((None, None))
    bad = [y is None or y.shape[0] == 0 for y, _ in sounds]
    if all(bad):
        return 1.0
    if any(bad):
        return 0.0
    try:
        features = [librosa.feature.mfcc(y=y, sr=rate) for y, rate in sounds]
    except Exception as error:  # noqa: BLE001 - OSWorld's scores a failed extraction 0
        log.info("compare_audios: MFCC: %s", error)
        return 0.0
    one, two = (librosa.util.normalize(f, axis=1) for f in features)
    distance, path = fastdtw(one.T, two.T, dist=cosine)
    per_step = distance / len(path) if len(path) else np.inf
    return float(np.exp(-per_step))
