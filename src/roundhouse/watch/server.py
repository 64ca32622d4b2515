"""The watch page's server: Starlette on uvicorn, as `serve --http` and `serve --osworld` are.

    GET  /?t=TOKEN            the page (page.html: plain HTML and JS)
    GET  /frame.jpg?t=TOKEN   the newest frame
    WS   /frames?t=TOKEN      each new frame, as a binary JPEG message
    WS   /feed?t=TOKEN        the run's messages (feed.py), as JSON
    WS   /input?t=TOKEN       the person's input (control.py), as JSON
    GET  /files/...?t=TOKEN   a file the page links (a batch task's video)
    GET  /log/NAME?t=TOKEN    a file of the run's log folder (a step card's screenshot)
    POST /hand-back?t=TOKEN   the run goes on;  POST /stop?t=TOKEN: the round ends, cancelled

Every request carries the page's token (gate.py); off loopback, endpoints.TokenAuth as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from roundhouse.endpoints import ASGIApp, TokenAuth, is_loopback_host
from roundhouse.watch.control import PersonInput, RunControl, parse_input
from roundhouse.watch.feed import Feed
from roundhouse.watch.frames import FrameSource
from roundhouse.watch.gate import TOKEN_PARAMETER, UrlToken

log = logging.getLogger(__name__)

STARTUP_TIMEOUT = 10.0  # seconds uvicorn has to listen
SHUTDOWN_TIMEOUT = 3.0  # seconds it has to close the pages' sockets and stop


@dataclass
class Watched:
    """What the page shows and may drive."""

    frames: FrameSource | None  # None: no desktop to show (a batch's page: its tasks)
    feed: Feed = field(default_factory=Feed)
    person: PersonInput | None = None  # None: the page only watches
    run: RunControl | None = None  # None: no run in this process (hand back elsewhere)
    title: str = "roundhouse"
    files: dict[str, Path] = field(default_factory=dict)  # "files/...": what the page links


def page_html(title: str) -> str:
    page = resources.files("roundhouse.watch").joinpath("page.html").read_text("utf-8")
    return page.replace("{{title}}", _escape(title))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def make_app(watched: Watched, token: str, bearer: str | None = None) -> ASGIApp:
    """The page's ASGI app behind its URL token (and `bearer`, off loopback)."""

    async def page(_request: Request) -> Response:
        return HTMLResponse(page_html(watched.title), headers={"cache-control": "no-store"})

    async def frame(_request: Request) -> Response:
        if watched.frames is None:
            return Response("no desktop is watched here", status_code=404)
        latest = watched.frames.latest or await watched.frames.next()
        headers = {"x-frame": str(latest.number), "cache-control": "no-store"}
        return Response(latest.jpeg, media_type="image/jpeg", headers=headers)

    async def frames(socket: WebSocket) -> None:
        source = watched.frames

        async def send() -> None:
            if source is None:
                return
            async for shot in source.frames():
                await socket.send_bytes(shot.jpeg)

        await _while_open(socket, send())

    async def feed(socket: WebSocket) -> None:
        async def send() -> None:
            await socket.send_text(json.dumps(_hello(watched)))
            async for message in watched.feed.follow():
                await socket.send_text(json.dumps(message, default=str))

        await _while_open(socket, send())

    async def person_input(socket: WebSocket) -> None:
        await socket.accept()
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while True:
                message = parse_input(json.loads(await socket.receive_text()))
                if message is None or watched.person is None:
                    continue
                await watched.person.send(message)

    async def linked(request: Request) -> Response:
        path = watched.files.get(f"files/{request.path_params['name']}")
        if path is None or not path.is_file():
            return Response("no such file here", status_code=404)
        return FileResponse(path)

    async def logged(request: Request) -> Response:
        """A file of the run's log folder, by its plain name (a step card's screenshot)."""
        name, folder = request.path_params["name"], watched.feed.log_folder
        if folder is None or "/" in name or name.startswith(".") or not (folder / name).is_file():
            return Response("no such file here", status_code=404)
        return FileResponse(folder / name)

    async def hand_back(_request: Request) -> Response:
        handed = watched.run is not None and watched.run.hand_back.hand()
        return JSONResponse({"handed_back": handed})

    async def stop(_request: Request) -> Response:
        stopped = watched.run is not None and watched.run.stop()
        return JSONResponse({"stopped": stopped})

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/frame.jpg", frame),
            WebSocketRoute("/frames", frames),
            WebSocketRoute("/feed", feed),
            WebSocketRoute("/input", person_input),
            Route("/files/{name:path}", linked),
            Route("/log/{name}", logged),
            Route("/hand-back", hand_back, methods=["POST"]),
            Route("/stop", stop, methods=["POST"]),
        ]
    )
    gated: ASGIApp = UrlToken(app, token)
    return TokenAuth(gated, bearer) if bearer else gated


async def _while_open(socket: WebSocket, sending: Coroutine[Any, Any, None]) -> None:
    """Send until the page closes the socket (or the server shuts down, which closes it)."""
    await socket.accept()
    task = asyncio.ensure_future(sending)
    try:
        while (await socket.receive())["type"] != "websocket.disconnect":
            pass  # the page sends nothing here
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        task.cancel()
        with contextlib.suppress(
            asyncio.CancelledError, WebSocketDisconnect, RuntimeError, OSError
        ):
            await task


def _hello(watched: Watched) -> dict[str, object]:
    return {
        "kind": "hello",
        "title": watched.title,
        "screen": watched.frames is not None,
        "control": watched.person is not None,
        "run": watched.run is not None,
    }


def page_url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?{TOKEN_PARAMETER}={token}"


async def serve_watch(
    watched: Watched,
    token: str,
    host: str = "127.0.0.1",
    port: int = 0,
    bearer: str | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the page until cancelled; `ready(url)` once it listens (port 0: any free one)."""
    import uvicorn

    if not is_loopback_host(host) and not bearer:
        raise ValueError(f"refusing to serve the watch page on {host} without a bearer token")
    config = uvicorn.Config(
        make_app(watched, token, bearer),
        host=host,
        port=port,
        log_level="warning",
        ws="wsproto",
        lifespan="off",
        timeout_graceful_shutdown=int(SHUTDOWN_TIMEOUT) - 1,
    )
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve())
    try:
        async with asyncio.timeout(STARTUP_TIMEOUT):
            while not server.started and not serving.done():
                await asyncio.sleep(0.02)
        if serving.done():
            serving.result()  # its error
            raise RuntimeError("the watch server stopped before it listened")
        sockets = [s for srv in server.servers for s in srv.sockets]
        bound = int(sockets[0].getsockname()[1]) if sockets else port
        if ready is not None:
            ready(page_url(host, bound, token))
        await asyncio.shield(serving)  # cancelled: shut down below, not cut off
    finally:
        server.should_exit = True  # closes the pages' sockets, then stops
        if not serving.done():
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(serving), SHUTDOWN_TIMEOUT)
        if watched.frames is not None:
            await watched.frames.stop()
