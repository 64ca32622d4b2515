"""The getters of OSWorld's application domains: GIMP's and VLC's settings files, VLC's
status from its HTTP interface, the default video player, the desktop's wallpaper, and the
audio or background image of a slide. Each gives what OSWorld's of the same name gives (a
file copied into the task's cache, its local path; or a value), from this environment:
- gimp_config_file {file_name, dest}: ~/.config/GIMP/2.10/NAME (None when it is missing);
- vlc_config {dest}: ~/.config/vlc/vlcrc (raises when it is missing, as OSWorld's does on
  writing the None its controller gives);
- vlc_playing_info {dest}: /requests/status.xml from VLC's HTTP interface on the
  environment's port, with OSWorld's password (None when VLC answers an error);
- default_video_player: the program xdg-mime names most often for the video types OSWorld
  asks ("unknown" when none);
- vm_wallpaper {dest}: the picture GNOME's background setting names (an empty file when
  there is none);
- audio_in_slide / background_image_in_slide {ppt_file_path, slide_index, dest}: the first
  audio of the slide, or its background picture: extracted from the .pptx, or, when it
  links a file, that file.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import zipfile
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import httpx

from roundhouse.osworld.apps import VLC_CONFIG, VLC_PASSWORD
from roundhouse.osworld.env import OsworldEnv
from roundhouse.osworld.getter_paths import cache_name, local_path
from roundhouse.osworld.registry import Registry

Getter = Callable[[OsworldEnv, dict[str, Any]], Awaitable[Any]]
GETTERS: Registry[Getter] = Registry()
GIMP_CONFIG = ".config/GIMP/2.10"
HTTP_TIMEOUT = 10.0
# The video types OSWorld's getter asks xdg-mime about (video/<type>); its list names each
# twice but x-ogm+ogg, so each answer counts twice but that one's.
VIDEO_TYPES = (
    "3gp 3gpp 3gpp2 avi divx dv fli flv mp2t mp4 mp4v-es mpeg mpeg-system msvideo ogg "
    "quicktime vnd.divx vnd.mpegurl vnd.rn-realvideo webm x-anim x-avi x-flc x-fli x-flv "
    "x-m4v x-matroska x-mpeg x-mpeg-system x-mpeg2 x-ms-asf x-ms-asf-plugin x-ms-asx x-ms-wm "
    "x-ms-wmv x-ms-wmx x-ms-wvx x-msvideo x-nsv x-ogm x-ogm+ogg x-theora x-theora+ogg"
).split()
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELS = {"r": "http://schemas.openxmlformats.org/package/2006/relationships"}
BACKGROUND = "{http://schemas.openxmlformats.org/presentationml/2006/main}bgPr"
BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"


def _cached(env: OsworldEnv, source: Path, dest: str) -> str:

    target = env.cache / cache_name(dest)
    shutil.copyfile(source, target)
    return str(target)


@GETTERS.add
async def gimp_config_file(env: OsworldEnv, config: dict[str, Any]) -> Any:
    source = env.home / GIMP_CONFIG / str(config["file_name"])
    return _cached(env, source, str(config["dest"])) if source.is_file() else None


@GETTERS.add
async def vlc_config(env: OsworldEnv, config: dict[str, Any]) -> Any:
    source = env.home / VLC_CONFIG
    if not source.is_file():
        raise TypeError("VLC's vlcrc is not there: OSWorld's getter writes None and raises")
    return _cached(env, source, str(config["dest"]))


@GETTERS.add
async def vlc_playing_info(env: OsworldEnv, config: dict[str, Any]) -> Any:

    url = f"http://127.0.0.1:{env.vlc_port}/requests/status.xml"
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        answer = await http.get(url, auth=("", VLC_PASSWORD))
    if answer.status_code != 200:
        return None
    target = env.cache / cache_name(str(config["dest"]))
    target.write_bytes(answer.content)
    return str(target)


@GETTERS.add
async def default_video_player(env: OsworldEnv, config: dict[str, Any]) -> Any:
    async def ask(kind: str) -> str | None:
        try:
            done = await env.run(["xdg-mime", "query", "default", f"video/{kind}"])
        except (OSError, TimeoutError):
            return None
        return done.output or None

    answers = await asyncio.gather(*(ask(kind) for kind in VIDEO_TYPES))
    weights: Counter[str] = Counter()
    for kind, answer in zip(VIDEO_TYPES, answers, strict=True):
        if answer:
            weights[answer] += 1 if kind == "x-ogm+ogg" else 2
    return weights.most_common(1)[0][0] if weights else "unknown"


@GETTERS.add
async def vm_wallpaper(env: OsworldEnv, config: dict[str, Any]) -> Any:

    target = env.cache / cache_name(str(config["dest"]))
    got = await env.run(["gsettings", "get", "org.gnome.desktop.background", "picture-uri"])
    picture = Path(got.output.strip().replace("file://", "").replace("'", ""))
    if got.returncode == 0 and picture.is_file():
        shutil.copyfile(picture, target)
    else:
        target.write_bytes(b"")  # OSWorld's writes an empty file when it gets none
    return str(target)


@dataclass(frozen=True)
class _Slide:
    deck: Path  # the task's deck, copied to the cache
    number: int  # from 1, as the deck's parts are named
    dest: str  # the cache's name for a file the slide links to


def _slide_file(env: OsworldEnv, config: dict[str, Any]) -> _Slide:

    deck = local_path(env, str(config["ppt_file_path"]))
    local = env.cache / os.path.split(str(config["ppt_file_path"]))[-1]
    shutil.copyfile(deck, local)  # (a missing file raises, as OSWorld's does on None)
    return _Slide(local, int(config["slide_index"]) + 1, str(config["dest"]))


def _related_file(
    env: OsworldEnv,
    archive: zipfile.ZipFile,
    slide: _Slide,
    wanted: Callable[[dict[str, str]], bool],
) -> Any:
    """The file of the slide's first relationship `wanted` picks: one in the deck, extracted
    beside it; one it links to (file://), cached. None where the slide has no relationships
    or none is picked."""
    rels = f"ppt/slides/_rels/slide{slide.number}.xml.rels"
    if rels not in archive.namelist():
        return None
    for rel in ET.fromstring(archive.read(rels)).findall("r:Relationship", RELS):
        if wanted(rel.attrib):
            target = rel.attrib["Target"]
            if target.startswith(".."):
                inner = os.path.normpath(os.path.join("ppt/slides", target)).replace("\\", "/")
                archive.extract(inner, slide.deck.parent)
                return str(slide.deck.parent / inner)
            return _linked(env, target, slide.dest)
    return None


def _linked(env: OsworldEnv, target: str, dest: str) -> Any:
    if not target.startswith("file://"):
        raise AssertionError(target)

    source = local_path(env, target[7:])
    return _cached(env, source, dest) if source.is_file() else None


@GETTERS.add
async def audio_in_slide(env: OsworldEnv, config: dict[str, Any]) -> Any:
    slide = _slide_file(env, config)
    with zipfile.ZipFile(slide.deck) as archive:
        return _related_file(env, archive, slide, lambda rel: "audio" in rel["Type"])


@GETTERS.add
async def background_image_in_slide(env: OsworldEnv, config: dict[str, Any]) -> Any:
    slide = _slide_file(env, config)
    with zipfile.ZipFile(slide.deck) as archive:
        part = f"ppt/slides/slide{slide.number}.xml"
        if part not in archive.namelist():
            return None
        image = _background_image(ET.fromstring(archive.read(part)))
        if image is None:
            return None
        return _related_file(
            env, archive, slide, lambda rel: "image" in rel["Type"] and rel["Id"] == image
        )


def _background_image(slide: ET.Element) -> str | None:
    """The relationship id of the slide's background picture (None: it has none)."""
    for background in slide.iter(BACKGROUND):
        blip = next(background.iter(BLIP), None)
        image = blip.attrib.get(f"{{{R}}}embed") if blip is not None else None
        if image is not None:
            return image
    return None
