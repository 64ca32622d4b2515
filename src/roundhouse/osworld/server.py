"""OSWorld's VM server (desktop_env/server/main.py) served from a roundhouse desktop:
`roundhouse serve --osworld`. OSWorld's own PythonController and SetupController (and so its
DesktopEnv, through provider.py) drive it as they drive a VM.

The routes, with the request and answer formats of OSWorld's server:
- GET  /screenshot: PNG of the screen with the pointer drawn in;
- GET  /accessibility: {"AT": XML} (a11y_xml.py); GET /terminal: {"output", "status"};
- POST /execute, /setup/execute {command, shell}: {status, output, error, returncode};
  /execute_with_verification (the same, then waits for a window or a command to succeed);
- POST /setup/launch {command, shell}: "... launched successfully";
- POST /setup/upload (form: file_path, file_data), /file (form: file_path): files in and out;
- POST /setup/open_file {path}, /setup/activate_window and /setup/close_window
  {window_name, strict, by_class}, /setup/download_file {url, path} (from the file cache:
  this server fetches nothing from the web);
- POST /screen_size, /window_size (form: app_class_name), /desktop_path, /wallpaper,
  /list_directory {path}; GET /platform ("Linux"), /cursor_position ([x, y]);
- POST /run_python {code}, /run_bash_script {script, timeout, working_dir};
- POST /start_recording, /end_recording (ffmpeg's x11grab, when ffmpeg is installed).
And one of ours: POST /roundhouse/reset replaces the desktop with a fresh one (a fresh home
too): what a VM's snapshot revert gives OSWorld, in about a second.

Paths and commands speak of /home/user as OSWorld's VM does; each is read for the desktop's
own home (places.py). Off loopback every request needs the token (endpoints.TokenAuth, as
`serve --http`): `Authorization: Bearer TOKEN`, or HTTP Basic auth with TOKEN as the
password, which `requests` sends from ~/.netrc (OSWorld's controllers set no header of their
own).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PIL import Image
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.core.polling import TimedOut, until_async, within_async
from roundhouse.endpoints import TokenAuth
from roundhouse.osworld.a11y_xml import terminal_text
from roundhouse.osworld.env import CommandOutput, OsworldDesktop, OsworldEnv
from roundhouse.osworld.files import FileCache
from roundhouse.osworld.getter_paths import local_path
from roundhouse.osworld.getters import directory_tree
from roundhouse.osworld.steps import StepError, download, open_path, window_matcher

log = logging.getLogger(__name__)

EXECUTE_TIMEOUT = 120.0
START_WAIT = 30.0  # seconds for uvicorn to bind its socket and listen
PYTHON_TIMEOUT = 30.0
RECORDING = "recording.mp4"
Handler = Callable[[Request], Awaitable[Response]]


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


# ---------------------------------------------------------------- the routes


def make_app(state: ServerState, token: str | None = None) -> ASGIApp:
    routes = [
        Route("/screenshot", _handler(state, screenshot), methods=["GET"]),
        Route("/accessibility", _handler(state, accessibility), methods=["GET"]),
        Route("/terminal", _handler(state, terminal), methods=["GET"]),
        Route("/execute", _handler(state, execute), methods=["POST"]),
        Route("/setup/execute", _handler(state, execute), methods=["POST"]),
        Route("/execute_with_verification", _handler(state, verified), methods=["POST"]),
        Route("/setup/execute_with_verification", _handler(state, verified), methods=["POST"]),
        Route("/setup/launch", _handler(state, launch), methods=["POST"]),
        Route("/setup/upload", _handler(state, upload), methods=["POST"]),
        Route("/file", _handler(state, get_file), methods=["POST"]),
        Route("/setup/open_file", _handler(state, open_file), methods=["POST"]),
        Route("/setup/activate_window", _handler(state, activate), methods=["POST"]),
        Route("/setup/close_window", _handler(state, close), methods=["POST"]),
        Route("/setup/download_file", _handler(state, download_file), methods=["POST"]),
        Route("/setup/change_wallpaper", _handler(state, change_wallpaper), methods=["POST"]),
        Route("/screen_size", _handler(state, screen_size), methods=["POST"]),
        Route("/window_size", _handler(state, window_size), methods=["POST"]),
        Route("/desktop_path", _handler(state, desktop_path), methods=["POST"]),
        Route("/wallpaper", _handler(state, wallpaper), methods=["POST"]),
        Route("/list_directory", _handler(state, list_directory), methods=["POST"]),
        Route("/platform", _handler(state, platform), methods=["GET"]),
        Route("/cursor_position", _handler(state, cursor_position), methods=["GET"]),
        Route("/run_python", _handler(state, run_python), methods=["POST"]),
        Route("/run_bash_script", _handler(state, run_bash_script), methods=["POST"]),
        Route("/start_recording", _handler(state, start_recording), methods=["POST"]),
        Route("/end_recording", _handler(state, end_recording), methods=["POST"]),
        Route("/roundhouse/reset", _resetter(state), methods=["POST"]),
        Route("/roundhouse/info", _handler(state, info), methods=["GET"]),
    ]
    app: ASGIApp = Starlette(routes=routes)
    return TokenAuth(app, token) if token else app


Route_ = Callable[[ServerState, OsworldEnv, Request], Awaitable[Response]]


def _handler(state: ServerState, route: Route_) -> Handler:
    async def handle(request: Request) -> Response:
        async with state.lock:  # not while the desktop is being replaced
            env = state.current()
        try:
            return await route(state, env, request)
        except BadRequest as error:
            return JSONResponse({"status": "error", "message": str(error)}, status_code=400)
        except (StepError, OSError, TimeoutError, ValueError) as error:
            return JSONResponse({"status": "error", "message": str(error)}, status_code=500)

    return handle


class BadRequest(ValueError):
    """The request lacks what the route needs; the message says what."""


async def _json(request: Request) -> dict[str, Any]:
    try:
        data = await request.json()
    except ValueError:
        raise BadRequest("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body is not a JSON object")
    return data


async def screenshot(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    def shoot() -> bytes:
        image = env.display.screen.desktop().convert("RGBA")
        x, y, cursor, (hot_x, hot_y) = state.pointer()
        if cursor is not None:
            image.alpha_composite(cursor, (max(x - hot_x, 0), max(y - hot_y, 0)))
        out = io.BytesIO()
        image.convert("RGB").save(out, "PNG", compress_level=1)
        return out.getvalue()

    return Response(await asyncio.to_thread(shoot), media_type="image/png")


async def accessibility(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    return JSONResponse({"AT": await env.accessibility_xml()})


async def terminal(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    output = terminal_text(await env.accessibility_xml())
    return JSONResponse({"output": output, "status": "success"})


async def _run(env: OsworldEnv, data: dict[str, Any], timeout: float) -> CommandOutput:
    shell = bool(data.get("shell", False))
    command = data.get("command", "" if shell else [])
    if not command:
        raise BadRequest("no command")
    try:
        return await env.run(env.command(command, shell), timeout)
    except FileNotFoundError as error:
        raise StepError(f"[Errno 2] No such file or directory: {error.filename!r}") from None


async def execute(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    result = await _run(env, await _json(request), EXECUTE_TIMEOUT)
    return JSONResponse(
        {"status": "success", "output": result.output, "error": result.error,
         "returncode": result.returncode}
    )  # fmt: skip


async def verified(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    result = await _run(env, data, EXECUTE_TIMEOUT)
    answer: dict[str, Any] = {"output": result.output, "error": result.error,
                              "returncode": result.returncode}  # fmt: skip
    check = data.get("verification") or {}
    if not check:
        return JSONResponse({"status": "success", **answer})
    wait = float(data.get("max_wait_time", 10))
    interval = float(data.get("check_interval", 1))
    started = time.monotonic()

    async def verified() -> bool:
        ok = True
        if "window_exists" in check:
            name = str(check["window_exists"]).lower()
            windows = await asyncio.to_thread(env.display.windows.list_windows)
            ok = any(name in w.title.lower() for w in windows)
        if ok and "command_success" in check:
            try:
                probe = await env.run(env.command(str(check["command_success"]), True), 5.0)
                ok = probe.returncode == 0
            except (OSError, TimeoutError):
                ok = False
        return ok

    if await within_async(verified, wait, every=interval):
        waited = time.monotonic() - started
        return JSONResponse(
            {"status": "success", **answer, "verification": "passed", "wait_time": waited}
        )
    return JSONResponse(
        {"status": "verification_failed", **answer, "verification": "failed",
         "wait_time": wait}, status_code=500,
    )  # fmt: skip


async def launch(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    shell = bool(data.get("shell", False))
    command = data.get("command", "" if shell else [])
    if not command:
        raise BadRequest("no command")
    argv = env.command(command, shell)
    try:
        env.spawn(argv)
    except FileNotFoundError as error:
        raise StepError(f"[Errno 2] No such file or directory: {error.filename!r}") from None
    shown = command if shell else " ".join(command if isinstance(command, list) else [command])
    return PlainTextResponse(f"{shown} launched successfully")


async def upload(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    form = await request.form()
    path, data = form.get("file_path"), form.get("file_data")
    if not isinstance(path, str) or data is None or isinstance(data, str):
        return JSONResponse({"error": "file_path and file_data are required"}, status_code=400)
    target = local_path(env, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(await data.read())
    return PlainTextResponse(f"File Uploaded: {target.stat().st_size} bytes")


async def get_file(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    form = await request.form()
    path = form.get("file_path")
    if not isinstance(path, str):
        return JSONResponse({"error": "file_path is required"}, status_code=400)
    target = local_path(env, os.path.expandvars(path))
    if not target.is_file():
        return JSONResponse({"error": "File not found"}, status_code=404)
    return FileResponse(target, filename=target.name)


async def open_file(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    if not data.get("path"):
        return PlainTextResponse("Path not supplied!", status_code=400)
    await open_path(env, {"path": str(data["path"])})
    return PlainTextResponse("File opened and window activated successfully")


async def activate(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    window = await _window(env, await _json(request))
    if window is not None:
        await env.display.windows.activate(window)
    return PlainTextResponse("Window activated successfully")


async def close(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    window = await _window(env, await _json(request))
    if window is not None:
        await env.display.windows.close_window(window)
    return PlainTextResponse("Window closed successfully.")


async def _window(env: OsworldEnv, data: dict[str, Any]) -> int | None:
    """The window wmctrl would pick, or None (wmctrl's miss is not an error to OSWorld)."""
    if not data.get("window_name"):
        raise BadRequest("window_name required")
    matches = window_matcher(
        str(data["window_name"]), bool(data.get("strict")), bool(data.get("by_class"))
    )
    windows = await asyncio.to_thread(env.display.windows.list_windows)
    return next((w.xid for w in windows if matches(w)), None)


async def download_file(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    if not data.get("url") or not data.get("path"):
        return PlainTextResponse("Path or URL not supplied!", status_code=400)
    await download(env, {"files": [{"url": data["url"], "path": data["path"]}]})
    size = local_path(env, str(data["path"])).stat().st_size
    return PlainTextResponse(f"File downloaded successfully: {size} bytes")


async def change_wallpaper(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    if not data.get("path"):
        return PlainTextResponse("Path not supplied!", status_code=400)
    path = local_path(env, str(data["path"]))
    if not path.exists():
        return PlainTextResponse(f"File not found: {path}", status_code=404)
    await env.run(["gsettings", "set", "org.gnome.desktop.background", "picture-uri",
                   f"file://{path}"])  # fmt: skip
    return PlainTextResponse("Wallpaper changed successfully")


async def screen_size(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    return JSONResponse({"width": env.desktop.width, "height": env.desktop.height})


async def window_size(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    form = await request.form()
    name = form.get("app_class_name")
    if not isinstance(name, str):
        return JSONResponse({"error": "app_class_name is required"}, status_code=400)
    for window in await asyncio.to_thread(env.display.windows.list_windows):
        if window.application.lower() == name.lower():
            return JSONResponse({"width": window.rect.width, "height": window.rect.height})
    return JSONResponse(None)


async def desktop_path(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    folder = env.home / "Desktop"
    if not folder.exists():
        return JSONResponse(
            {"error": "Unsupported operating system or desktop path not found"}, status_code=404
        )
    return JSONResponse({"desktop_path": str(folder)})


async def wallpaper(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    got = await env.run(["gsettings", "get", "org.gnome.desktop.background", "picture-uri"])
    path = Path(got.output.strip().replace("file://", "").replace("'", ""))
    if got.returncode != 0 or not path.is_file():
        return PlainTextResponse("Wallpaper file not found", status_code=404)
    return FileResponse(path, media_type="image/png")


async def list_directory(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    if "path" not in data:
        return JSONResponse({"error": "Missing 'path' parameter"}, status_code=400)
    start = local_path(env, str(data["path"]))
    if not start.is_dir():
        return JSONResponse({"error": "The provided path is not a directory"}, status_code=400)
    return JSONResponse({"directory_tree": directory_tree(start, env.places.osworld(str(start)))})


async def platform(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    return PlainTextResponse("Linux")


async def cursor_position(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    x, y, _, _ = await asyncio.to_thread(state.pointer)
    return JSONResponse([x, y])


async def run_python(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    code = data.get("code")
    if not code:
        return JSONResponse({"status": "error", "message": "Code not supplied!"}, status_code=400)
    script = env.cache / f"python_exec_{os.urandom(8).hex()}.py"
    script.write_text(str(code), encoding="utf-8")
    try:
        result = await env.run(env.command(["python3", str(script)], False), PYTHON_TIMEOUT)
    except TimeoutError:
        return JSONResponse(
            {"status": "error", "message": "Execution timeout: Code took too long to execute",
             "error": "TimeoutExpired", "need_more": False, "output": None}, status_code=500,
        )  # fmt: skip
    finally:
        script.unlink(missing_ok=True)
    error = result.error
    if result.returncode != 0 and not error:
        error = f"Process exited with code {result.returncode}"
    message = "\n".join(part for part in (result.output, error) if part)
    return JSONResponse(
        {"status": "success" if result.returncode == 0 else "error", "message": message,
         "need_more": False, "output": result.output, "error": error,
         "return_code": result.returncode}
    )  # fmt: skip


async def run_bash_script(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    data = await _json(request)
    script = data.get("script")
    failed = {"status": "error", "error": "", "returncode": -1}
    if not script:
        return JSONResponse({**failed, "output": "Script not supplied!"}, status_code=400)
    folder = local_path(env, str(data["working_dir"])) if data.get("working_dir") else env.home
    if not folder.exists():
        output = f"Working directory does not exist: {data['working_dir']}"
        return JSONResponse({**failed, "output": output}, status_code=400)
    text = str(script) if "#!/bin/bash" in str(script) else "#!/bin/bash\n\n" + str(script)
    timeout = float(data.get("timeout", 100))
    argv = ["/bin/bash", "-c", f"{text}\n", "bash"]
    try:
        result = await env.run(argv, timeout, cwd=folder, merge_stderr=True)
    except TimeoutError:
        output = f"Script execution timed out after {timeout:g} seconds"
        return JSONResponse({**failed, "output": output}, status_code=500)
    return JSONResponse(
        {"status": "success" if result.returncode == 0 else "error",
         "output": result.output, "error": "", "returncode": result.returncode}
    )  # fmt: skip


async def start_recording(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    problem = await asyncio.to_thread(state.start_recording)
    if problem is not None:
        return JSONResponse({"status": "error", "message": problem}, status_code=500)
    return JSONResponse({"status": "success", "message": "Started recording successfully."})


async def end_recording(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    path = await asyncio.to_thread(state._stop_recording)
    if path is None:
        message = "No recording in progress to stop."
        return JSONResponse({"status": "error", "message": message}, status_code=400)
    return FileResponse(path, filename=RECORDING)


async def info(state: ServerState, env: OsworldEnv, request: Request) -> Response:
    """What a harness needs to know of the desktop served now (provider.py asks it)."""
    return JSONResponse(_described(state, env))


def _described(state: ServerState, env: OsworldEnv) -> dict[str, Any]:
    return {"display": env.desktop.display, "home": str(env.home),
            "devtools_port": env.devtools_port, "vlc_port": env.vlc_port,
            "resets": state.resets}  # fmt: skip


def _resetter(state: ServerState) -> Handler:
    async def reset(request: Request) -> Response:
        started = time.monotonic()
        fresh = await state.reset()
        seconds = round(time.monotonic() - started, 3)
        return JSONResponse({"status": "success", **_described(state, fresh), "seconds": seconds})

    return reset


async def serve(
    host: str, port: int, token: str | None, files: FileCache | None = None,
    ready: Callable[[int], None] | None = None,
) -> None:  # fmt: skip
    """Serve a fresh desktop until cancelled; `ready(port)` is called once it listens."""
    import uvicorn

    state = ServerState(files)
    await state.start()
    try:
        config = uvicorn.Config(make_app(state, token), host=host, port=port, log_level="warning")
        server = uvicorn.Server(config)
        serving = asyncio.ensure_future(server.serve())
        try:
            await until_async(
                lambda: server.started or serving.done(), START_WAIT, "the server did not listen"
            )
        except TimedOut:
            serving.cancel()
            raise
        if server.started and ready is not None:
            sockets = [s for srv in server.servers for s in srv.sockets]
            ready(int(sockets[0].getsockname()[1]) if sockets else port)
        await serving
    finally:
        await state.close()
