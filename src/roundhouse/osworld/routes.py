"""The routes of `roundhouse serve --osworld` (server.py lists them), each answering as
OSWorld's VM server (desktop_env/server/main.py) answers, on the environment of the moment."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from roundhouse.core.polling import within_async
from roundhouse.osworld.a11y_xml import terminal_text
from roundhouse.osworld.env import CommandOutput, OsworldEnv
from roundhouse.osworld.getter_paths import local_path
from roundhouse.osworld.getters import directory_tree
from roundhouse.osworld.server_state import RECORDING, ServerState
from roundhouse.osworld.steps import StepError, download, open_path, window_matcher

log = logging.getLogger(__name__)

EXECUTE_TIMEOUT = 120.0
PYTHON_TIMEOUT = 30.0


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
    return JSONResponse(described(state, env))


def described(state: ServerState, env: OsworldEnv) -> dict[str, Any]:
    return {"display": env.desktop.display, "home": str(env.home),
            "devtools_port": env.devtools_port, "vlc_port": env.vlc_port,
            "resets": state.resets}  # fmt: skip
