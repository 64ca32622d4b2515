"""The state of `roundhouse serve --osworld` (server.py): its one environment at a time,
replaced by /roundhouse/reset, and the screen recording under way."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.osworld.env import OsworldDesktop, OsworldEnv
from roundhouse.osworld.files import FileCache

log = logging.getLogger(__name__)

RECORDING = "recording.mp4"


class ServerState:
    """The desktop being served, replaced whole by a reset."""

    def __init__(self, files: FileCache | None = None, size: tuple[int, int] | None = None) -> None:
        self.files = files
        self.size = size
        self.root = Path(tempfile.mkdtemp(prefix="roundhouse-osworld-"))
        self.resets = 0
        self._desktop: OsworldDesktop | None = None
        self.env: OsworldEnv | None = None
        self.lock = asyncio.Lock()  # one reset at a time, and none during a request's use
        self._pointer: Display | None = None
        self._recording: subprocess.Popen[bytes] | None = None

    async def start(self) -> OsworldEnv:
        self.resets += 1
        work = self.root / f"desktop-{self.resets}"
        kwargs: dict[str, Any] = {"files": self.files}
        if self.size is not None:
            kwargs["size"] = self.size
        desktop = OsworldDesktop(work, **kwargs)
        self.env = await desktop.__aenter__()
        self._desktop = desktop
        self._pointer = Display(self.env.desktop.display)
        return self.env

    async def stop(self) -> None:
        self._stop_recording()
        if self._pointer is not None:
            self._pointer.close()
            self._pointer = None
        if self._desktop is not None:
            desktop, self._desktop, self.env = self._desktop, None, None
            await desktop.stop()
            shutil.rmtree(desktop.work, ignore_errors=True)

    async def reset(self) -> OsworldEnv:
        async with self.lock:
            await self.stop()
            return await self.start()

    async def close(self) -> None:
        await self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def current(self) -> OsworldEnv:
        if self.env is None:
            raise RuntimeError("the desktop is being replaced")
        return self.env

    def pointer(self) -> tuple[int, int, Image.Image | None, tuple[int, int]]:
        """Where the pointer is, and its image (None where XFixes gives none)."""
        x = self._pointer
        assert x is not None
        where = x.screen().root.query_pointer()
        try:
            x.xfixes_query_version()
            cursor = x.xfixes_get_cursor_image(x.screen().root)
        except Exception:  # noqa: BLE001 - no XFixes: the screenshot goes without a pointer
            return where.root_x, where.root_y, None, (0, 0)
        argb = b"".join(int(p).to_bytes(4, "little") for p in cursor.cursor_image)
        image = Image.frombuffer("RGBA", (cursor.width, cursor.height), argb, "raw", "BGRA", 0, 1)
        return where.root_x, where.root_y, image, (cursor.xhot, cursor.yhot)

    # recording: ffmpeg's x11grab of the whole screen, as OSWorld's server does

    def start_recording(self) -> str | None:
        env = self.current()
        if self._recording is not None and self._recording.poll() is None:
            return "Recording is already in progress."
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            return "recording needs ffmpeg, which is not installed"
        target = env.cache / RECORDING
        target.unlink(missing_ok=True)
        size = f"{env.desktop.width}x{env.desktop.height}"
        self._recording = subprocess.Popen(
            [ffmpeg, "-y", "-f", "x11grab", "-draw_mouse", "1", "-s", size, "-i",
             env.desktop.display, "-c:v", "libx264", "-r", "30", str(target)],
            env=env.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        return None

    def _stop_recording(self) -> Path | None:
        process, self._recording = self._recording, None
        if process is None or process.poll() is not None:
            return None
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        target = self.current().cache / RECORDING if self.env else None
        return target if target is not None and target.exists() else None
