"""Fuzz the desktop-entry reader: whatever the .desktop and mimeapps.list files on a
machine hold, reading them gives entries and defaults, never an exception. A broken entry
is skipped (a menu would not show it either); it must not cost the user the others."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from roundhouse.devices.linux.apps.desktop_files import (
    Xdg,
    parse_exec,
    read_defaults,
    read_entries,
)
from roundhouse.devices.linux.apps.launcher import (
    Applications,
    LaunchError,
    application_list,
    resolve,
)
from tests.fuzz.common import FUZZ

KEYS = [
    "Type",
    "Name",
    "Name[de]",
    "GenericName",
    "Exec",
    "TryExec",
    "Hidden",
    "NoDisplay",
    "OnlyShowIn",
    "NotShowIn",
    "Categories",
    "MimeType",
    "Keywords",
    "Terminal",
]
odd_values = st.sampled_from(
    [
        "Application",
        "true",
        "sh",
        "env A=1 sh %U",
        'sh -c "echo \\"x\\""',
        "'unclosed",
        '"unclosed',
        "\\",
        "%",
        "%%k %c %f",
        "a\x00b",
        "env -u",
        "env",
        ";;;",
        "\\;a;b\\",
        "/nonexistent/prog",
        "../../bin/sh",
        "x" * 3000,
        "\ud800",
    ]
)
values = st.one_of(odd_values, st.text(max_size=20))
lines = st.one_of(
    st.builds(lambda key, value: f"{key}={value}", st.sampled_from(KEYS), values),
    st.sampled_from(
        ["[Desktop Entry]", "[Default Applications]", "[Desktop Action new]", "#", "[", "="]
    ),
    st.text(max_size=20),
)
files = st.one_of(
    st.lists(lines, max_size=12).map(lambda found: "\n".join(["[Desktop Entry]", *found])),
    st.text(max_size=200),
).map(lambda text: text.encode("utf-8", errors="surrogatepass"))
mimeapps = st.lists(
    st.builds(
        lambda mime, ids: f"{mime}={ids}",
        st.sampled_from(["text/plain", "x-scheme-handler/http", "", "=", "a\x00b"]),
        st.one_of(st.sampled_from(["fuzz0.desktop;", "fuzz1.desktop;x;", ";"]), values),
    ),
    max_size=5,
).map(lambda found: "\n".join(["[Default Applications]", *found]).encode("utf-8", "replace"))


def test_any_desktop_files_read_as_entries_or_are_skipped(tmp_path: Path) -> None:
    applications = tmp_path / "data" / "applications"
    applications.mkdir(parents=True)
    config = tmp_path / "config"
    config.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sh").symlink_to("/bin/sh")
    xdg = Xdg.from_env(
        {
            "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_DATA_DIRS": str(tmp_path / "none"),
            "XDG_CONFIG_HOME": str(config),
            "XDG_CONFIG_DIRS": str(tmp_path / "none"),
            "XDG_CURRENT_DESKTOP": "GNOME",
            "LANG": "de_DE.UTF-8",
            "PATH": str(bin_dir),
        }
    )

    @FUZZ
    @given(st.lists(files, min_size=1, max_size=3), mimeapps)
    @example([b"[Desktop Entry]\nType=Application\nName=A\nExec=sh\nTryExec=a\x00b"], b"")
    @example([b"[Desktop Entry]\nType=Application\nName=A\nExec=a\x00b"], b"")
    @example([b"[Desktop Entry]\nType=Application\nName=A\nExec=env -u"], b"")
    @example([b"\xff\xfe[Desktop Entry]"], b"[Default Applications]\ntext/plain=\xff;")
    def read(raws: list[bytes], defaults: bytes) -> None:
        for old in applications.iterdir():
            old.unlink()
        for number, raw in enumerate(raws):
            (applications / f"fuzz{number}.desktop").write_bytes(raw)
        (config / "mimeapps.list").write_bytes(defaults)
        entries = read_entries(xdg)
        # What was read is an application that runs here: its program is on PATH.
        for entry in entries:
            assert entry.argv and entry.names
        # And the launcher can list and choose among what was read.
        apps = Applications(tuple(entries), read_defaults(xdg), xdg)
        application_list(apps)
        for request in ("text editor", "A", "sh", "web browser"):
            try:
                resolve(request, apps)
            except LaunchError:
                pass

    read()


@FUZZ
@given(st.one_of(values, st.text(max_size=60)))
@example('a "b\\')  # an escape at the end inside quotes
@example("\\")
def test_any_exec_value_is_an_argv_or_refused(value: str) -> None:
    argv = parse_exec(value, "Name", Path("/x.desktop"))
    assert all(isinstance(arg, str) for arg in argv)
