"""Which processes a stopping desktop ends, decided on fabricated process tables.

The shapes are the real ones: LibreOffice's oosplash with its soffice.bin child, Chromium
with zygotes and renderers whose environment reads empty, apps started from a user's
shell, a second desktop side by side, and the process that stops the desktop.
"""

from __future__ import annotations

import os

import pytest

from roundhouse.devices.linux.desktops import reaper
from roundhouse.devices.linux.desktops.reaper import (
    TAG_ENV,
    DesktopReaper,
    Marks,
    belonging,
    new_tag,
    protected,
    sessions_led,
    x_client_pids,
)
from roundhouse.devices.linux.desktops.session import x11_env
from roundhouse.devices.linux.system import procfs
from roundhouse.devices.linux.system.procfs import Proc, ProcessRecord, environ_value, parse_stat

MINE, OTHER = "tag-of-this-desktop", "tag-of-another-desktop"
ME = 500  # the process stopping the desktop


def proc(pid: int, ppid: int, sid: int | None = None, tag: str | None = None) -> Proc:
    return Proc(
        pid=pid, ppid=ppid, sid=pid if sid is None else sid, start=pid * 10, name=f"p{pid}", tag=tag
    )


def table(*procs: Proc) -> dict[int, Proc]:
    return {p.pid: p for p in procs}


# init, kthreadd and a kernel thread; a login shell (session 400) running us (500) and the
# user's own editor (450); this desktop's Xvfb (600, a child of ours, its own session).
BASE = (
    proc(1, 0, sid=1),
    proc(2, 0, sid=0),
    proc(3, 2, sid=0),
    proc(400, 1),
    proc(450, 400, sid=400),
    proc(ME, 400, sid=400),
    proc(600, ME, tag=MINE),
)
XVFB = ProcessRecord("Xvfb", 600, 6000)


def chosen(procs: tuple[Proc, ...], marks: Marks) -> set[int]:
    snapshot = table(*BASE, *procs)
    return set(belonging(snapshot, marks, protected(snapshot, ME)))


def test_libreoffice_is_found_by_its_tag_with_its_soffice_bin() -> None:
    office = (proc(700, ME, tag=MINE), proc(701, 700, sid=700, tag=MINE))
    assert chosen(office, Marks(tag=MINE)) == {600, 700, 701}


def test_chromium_helpers_with_an_unreadable_environment_come_with_the_browser() -> None:
    # The browser (800) is a client of the X server; its zygote (801) and renderers
    # (802, 803) read as untagged, like the browser itself.
    chromium = (
        proc(800, ME),
        proc(801, 800, sid=800),
        proc(802, 801, sid=800),
        proc(803, 801, sid=800),
    )
    assert chosen(chromium, Marks(tag=MINE, x_clients=frozenset({800}))) >= {
        800,
        801,
        802,
        803,
    }
    # Without the X server's word there is nothing to go by: they are left alone.
    assert not chosen(chromium, Marks(tag=MINE)) & {800, 801, 802, 803}


def test_helpers_re_parented_to_init_stay_in_the_session_of_their_app() -> None:
    orphans = (proc(700, ME, tag=MINE), proc(710, 1, sid=700), proc(711, 710, sid=700))
    assert chosen(orphans, Marks(tag=MINE)) >= {700, 710, 711}
    # Once the leader is gone, a session found by an earlier pass still counts.
    leaderless = (proc(710, 1, sid=700), proc(711, 710, sid=700))
    assert chosen(leaderless, Marks(tag=MINE)) == {600}
    assert chosen(leaderless, Marks(tag=MINE, sessions=frozenset({700}))) == {600, 710, 711}


def test_an_app_started_from_the_users_shell_goes_but_the_shell_stays() -> None:
    # `DISPLAY=:3 chromium &` from the login shell: an X client in the user's session.
    started_by_user = (proc(820, 400, sid=400), proc(821, 820, sid=400))
    found = chosen(started_by_user, Marks(tag=MINE, x_clients=frozenset({820})))
    assert {820, 821} <= found
    assert not found & {400, 450}


def test_the_user_session_is_never_taken_whole_even_when_its_leader_is_tagged() -> None:
    # We run in a terminal on this desktop: its shell (400) is tagged and leads our
    # session; it and we are spared, and so is the untagged program beside us (450).
    procs = (
        proc(1, 0, sid=1),
        proc(2, 0, sid=0),
        proc(400, 1, tag=MINE),
        proc(450, 400, sid=400),
        proc(460, 400, sid=400, tag=MINE),
        proc(ME, 400, sid=400, tag=MINE),
    )
    snapshot = table(*procs)
    marks = Marks(tag=MINE, x_clients=frozenset({400, ME}))
    assert belonging(snapshot, marks, protected(snapshot, ME)) == {460}
    assert belonging(snapshot, marks, protected(snapshot, 450)) == {460, ME}


def test_another_desktops_processes_are_spared_even_below_ours() -> None:
    side_by_side = (
        proc(900, ME, tag=OTHER),  # the other desktop's Xvfb, also a child of ours
        proc(910, 900, tag=OTHER),
        proc(700, ME, tag=MINE),
        proc(920, 700, tag=OTHER),  # an app of ours started a desktop of its own
        proc(921, 920, tag=OTHER),
    )
    found = chosen(side_by_side, Marks(tag=MINE, x_clients=frozenset({910})))
    assert found == {600, 700}


def test_own_processes_are_roots_only_while_their_pid_is_theirs() -> None:
    # openbox (610) started an app from its menu (611) that lost the tag on the way.
    procs = (proc(610, ME), proc(611, 610, sid=610))
    openbox = ProcessRecord("openbox", 610, 6100)
    assert chosen(procs, Marks(tag=MINE, roots=frozenset({openbox}))) == {600, 610, 611}
    recycled = ProcessRecord("openbox", 610, 1)
    assert chosen(procs, Marks(tag=MINE, roots=frozenset({recycled}))) == {600}
    # The desktop's own processes are its own whatever their environment says.
    assert chosen((), Marks(tag=OTHER, roots=frozenset({XVFB}))) == {600}


def test_a_desktop_without_a_tag_never_takes_tagged_processes() -> None:
    # An old state file has no tag: only untagged processes can be its.
    procs = (proc(700, ME, tag=OTHER), proc(800, ME))
    found = chosen(procs, Marks(tag=None, x_clients=frozenset({700, 800})))
    assert found == {800}


def test_never_ourselves_our_ancestors_init_or_the_kernel() -> None:
    marks = Marks(tag=MINE, x_clients=frozenset({0, 1, 2, 3, 400, ME}))
    assert chosen((), marks) == {600}
    assert protected(table(*BASE), ME) == {0, 1, 2, ME, 400}


def test_sessions_led_only_counts_leaders() -> None:
    snapshot = table(*BASE, proc(700, ME), proc(701, 700, sid=700))
    assert sessions_led(snapshot, [600, 700, 701, 999]) == {600, 700}


def test_parse_stat_reads_names_with_spaces_and_parentheses() -> None:
    # pid (comm) state ppid pgrp session tty tpgid flags, 12 counters, starttime, ...
    line = "4242 (Web Content (x)) S 4200 4242 4200 0 -1 4194560 " + " ".join(["0"] * 12)
    line += " 987654 1000 100"
    stat = parse_stat(line)
    assert stat is not None
    assert (stat.name, stat.state, stat.ppid, stat.sid, stat.start) == (
        "Web Content (x)",
        "S",
        4200,
        4200,
        987654,
    )
    assert parse_stat("garbage") is None
    assert parse_stat("1 (init) S 0") is None


def test_environ_value() -> None:
    block = b"HOME=/root\0RH_DESKTOP_TAG=abc\0RH_DESKTOP_TAG_X=no\0"
    assert environ_value(block, "RH_DESKTOP_TAG") == "abc"
    assert environ_value(block, "DISPLAY") is None
    # Chromium's helpers: the environment's memory holds its command line now.
    assert environ_value(b"/usr/lib/chromium/chromium --type=renderer", "RH_DESKTOP_TAG") is None


def test_a_virtual_desktops_environment_carries_its_own_tag_only() -> None:
    # Started from a terminal on another desktop: that desktop's tag is not passed on.
    inherited = {"PATH": "/usr/bin", TAG_ENV: OTHER}
    virtual = x11_env(":3", None, inherited, runtime_dir="/tmp/rt", tag=MINE)
    assert virtual[TAG_ENV] == MINE
    # A desktop from an old state file has no tag: its apps get none.
    assert TAG_ENV not in x11_env(":3", None, inherited, runtime_dir="/tmp/rt")
    # The current display: a task batch started on its desktop launches apps there.
    assert x11_env(":3", None, inherited)[TAG_ENV] == OTHER


def test_a_display_without_a_server_names_no_clients() -> None:
    # No connection is tried (python-xlib would leave its sockets open: a ResourceWarning,
    # an error under this suite's warning filter).
    assert x_client_pids(":4093") == frozenset()


def test_the_x_server_is_asked_only_while_the_desktops_own_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Once the desktop's Xvfb is gone, its display number may be another desktop's.
    asked: list[str] = []

    def clients(display: str) -> frozenset[int]:
        asked.append(display)
        return frozenset()

    monkeypatch.setattr(reaper, "x_client_pids", clients)
    gone = ProcessRecord("Xvfb", 10**7, 1)  # beyond any pid_max
    assert DesktopReaper(new_tag(), ":3", gone, []).end_apps() == []
    assert asked == []
    start = procfs.start_time(os.getpid())
    assert start is not None
    running = ProcessRecord("Xvfb", os.getpid(), start)  # any live process stands in
    assert DesktopReaper(new_tag(), ":3", running, []).end_apps() == []
    assert asked == [":3"]
