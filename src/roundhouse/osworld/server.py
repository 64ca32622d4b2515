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
import logging
import time
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from roundhouse.core.polling import TimedOut, until_async
from roundhouse.endpoints import TokenAuth
from roundhouse.osworld.env import OsworldEnv
from roundhouse.osworld.files import FileCache
from roundhouse.osworld.routes import (
    BadRequest,
    accessibility,
    activate,
    change_wallpaper,
    close,
    cursor_position,
    described,
    desktop_path,
    download_file,
    end_recording,
    execute,
    get_file,
    info,
    launch,
    list_directory,
    open_file,
    platform,
    run_bash_script,
    run_python,
    screen_size,
    screenshot,
    start_recording,
    terminal,
    upload,
    verified,
    wallpaper,
    window_size,
)
from roundhouse.osworld.server_state import ServerState
from roundhouse.osworld.steps import StepError

log = logging.getLogger(__name__)

START_WAIT = 30.0  # seconds for uvicorn to bind its socket and listen
Handler = Callable[[Request], Awaitable[Response]]


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


def _resetter(state: ServerState) -> Handler:
    async def reset(request: Request) -> Response:
        started = time.monotonic()
        fresh = await state.reset()
        seconds = round(time.monotonic() - started, 3)
        return JSONResponse({"status": "success", **described(state, fresh), "seconds": seconds})

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
