"""A locker on a person's own wlroots desktop is found by its process: a known locker of
this user whose environment names this Wayland display. Over a /proc tree made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from roundhouse.devices.linux.display.wlroots.lockers import (
    INHIBIT,
    LOCKER_PROCESSES,
    SESSION_LOCK,
    locker_running,
    lockers,
)

USER = 1000
SESSION = {"WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": "/run/user/1000"}


def process(
    proc: Path,
    pid: int,
    name: str,
    env: dict[str, str] | None = None,
    uid: int = USER,
) -> Path:
    """A /proc/PID entry: its comm, status (real, effective, saved, fs uid) and environ;
    env None makes environ unreadable (a folder, as reading another's is refused)."""
    entry = proc / str(pid)
    entry.mkdir(parents=True)
    (entry / "comm").write_text(f"{name}\n")
    (entry / "status").write_text(f"Name:\t{name}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    if env is None:
        (entry / "environ").mkdir()
    else:
        (entry / "environ").write_bytes(b"".join(f"{k}={v}\0".encode() for k, v in env.items()))
    return entry


def running(proc: Path) -> str | None:
    return locker_running(SESSION, proc=proc, uid=USER)


@pytest.mark.parametrize("name", LOCKER_PROCESSES)
def test_a_known_locker_of_this_user_on_this_display_is_named(tmp_path: Path, name: str) -> None:
    process(tmp_path, 4242, name, {**SESSION, "HOME": "/home/person"})
    assert running(tmp_path) == (
        f"the screen is locked ({name} is running on this display, pid 4242)"
    )


def test_a_display_named_by_its_socket_path_is_the_same_display(tmp_path: Path) -> None:
    process(tmp_path, 7, "swaylock", {"WAYLAND_DISPLAY": "/run/user/1000/wayland-1"})
    assert running(tmp_path) == "the screen is locked (swaylock is running on this display, pid 7)"


@pytest.mark.parametrize(
    ("why", "name", "env", "uid"),
    [
        ("not a locker", "gedit", SESSION, USER),
        ("another user's", "swaylock", SESSION, USER + 1),
        ("another display", "swaylock", {**SESSION, "WAYLAND_DISPLAY": "wayland-2"}, USER),
        ("another runtime folder", "swaylock", {**SESSION, "XDG_RUNTIME_DIR": "/tmp/x"}, USER),
        ("its environment unreadable", "swaylock", None, USER),
    ],
)
def test_other_processes_are_skipped(
    tmp_path: Path, why: str, name: str, env: dict[str, str] | None, uid: int
) -> None:
    process(tmp_path, 10, name, env, uid)
    (tmp_path / "self").mkdir()  # not a process: skipped by its name
    assert running(tmp_path) is None, why


def test_one_locker_among_other_processes_is_found(tmp_path: Path) -> None:
    process(tmp_path, 10, "swaylock", SESSION, USER + 1)
    process(tmp_path, 11, "swaylock", None)
    process(tmp_path, 12, "sway", SESSION)
    process(tmp_path, 13, "gtklock", SESSION)
    assert running(tmp_path) == "the screen is locked (gtklock is running on this display, pid 13)"


def test_a_proc_that_cannot_be_listed_finds_no_locker(tmp_path: Path) -> None:
    assert running(tmp_path / "absent") is None


def test_a_persons_desktop_is_never_asked_for_the_session_lock() -> None:
    # Taking it there could refuse their locker, or unlock a session a dead locker left.
    persons = lockers({INHIBIT, SESSION_LOCK}, virtual=False)
    assert persons.processes and persons.probes == (INHIBIT,)
    assert lockers({SESSION_LOCK}, virtual=False).probes == ()
    assert "never asked for" in persons.route
    ours = lockers({INHIBIT, SESSION_LOCK}, virtual=True)
    assert not ours.processes and ours.probes == (INHIBIT, SESSION_LOCK)
    assert lockers({"wl_seat"}, virtual=True).route == "nothing (no lock protocol is offered)"
