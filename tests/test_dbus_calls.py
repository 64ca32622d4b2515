"""SyncBus.call_all on a real dbus-daemon: a run of calls is sent in one go, handled in the
order sent, and every answer comes back in that order (Mutter's pointer events, one click's
four calls, rely on both)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbus_fast import Message
from dbus_fast.annotations import DBusStr
from dbus_fast.errors import DBusError
from dbus_fast.service import ServiceInterface, method

from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

INTERFACE = "dev.roundhouse.Test"
PATH = "/dev/roundhouse/Test"


class Recorder(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(INTERFACE)
        self.heard: list[str] = []

    @method()
    def Note(self, text: DBusStr) -> DBusStr:  # noqa: N802 (a D-Bus name)
        self.heard.append(text)
        return text.upper()

    @method()
    def Refuse(self, text: DBusStr) -> DBusStr:  # noqa: N802 (a D-Bus name)
        self.heard.append(text)
        raise DBusError("dev.roundhouse.Refused", f"not {text}")


@pytest.fixture
def bus(tmp_path: Path) -> Iterator[SyncBus]:
    daemon = subprocess.Popen(
        [
            "dbus-daemon",
            "--session",
            "--nofork",
            f"--address=unix:path={tmp_path / 'bus'}",
            "--print-address=1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert daemon.stdout is not None
        address = daemon.stdout.readline().strip()
        opened = SyncBus(address, timeout=5)
        try:
            yield opened
        finally:
            opened.close()
    finally:
        daemon.terminate()
        daemon.wait(10)
        if daemon.stdout is not None:
            daemon.stdout.close()


def _call(bus: SyncBus, member: str, text: str) -> Message:
    return Message(
        destination=bus.unique_name,
        path=PATH,
        interface=INTERFACE,
        member=member,
        signature="s",
        body=[text],
    )


def test_calls_sent_in_one_go_are_handled_and_answered_in_order(bus: SyncBus) -> None:
    recorder = Recorder()
    bus.export(PATH, recorder)
    words = [f"word {n}" for n in range(20)]
    answers = bus.call_all([_call(bus, "Note", word) for word in words])
    assert recorder.heard == words
    assert answers == [[word.upper()] for word in words]
    assert bus.call(bus.unique_name, PATH, INTERFACE, "Note", "s", ["one"]) == ["ONE"]


def test_an_error_answer_among_them_is_raised_and_the_rest_were_still_sent(
    bus: SyncBus,
) -> None:
    recorder = Recorder()
    bus.export(PATH, recorder)
    calls = [_call(bus, "Note", "a"), _call(bus, "Refuse", "b"), _call(bus, "Note", "c")]
    with pytest.raises(DBusCallError, match="not b"):
        bus.call_all(calls)
    assert recorder.heard == ["a", "b", "c"]
