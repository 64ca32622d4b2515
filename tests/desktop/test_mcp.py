"""The device tools over MCP, listed and called by the official MCP client, stdio and HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ImageContent
from tests.desktop.conftest import (
    QT_APP_TITLE,
    StartApp,
    gedit_argv,
    qt_app_argv,
    wait_for_window,
    wait_until,
    wait_until_async,
)

from roundhouse.cli.serve import engine_tools
from roundhouse.config import Settings
from roundhouse.core.commands import Command
from roundhouse.core.record import RoundRecord
from roundhouse.devices.base import DeviceLost, ToolRegistry
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry, person_tools
from roundhouse.devices.mcp import TOKEN_ENV, MCPConfigError
from roundhouse.devices.mcp.client import MCPConnectionError, MCPDispatcher
from roundhouse.devices.mcp.server import http_app

ROUNDHOUSE = str(Path(sys.executable).with_name("roundhouse"))


def served_registry(tools: DesktopTools) -> ToolRegistry:
    """What `roundhouse serve` serves: the desktop's tools, the shell's, the application list,
    doctor."""
    served = [*person_tools(tools), *engine_tools(Settings(), desktop=tools.desktop)]
    return desktop_registry(tools, extra=served)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepting(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def serve_http(desktop: Desktop, tmp_path: Path) -> Iterator[Any]:
    """serve_http(host, token=None) runs `roundhouse serve --http` on the test desktop."""
    started: list[subprocess.Popen[bytes]] = []

    def start(host: str, token: str | None = None, port: int | None = None) -> str:
        port = port or _free_port()
        env = {key: value for key, value in desktop.env.items() if key != TOKEN_ENV}
        if token is not None:
            env[TOKEN_ENV] = token
        # A user of the test's own: an app it launches on this (current) desktop keeps its
        # state there, not in the caller's HOME (GNOME Text Editor reopens its last session).
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env["HOME"] = str(home)
        log = (tmp_path / f"serve-{port}.log").open("wb")
        process = subprocess.Popen(
            [ROUNDHOUSE, "serve", "--http", f"{host}:{port}", "--desktop", "current"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        log.close()
        started.append(process)
        wait_until(lambda: _accepting(port) or process.poll() is not None, what="the server")
        assert process.poll() is None, (tmp_path / f"serve-{port}.log").read_text()
        return f"http://127.0.0.1:{port}/mcp"

    start.started = started  # type: ignore[attr-defined]  # the tests kill them
    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=10)


def _kill_server(serve_http: Any, url: str) -> None:
    """SIGKILL the newest server and wait until its port stops accepting: a restart on the
    same port must not race the old socket."""
    process = serve_http.started[-1]
    process.kill()
    process.wait(timeout=10)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    wait_until(lambda: not _accepting(port), what="the killed server's port to close")


def _bytes_received(port: int) -> int:
    """What the server on `port` has received over its open connections, as the kernel
    counts it (ss): a call has reached it once this grows."""
    listed = subprocess.run(
        ["ss", "-tinH", "state", "established", f"( sport = :{port} )"],
        capture_output=True, text=True, timeout=10, check=True,
    ).stdout  # fmt: skip
    return sum(int(n) for n in re.findall(r"bytes_received:(\d+)", listed))


def _stdio_server(desktop: Desktop) -> StdioServerParameters:
    return StdioServerParameters(
        command=ROUNDHOUSE, args=["serve", "--stdio", "--desktop", "current"], env=desktop.env
    )


async def _check_dispatcher(dispatcher: MCPDispatcher, local: ToolRegistry) -> None:
    """The remote tools are the local ones, and they act on the desktop."""
    specs = await dispatcher.tool_specs()
    assert [spec.model_dump() for spec in specs] == [spec.model_dump() for spec in local.specs()]

    listed, controls, missing = await dispatcher.execute(
        [
            Command(tool_name="list_windows", tool_type="data_collection"),
            Command(tool_name="get_controls", tool_type="data_collection"),
            Command(tool_name="click_control", parameters={"label": 99}),
        ]
    )
    assert listed.ok and QT_APP_TITLE in [window["title"] for window in listed.result]
    assert controls.ok and "Press me" in [c["name"] for c in controls.result["controls"]]
    assert not missing.ok and missing.error is not None
    assert "no control with label 99" in missing.error and "'Press me'" in missing.error

    (unknown,) = await dispatcher.execute([Command(tool_name="no_such_tool")])
    assert not unknown.ok and unknown.error is not None and "list_windows" in unknown.error


async def test_stdio_server_serves_the_desktop_tools(
    desktop: Desktop, launch: StartApp, tools: DesktopTools, monkeypatch: pytest.MonkeyPatch
) -> None:
    process = launch(desktop, qt_app_argv())
    wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    # Without an explicit env the server inherits our display and buses.
    for name in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"):
        if name in desktop.env:
            monkeypatch.setenv(name, desktop.env[name])
    server = MCPDispatcher.stdio(ROUNDHOUSE, ["serve", "--stdio", "--desktop", "current"])
    async with server as dispatcher:
        await _check_dispatcher(dispatcher, served_registry(tools))


async def test_official_client_lists_and_calls_over_stdio(desktop: Desktop) -> None:
    async with Client(_stdio_server(desktop), read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["get_controls"].annotations is not None
        assert tools["get_controls"].annotations.read_only_hint is True
        assert tools["click_control"].annotations is not None
        assert tools["click_control"].annotations.read_only_hint is False
        assert tools["scroll"].input_schema["properties"]["direction"]["enum"] == [
            "up", "down", "left", "right",
        ]  # fmt: skip
        shot = await client.call_tool("capture_desktop_screenshot", {})
        assert not shot.is_error
        images = [block for block in shot.content if isinstance(block, ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        bad = await client.call_tool("click_coordinates", {"x": "left"})
        assert bad.is_error


async def test_a_destructive_command_a_client_sends_is_refused_where_it_runs(
    desktop: Desktop, tmp_path: Path
) -> None:
    """The shell policy holds on the server: a client that is no agent of ours (the
    official client here) asking for `rm -rf` gets the policy's reason, and the folder
    stays, unless the server was started with --yes."""
    victim = tmp_path / "keep"
    victim.mkdir()
    (victim / "file").write_text("precious")
    remove = {"command": f"rm -rf {victim}"}
    async with Client(_stdio_server(desktop), read_timeout_seconds=60) as client:
        refused = await client.call_tool("run_shell", remove)
        assert refused.is_error
        [text] = [block.text for block in refused.content if hasattr(block, "text")]
        assert text.startswith("not run: the command removes files")
        assert "not interactive (pass --yes to allow it)" in text
        assert (victim / "file").read_text() == "precious"
        listed = await client.call_tool("run_shell", {"command": f"ls {victim}"})
        assert not listed.is_error  # only what the policy names is held back
    # Our own dispatcher reads the refusal back as what it is: not run, not a failure.
    async with MCPDispatcher.stdio(
        ROUNDHOUSE, ["serve", "--stdio", "--desktop", "current"], env=desktop.env
    ) as dispatcher:
        [skipped] = await dispatcher.execute([Command(tool_name="run_shell", parameters=remove)])
        assert skipped.status.value == "skipped" and "removes files" in (skipped.error or "")
    approving = StdioServerParameters(
        command=ROUNDHOUSE,
        args=["serve", "--stdio", "--desktop", "current", "--yes"],
        env=desktop.env,
    )
    async with Client(approving, read_timeout_seconds=60) as client:
        done = await client.call_tool("run_shell", remove)
        assert not done.is_error
    assert not victim.exists()


async def test_http_server_on_loopback(
    desktop: Desktop, launch: StartApp, tools: DesktopTools, serve_http: Any
) -> None:
    process = launch(desktop, qt_app_argv())
    wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    url = serve_http("127.0.0.1")
    async with MCPDispatcher.http(url, timeout=60) as dispatcher:
        await _check_dispatcher(dispatcher, served_registry(tools))


async def test_http_off_loopback_needs_the_token(
    desktop: Desktop, tmp_path: Path, serve_http: Any
) -> None:
    env = {key: value for key, value in desktop.env.items() if key != TOKEN_ENV}
    refused = subprocess.run(
        [ROUNDHOUSE, "serve", "--http", f"0.0.0.0:{_free_port()}", "--desktop", "current"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0 and TOKEN_ENV in refused.stderr

    url = serve_http("0.0.0.0", token="s3cret-token")
    request = urllib.request.Request(url, data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as rejected:
        urllib.request.urlopen(request, timeout=30)
    assert rejected.value.code == 401
    rejected.value.close()
    with pytest.raises(MCPConnectionError, match="cannot use MCP server"):
        async with MCPDispatcher.http(url, token="wrong", timeout=30):
            pass
    async with MCPDispatcher.http(url, token="s3cret-token", timeout=60) as dispatcher:
        (listed,) = await dispatcher.execute([Command(tool_name="list_windows")])
        assert listed.ok and isinstance(listed.result, list)


def test_http_app_refuses_a_public_bind_without_a_token() -> None:
    with pytest.raises(MCPConfigError, match=TOKEN_ENV):
        http_app(ToolRegistry(), host="0.0.0.0", token=None)
    with pytest.raises(MCPConfigError):
        http_app(ToolRegistry(), host="example.org", token="")
    http_app(ToolRegistry(), host="127.0.0.1", token=None)
    http_app(ToolRegistry(), host="::1", token=None)


async def test_a_server_restarted_within_the_window_is_used_again(
    desktop: Desktop, launch: StartApp, serve_http: Any
) -> None:
    process = launch(desktop, qt_app_argv())
    wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    url = serve_http("127.0.0.1")
    port = int(url.rsplit(":", 1)[1].split("/")[0])

    async def restart_after(seconds: float) -> None:
        await asyncio.sleep(seconds)
        await asyncio.to_thread(serve_http, "127.0.0.1", None, port)

    dispatcher = MCPDispatcher.http(url, timeout=30)
    # The default window is 5 s; a server process that starts Python and the desktop
    # tools on a loaded 2-core machine can take longer than that to come back.
    dispatcher.reconnect_window = 30.0
    async with dispatcher:
        await dispatcher.tool_specs()
        # The server is down when we look, and back 1.5 s later: looking is safe to
        # repeat, so the dispatcher reconnects and asks again.
        _kill_server(serve_http, url)
        restarting = asyncio.create_task(restart_after(1.5))
        (listed,) = await dispatcher.execute(
            [Command(tool_name="list_windows", tool_type="data_collection")]
        )
        await restarting
        assert listed.ok, listed.error
        assert QT_APP_TITLE in [window["title"] for window in listed.result]

        # The server dies while an action runs: its effect is unknown, and it is not
        # replayed; the agent is told to look again.
        before = _bytes_received(port)
        acting = asyncio.create_task(
            dispatcher.execute([Command(tool_name="wait", parameters={"seconds": 3})])
        )
        await wait_until_async(
            lambda: asyncio.to_thread(lambda: _bytes_received(port) > before),
            what="the server to receive the call",
        )
        assert not acting.done()
        _kill_server(serve_http, url)
        await asyncio.to_thread(serve_http, "127.0.0.1", None, port)
        (waited,) = await acting
        assert not waited.ok and waited.error is not None
        assert "effect unknown" in waited.error and "Look again" in waited.error
        # The new connection serves the next call.
        (again,) = await dispatcher.execute(
            [Command(tool_name="list_windows", tool_type="data_collection")]
        )
        assert again.ok, again.error


async def test_a_server_gone_for_good_is_a_lost_device(desktop: Desktop, serve_http: Any) -> None:
    url = serve_http("127.0.0.1")
    dispatcher = MCPDispatcher.http(url, timeout=30)
    dispatcher.reconnect_window = 1.0
    async with dispatcher:
        await dispatcher.tool_specs()
        _kill_server(serve_http, url)
        started = time.monotonic()
        with pytest.raises(DeviceLost, match="device connection lost") as lost:
            await dispatcher.execute(
                [Command(tool_name="list_windows", tool_type="data_collection")]
            )
        assert time.monotonic() - started < 10
        assert url in str(lost.value)


def test_a_round_whose_server_dies_ends_in_error_with_its_log_whole(
    desktop: Desktop, serve_http: Any, tmp_path: Path
) -> None:
    url = serve_http("127.0.0.1")
    logs = tmp_path / "logs"
    target = tmp_path / "out" / "notes.txt"
    request = f"Launch the text editor, write 'one two three' and save the document to {target}"
    run = subprocess.Popen(
        [ROUNDHOUSE, "run", request, "--mcp", url, "--logs", str(logs), "--task", "lost", "--yes"],
        env={key: value for key, value in desktop.env.items() if key != TOKEN_ENV},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        # Kill the server once the round has taken its first step.
        wait_until(
            lambda: any(path.stat().st_size for path in logs.glob("*/response.log")),
            timeout=60,
            what="the round's first step",
        )
        _kill_server(serve_http, url)
        killed = time.monotonic()
        output, _ = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    text = output.decode(errors="replace")
    assert run.returncode == 1, text
    assert time.monotonic() - killed < 15  # reconnect window (5 s) and the round's end
    assert "device connection lost" in text and "Traceback" not in text
    (folder,) = logs.glob("*/")
    rounds = [json.loads(line) for line in (folder / "rounds.jsonl").read_text().splitlines()]
    assert rounds[-1]["record_state"] == "failed"
    assert "device connection lost" in rounds[-1]["post_list"][-1]["message"]
    steps = [json.loads(line) for line in (folder / "response.log").read_text().splitlines()]
    assert steps and [step["session_step"] for step in steps] == list(range(1, len(steps) + 1))
    assert RoundRecord.model_validate(rounds[-1]).device_lost
    _kill_apps_on(desktop.display)

    # Once a server is back, resume runs the round again and it finishes.
    url = serve_http("127.0.0.1")
    resumed = subprocess.run(
        [ROUNDHOUSE, "resume", str(folder), "--mcp", url, "--yes"],
        env={key: value for key, value in desktop.env.items() if key != TOKEN_ENV},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=180,
    )
    said = resumed.stdout.decode(errors="replace") + resumed.stderr.decode(errors="replace")
    assert resumed.returncode == 0, said
    assert "0 rounds kept, 1 to run again" in said
    assert target.read_text().strip() == "one two three"
    latest = {}
    for line in (folder / "rounds.jsonl").read_text().splitlines():
        record = json.loads(line)
        latest[record["id"]] = record
    assert latest[0]["record_state"] == "failed"
    assert not RoundRecord.model_validate(latest[0]).to_run_again  # run again: not twice
    assert "its device was lost; run again as round 1" in latest[0]["post_list"][-1]["message"]
    assert latest[1]["record_state"] == "finished"
    steps = [json.loads(line) for line in (folder / "response.log").read_text().splitlines()]
    assert [step["session_step"] for step in steps] == list(range(1, len(steps) + 1))
    _kill_apps_on(desktop.display)


def _kill_apps_on(display: str) -> None:
    """The apps a killed server launched outlive it (a session of their own): end those on
    this test desktop, and only those."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        editor = b"gedit" in command or b"gnome-text-editor" in command  # whichever it is
        if f"DISPLAY={display}".encode() in environ and editor:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


async def test_concurrent_clients_over_http_all_get_answers_and_the_server_does_not_leak(
    desktop: Desktop, launch: StartApp, serve_http: Any, tmp_path: Path
) -> None:
    """20 MCP clients at once, each calling get_controls and capture_window_screenshot.
    `make faults` runs 200 calls per client (RH_SERVE_LOAD_CALLS); `make test` 10, to stay
    within CI's time. Latencies are written to serve-load.txt beside the test's files."""
    clients, calls = 20, int(os.environ.get("RH_SERVE_LOAD_CALLS", "10"))
    document = tmp_path / "load.txt"
    document.write_text("a line of text\n" * 30)
    editor = launch(desktop, gedit_argv(str(document)))
    window = wait_for_window(desktop, pid=editor.pid, title="load.txt")
    url = serve_http("127.0.0.1")
    server = serve_http.started[-1]

    async def client(number: int) -> list[float]:
        took = []
        shot = str(tmp_path / f"shot-{number}.png")
        async with MCPDispatcher.http(url, timeout=120) as dispatcher:
            for _ in range(calls):
                for command in (
                    Command(tool_name="get_controls", parameters={"window_id": window.xid}),
                    Command(
                        tool_name="capture_window_screenshot",
                        parameters={"window_id": window.xid, "path": shot},
                    ),
                ):
                    started = time.monotonic()
                    (result,) = await dispatcher.execute([command])
                    took.append(time.monotonic() - started)
                    assert result.ok, result.error
        return took

    await client(0)  # warm: the first read of a window fills caches
    before = _rss_kib(server.pid)
    latencies = sorted(
        t for took in await asyncio.gather(*map(client, range(clients))) for t in took
    )
    after = _rss_kib(server.pid)
    assert len(latencies) == clients * calls * 2  # every call answered, none failed
    p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    report = (
        f"serve load: {clients} clients x {calls} x (get_controls, capture_window_screenshot): "
        f"{len(latencies)} calls, p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
        f"server RSS {before // 1024} -> {after // 1024} MiB"
    )
    (tmp_path / "serve-load.txt").write_text(report + "\n")
    print(report)
    assert after - before < 50 * 1024, report
