"""The application getters (GIMP's and VLC's settings, VLC's status, slides' audio and
background, the wallpaper, the default video player) read what OSWorld's own read: theirs
ask a desktop served by `roundhouse serve --osworld`, ours a desktop of our own, both
given the same files and commands. A file a getter writes is compared by its bytes."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from roundhouse.osworld.env import OsworldDesktop, OsworldEnv
from roundhouse.osworld.getter_paths import local_path
from roundhouse.osworld.getters import GETTERS
from tests.osworld.conftest import HERE, run_theirs
from tests.osworld.slides_cases import deck
from tests.osworld.test_server import Served, start_server, stop_server

VLCRC = "[qt]\nqt-privacy-ask=0\n[core]\n#qt-bgcone=1\nqt-max-volume=200\n"
GIMPRC = '# GIMP gimprc\n(theme "Light")\n(undo-levels 100)\n'
SESSIONRC = '(session-info "toplevel")\n(hide-docks yes)\n'
MIMEAPPS = "[Default Applications]\nvideo/mp4=vlc.desktop\nvideo/webm=vlc.desktop\n"
WALLPAPER = 'gsettings set org.gnome.desktop.background picture-uri "file://$HOME/Pictures/w.png"'
SLIDES = "/home/user/Desktop/slides.pptx"


def png(color: str) -> dict[str, str]:
    data = io.BytesIO()
    Image.new("RGB", (16, 12), color).save(data, "PNG")
    return {"hex": data.getvalue().hex()}


def slides_with_media(folder: Path) -> dict[str, str]:
    """A .pptx whose first slide has an audio (embedded) and a background picture; its
    second slide links an audio file outside it."""
    path = Path(deck(folder, "media.pptx", slides=[["one"], ["two"]]))
    rels = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    p = "http://schemas.openxmlformats.org/presentationml/2006/main"
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    out = folder / "media2.pptx"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "ppt/slides/_rels/slide1.xml.rels":
                data = data.replace(b"</Relationships>", (
                    f'<Relationship Id="rIdA" Type="{rels}/audio" Target="../media/sound.wav"/>'
                    f'<Relationship Id="rIdB" Type="{rels}/image" Target="../media/back.png"/>'
                    "</Relationships>").encode())  # fmt: skip
            if item.filename == "ppt/slides/_rels/slide2.xml.rels":
                data = data.replace(
                    b"</Relationships>",
                    (
                        f'<Relationship Id="rIdC" Type="{rels}/audio" TargetMode="External" '
                        'Target="file:///home/user/Music/linked.wav"/></Relationships>'
                    ).encode(),
                )
            if item.filename == "ppt/slides/slide1.xml":
                data = data.replace(b"<p:cSld>", (
                    f'<p:cSld><p:bg xmlns:p="{p}"><p:bgPr><a:blipFill xmlns:a="{a}">'
                    f'<a:blip xmlns:r="{rels}" r:embed="rIdB"/></a:blipFill></p:bgPr></p:bg>'
                ).encode(), 1)  # fmt: skip
            target.writestr(item, data)
        target.writestr("ppt/media/sound.wav", b"RIFF....WAVEfmt fake audio")
        target.writestr("ppt/media/back.png", bytes.fromhex(png("green")["hex"]))
    return {"hex": out.read_bytes().hex()}


def cases(folder: Path) -> list[dict[str, Any]]:
    media = slides_with_media(folder)
    slide = lambda kind, index, dest: [kind, {"ppt_file_path": SLIDES, "slide_index": index,  # noqa: E731
                                              "dest": dest}]  # fmt: skip
    return [
        {"files": {}, "calls": [
            ["gimp_config_file", {"file_name": "gimprc", "dest": "gimprc"}],
            ["vm_wallpaper", {"dest": "wall.png"}], ["default_video_player", {}],
            slide("audio_in_slide", 0, "a.wav")]},
        {"files": {"/home/user/.config/GIMP/2.10/gimprc": GIMPRC,
                   "/home/user/.config/GIMP/2.10/sessionrc": SESSIONRC,
                   "/home/user/.config/vlc/vlcrc": VLCRC}, "calls": [
            ["gimp_config_file", {"file_name": "gimprc", "dest": "gimprc"}],
            ["gimp_config_file", {"file_name": "sessionrc", "dest": "sessionrc"}],
            ["gimp_config_file", {"file_name": "controllerrc", "dest": "c"}],
            ["vlc_config", {"dest": "vlcrc"}]]},
        {"files": {"/home/user/Pictures/w.png": png("red"),
                   "/home/user/.config/mimeapps.list": MIMEAPPS},
         "commands": [WALLPAPER], "calls": [
            ["vm_wallpaper", {"dest": "wall.png"}], ["default_video_player", {}]]},
        {"files": {SLIDES: media, "/home/user/Music/linked.wav": "linked audio"}, "calls": [
            slide("audio_in_slide", 0, "a.wav"), slide("audio_in_slide", 1, "b.wav"),
            slide("audio_in_slide", 5, "c.wav"), slide("background_image_in_slide", 0, "bg.png"),
            slide("background_image_in_slide", 1, "bg2.png"),
            slide("background_image_in_slide", 9, "bg3.png")]},
        {"files": {}, "commands": ["rm -f $HOME/Music/linked.wav"], "calls": [
            slide("audio_in_slide", 1, "b.wav"), ["vlc_playing_info", {"dest": "status.xml"}]]},
        {"files": {}, "calls": [slide(kind, index, f"{kind}{index}")
                                for kind in ("audio_in_slide", "background_image_in_slide")
                                for index in range(2, 9)]},
        {"files": {}, "calls": [["gimp_config_file", {"file_name": name, "dest": name}]
                                for name in ("menurc", "toolrc", "devicerc", "templaterc",
                                             "gimprc", "sessionrc", "../gimprc")]},
        *({"files": {"/home/user/.config/vlc/vlcrc": VLCRC * count},
           "calls": [["vlc_config", {"dest": f"vlcrc{count}"}]]} for count in range(2, 11)),
        *({"files": {"/home/user/.config/mimeapps.list": mime},
           "calls": [["default_video_player", {}]]} for mime in (
            "[Default Applications]\nvideo/x-matroska=gimp.desktop\n",
            "[Default Applications]\nvideo/x-ogm+ogg=a.desktop\nvideo/webm=b.desktop\n",
            "[Default Applications]\nvideo/x-ogm+ogg=a.desktop\n",
            "", "[Added Associations]\nvideo/mp4=vlc.desktop\n",
            "[Default Applications]\nvideo/mp4=thunderbird.desktop;vlc.desktop\n",
            "[Default Applications]\nvideo/avi=x.desktop\nvideo/flv=x.desktop\n"
            "video/mp4=y.desktop\n", "[Default Applications]\nvideo/ogg=a.desktop\n")),
        *({"files": {"/home/user/Pictures/w.png": png(color)}, "commands": [WALLPAPER],
           "calls": [["vm_wallpaper", {"dest": f"w-{color}.png"}]]}
          for color in ("blue", "white", "black", "yellow", "grey", "pink")),
        {"files": {}, "commands": ["gsettings set org.gnome.desktop.background picture-uri "
                                   "file:///nowhere.png"],
         "calls": [["vm_wallpaper", {"dest": "none.png"}]]},
        {"files": {}, "commands": ["gsettings reset org.gnome.desktop.background picture-uri"],
         "calls": [["vm_wallpaper", {"dest": "reset.png"}],
                   ["vlc_playing_info", {"dest": "status2.xml"}]]},
    ]  # fmt: skip


def test_app_getters_agree_with_osworlds(osworld_python: Path, tmp_path: Path) -> None:
    job_cases = cases(tmp_path)
    served: Served = start_server()
    try:
        job = {"server": served.url, "cache": str(tmp_path / "theirs"), "cases": job_cases}
        (tmp_path / "theirs").mkdir()
        theirs = run_theirs(osworld_python, HERE / "drive_getters.py", job, tmp_path)
        status = httpx.get(served.url + "/roundhouse/info", timeout=10).json()
    finally:
        stop_server(served)
    assert status["vlc_port"] > 0
    ours = asyncio.run(_ours(job_cases, tmp_path / "ours"))
    for number, (mine, osworlds) in enumerate(zip(ours, theirs, strict=True)):
        # Where theirs raises ours must raise, not with the same error (requests' and
        # httpx's differ), as for the metrics.
        assert _raised_alike(mine) == _raised_alike(osworlds), (
            f"case {number}: {json.dumps(job_cases[number])[:300]}: ours {mine}, {osworlds}"
        )
    assert any(answer.get("value") not in (None, "unknown") for case in ours for answer in case)


def _raised_alike(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"raised": True} if "raised" in answer else answer for answer in answers]


async def _ours(job_cases: list[dict[str, Any]], work: Path) -> list[list[dict[str, Any]]]:
    seen = []
    async with OsworldDesktop(work) as env:
        for case in job_cases:
            for path, content in case["files"].items():
                target = local_path(env, path)
                target.parent.mkdir(parents=True, exist_ok=True)
                data = content.encode() if isinstance(content, str) else bytes.fromhex(
                    content["hex"])  # fmt: skip
                target.write_bytes(data)
            for command in case.get("commands", []):
                await env.run(["/bin/sh", "-c", command])
            seen.append([await _answer(env, name, config) for name, config in case["calls"]])
    return seen


async def _answer(env: OsworldEnv, name: str, config: dict[str, Any]) -> dict[str, Any]:
    try:
        value = await GETTERS[name](env, config)
    except Exception as error:  # noqa: BLE001 - what raised is the answer
        return {"raised": type(error).__name__}
    if isinstance(value, str) and os.path.isfile(value):
        return {"value": {"file": hashlib.sha256(Path(value).read_bytes()).hexdigest()}}
    return {"value": value}


def address_bar_tree(app: str, *texts: str | None) -> str:
    st = "https://accessibility.ubuntu.example.org/ns/state"
    entries = "".join(
        f'<entry name="Address and search bar" st:focused="true">{t}</entry>' if t is not None
        else '<entry name="Address and search bar"/>' for t in texts
    )  # fmt: skip
    return (f'<desktop-frame xmlns:st="{st}"><application name="{app}"><frame name="x">'
            f"{entries}</frame></application></desktop-frame>")  # fmt: skip


def test_active_url_getter_agrees_with_osworlds(osworld_python: Path, tmp_path: Path) -> None:
    """On trees as serve --osworld writes them (Chromium named Google Chrome there)."""
    from roundhouse.osworld.getters_chrome import url_in_tree

    cases = [
        {"tree": address_bar_tree("Google Chrome", "example.org/a"), "config": {}},
        {"tree": address_bar_tree("Google Chrome", "example.org/a"),
         "config": {"goto_prefix": "http://"}},
        {"tree": address_bar_tree("Google Chrome", "a.org", "b.org"), "config": {}},
        {"tree": address_bar_tree("Google Chrome", "a.org", None), "config": {}},
        {"tree": address_bar_tree("Google Chrome", None), "config": {}},
        {"tree": address_bar_tree("Chromium", "example.org"), "config": {}},
        {"tree": address_bar_tree("Google Chrome"), "config": {}},
        {"tree": "<desktop-frame/>", "config": {}},
        {"tree": address_bar_tree("Google Chrome", "x.org/?q=1&amp;b=2"), "config": {}},
        {"tree": address_bar_tree("Google Chrome", "chrome://settings"),
         "config": {"goto_prefix": ""}},
    ]  # fmt: skip
    theirs = run_theirs(osworld_python, HERE / "drive_tree_getter.py", cases, tmp_path)
    ours = [{"value": url_in_tree(c["tree"], c["config"].get("goto_prefix", "https://"))}
            for c in cases]  # fmt: skip
    assert ours == theirs
    assert ours[0] == {"value": "https://example.org/a"}
