"""The services a virtual desktop's session bus runs, found and ended by pid: the AT-SPI bus
(activated on the first org.a11y.Bus call) and what else the bus activates (dconf, a
terminal's server). They get re-parented to init, so they are found over D-Bus (the pid
owning a name) and by DBUS_STARTER_ADDRESS, which activation sets."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError

from roundhouse.devices.linux.system import procfs
from roundhouse.devices.linux.system.bus_daemon import bus_daemon_message
from roundhouse.devices.linux.system.procfs import ProcessRecord

DBUS_TIMEOUT = 5.0
SESSION_CONF = Path("/usr/share/dbus-1/session.conf")
# A file indexer is no part of an agent's desktop: activated by the bus, Tracker's miner runs
# with the bus's environment and crawls the user's HOME (~/ of the caller, whatever HOME the
# apps get), and Files (Nautilus 43) kept a folder "Loading…" for minutes while it did.
# Without it, Files and GTK's file chooser search the folders themselves.
NO_INDEXER = (
    "org.freedesktop.Tracker3.Miner.Files",
    "org.freedesktop.Tracker3.Miner.Extract",
    "org.gnome.Nautilus.Tracker3.Miner.Files",
    "org.gnome.Nautilus.Tracker3.Miner.Extract",
)

T = TypeVar("T")


class BusFailed(RuntimeError):
    """A call on a desktop's bus failed; the message says which and why."""


def session_bus_config(runtime_dir: str) -> list[str]:
    """dbus-daemon's arguments for a virtual desktop's session bus: the standard session
    configuration, less the file indexers (NO_INDEXER)."""
    if not SESSION_CONF.is_file():
        return ["--session"]
    denied = "".join(f'<deny send_destination="{name}"/>' for name in NO_INDEXER)
    config = Path(runtime_dir) / "session.conf"
    config.write_text(
        '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
        ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
        f"<busconfig><include>{SESSION_CONF}</include>"
        f'<policy context="default">{denied}</policy></busconfig>\n'
    )
    return [f"--config-file={config}"]


def run_async(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine from sync code, even when the caller already has an event loop."""

    async def runner() -> T:
        return await factory()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, runner()).result()


def start_session_services(bus_address: str, env: Mapping[str, str]) -> str:
    """Give the bus's activated services the desktop's environment (its display, which the
    bus did not have when it started before the display server), then activate the AT-SPI
    bus; its address."""
    return run_async(lambda: _start_services(bus_address, env))


async def _start_services(bus_address: str, env: Mapping[str, str]) -> str:
    bus = await asyncio.wait_for(MessageBus(bus_address=bus_address).connect(), DBUS_TIMEOUT)
    try:
        # What activation passes on must be text, and not the bus's own variables.
        passed = {
            key: value
            for key, value in env.items()
            if not key.startswith("DBUS_STARTER_") and "=" not in key and "\0" not in value
        }
        await _call(bus, bus_daemon_message("UpdateActivationEnvironment", "a{ss}", [passed]))
        (address,) = await _call(
            bus,
            Message(
                destination="org.a11y.Bus",
                path="/org/a11y/bus",
                interface="org.a11y.Bus",
                member="GetAddress",
            ),
        )
        # Qt apps started without our environment still expose their tree when this is set.
        await _call(
            bus,
            Message(
                destination="org.a11y.Bus",
                path="/org/a11y/bus",
                interface="org.freedesktop.DBus.Properties",
                member="Set",
                signature="ssv",
                body=["org.a11y.Status", "IsEnabled", Variant("b", True)],
            ),
        )
        return str(address)
    finally:
        bus.disconnect()


async def _call(bus: MessageBus, message: Message) -> list[Any]:
    reply = await asyncio.wait_for(bus.call(message), DBUS_TIMEOUT)
    if reply is None or reply.message_type is MessageType.ERROR:
        detail = reply.body if reply is not None else "no reply"
        raise BusFailed(f"D-Bus {message.member} failed: {reply and reply.error_name} {detail}")
    return list(reply.body)


def service_records(
    bus_address: str, a11y_address: str | None, exclude: Sequence[int] = ()
) -> list[ProcessRecord]:
    """The processes our buses started: the owners of the services' names, and whatever
    else activation started (DBUS_STARTER_ADDRESS is one of our buses); not `exclude`."""
    found: dict[int, ProcessRecord] = {}
    for name, pid in run_async(lambda: _service_pids(bus_address, a11y_address)).items():
        record = procfs_record(name, pid)
        if record is not None:
            found[pid] = record
    addresses = [bus_address] + ([a11y_address] if a11y_address else [])
    for record in _activated_by(addresses):
        found.setdefault(record.pid, record)
    return [record for pid, record in found.items() if pid not in exclude]


async def _name_pid(bus: MessageBus, name: str) -> int | None:
    reply = await asyncio.wait_for(
        bus.call(bus_daemon_message("GetConnectionUnixProcessID", "s", [name])), DBUS_TIMEOUT
    )
    if reply is None or reply.message_type is MessageType.ERROR:
        return None  # the name has no owner (the service never started)
    return int(reply.body[0])


async def _service_pids(bus_address: str, a11y_address: str | None) -> dict[str, int]:
    """Pids of the services our buses activated, found by their well-known names."""
    pids: dict[str, int] = {}
    wanted = [(bus_address, ("org.a11y.Bus", "ca.desrt.dconf"), "")]
    if a11y_address is not None:
        wanted.append((a11y_address, ("org.a11y.atspi.Registry", "org.freedesktop.DBus"), "a11y "))
    for address, names, prefix in wanted:
        with contextlib.suppress(OSError, TimeoutError, BusFailed, DBusFastError):
            bus = await asyncio.wait_for(MessageBus(bus_address=address).connect(), DBUS_TIMEOUT)
            try:
                for name in names:
                    pid = await _name_pid(bus, name)
                    if pid is not None:
                        pids[f"{prefix}{name}"] = pid
            finally:
                bus.disconnect()
    return pids


def procfs_record(name: str, pid: int) -> ProcessRecord | None:
    start = procfs.start_time(pid)
    return None if start is None else ProcessRecord(name, pid, start)


def _activated_by(addresses: Sequence[str]) -> list[ProcessRecord]:
    """Processes a bus of ours started: D-Bus activation sets DBUS_STARTER_ADDRESS."""
    wanted = {f"DBUS_STARTER_ADDRESS={address}".encode() for address in addresses}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if wanted.intersection(environ.split(b"\0")):
            record = procfs_record(_comm(int(entry.name)), int(entry.name))
            if record is not None:
                found.append(record)
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return f"pid {pid}"
