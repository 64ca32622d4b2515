"""What launch_application starts for a request, on application folders modelled on real
desktops (Debian GNOME, Ubuntu, Fedora KDE, Xfce). Each machine is a tmp folder: its
.desktop files and mimeapps.list written here, its XDG variables pointing there, and a PATH
of fake executables, so no test depends on what this machine has installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roundhouse.devices.linux.apps.desktop_files import (
    Xdg,
    locale_suffixes,
    parse_exec,
    program,
    read_entries,
)
from roundhouse.devices.linux.apps.launcher import (
    MAX_CANDIDATES,
    Applications,
    Candidate,
    LaunchError,
    application_list,
    resolve,
)


class Machine:
    """A fake machine: `root` holds usr/share, the user's home and a bin folder on PATH."""

    def __init__(self, root: Path, desktop: str = "", lang: str = "en_US.UTF-8") -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        self.home = root / "home"
        self.data_dirs = [root / "usr/local/share", root / "usr/share"]
        self.env = {
            "HOME": str(self.home),
            "PATH": str(self.bin),
            "XDG_CURRENT_DESKTOP": desktop,
            "LANG": lang,
        }
        self.add_data_dir()

    def add_data_dir(self, folder: str | None = None) -> Path:
        if folder is not None:
            self.data_dirs.append(self.root / folder)
        self.env["XDG_DATA_DIRS"] = ":".join(str(path) for path in self.data_dirs)
        return self.data_dirs[-1]

    def programs(self, *names: str) -> None:
        for name in names:
            path = self.bin / name if "/" not in name else self.root / name.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("#!/bin/sh\nexit 0\n")
            path.chmod(0o755)

    def entry(self, file: str, folder: str = "usr/share", **keys: str) -> Path:
        """Write applications/<file> under `folder`, keys in order ("Name_de" is Name[de])."""
        lines = ["[Desktop Entry]", "Type=Application"]
        for key, value in keys.items():
            name, _, locale = key.partition("_")
            lines.append(f"{name}[{locale}]={value}" if locale else f"{name}={value}")
        path = self.root / folder / "applications" / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def mimeapps(self, path: str, defaults: dict[str, str]) -> None:
        """A mimeapps.list at root/path: mime type -> desktop ids."""
        lines = ["[Default Applications]"]
        lines += [f"{mime}={ids}" for mime, ids in defaults.items()]
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")

    def apps(self, **env: str) -> Applications:
        return Applications.load({**self.env, **env})

    def resolve(self, request: str, **env: str) -> list[Candidate]:
        return resolve(request, self.apps(**env))

    def first(self, request: str, **env: str) -> tuple[str, ...]:
        return self.resolve(request, **env)[0].argv


def labels(candidates: list[Candidate]) -> list[str]:
    return [candidate.label for candidate in candidates]


# --- the machines, as their packages install them ---------------------------------------


def vim_and_nano(machine: Machine) -> None:
    machine.programs("vim")
    machine.entry(
        "vim.desktop",
        Name="Vim",
        GenericName="Text Editor",
        TryExec="vim",
        Exec="vim %F",
        Terminal="true",
        Keywords="Text;editor;",
        Categories="Utility;TextEditor;",
        MimeType="text/plain;",
    )
    nano(machine, MimeType="text/plain;")


def nano(machine: Machine, **keys: str) -> None:
    """nano and its entry, as Debian's package installs them, with `keys` besides."""
    machine.programs("nano")
    machine.entry(
        "nano.desktop",
        Name="GNU nano",
        GenericName="Text Editor",
        Exec="nano %F",
        Terminal="true",
        TryExec="nano",
        Categories="Utility;TextEditor;ConsoleOnly;",
        **keys,
    )


@pytest.fixture
def debian_gnome(tmp_path: Path) -> Machine:
    """Debian 12 GNOME: gedit without GenericName, vim and nano, Chromium, XTerm, GNOME
    Terminal, Nautilus; the user made vim the default for text/plain."""
    machine = Machine(tmp_path, desktop="GNOME")
    machine.programs("gedit", "chromium", "xterm", "x-terminal-emulator", "gnome-terminal")
    machine.programs("nautilus")
    vim_and_nano(machine)
    machine.entry(
        "org.gnome.gedit.desktop",
        Name="gedit",
        Comment="Edit text files",
        Exec="gedit %U",
        Terminal="false",
        MimeType="text/plain;application/x-zerosize;",
        Categories="GNOME;GTK;Utility;TextEditor;",
        Keywords="Text;Editor;Plaintext;Write;gedit;",
        DBusActivatable="true",
    )
    machine.entry(
        "chromium.desktop",
        Name="Chromium Web Browser",
        GenericName="Web Browser",
        Comment="Access the Internet",
        Exec=f"{machine.bin}/chromium %U",
        Categories="Network;WebBrowser;",
        MimeType="text/html;x-scheme-handler/http;x-scheme-handler/https;",
    )
    machine.entry(
        "debian-xterm.desktop",
        Name="XTerm",
        Comment="standard terminal emulator for the X window system",
        Exec="xterm",
        Categories="System;TerminalEmulator;",
    )
    machine.entry(
        "org.gnome.Terminal.desktop",
        Name="Terminal",
        Name_de="Terminal",
        Exec="gnome-terminal --window",
        Categories="GNOME;GTK;System;TerminalEmulator;",
    )
    machine.entry(
        "org.gnome.Nautilus.desktop",
        Name="Files",
        Name_de="Dateien",
        Comment="Access and organize files",
        Exec="nautilus --new-window %U",
        Categories="GNOME;GTK;Utility;Core;FileManager;",
        MimeType="inode/directory;",
    )
    machine.mimeapps("home/.config/mimeapps.list", {"text/plain": "vim.desktop"})
    return machine


@pytest.fixture
def ubuntu(tmp_path: Path) -> Machine:
    """Ubuntu 24.04: Firefox and Chromium as snaps, GNOME Text Editor and Terminal, vim;
    gnome-mimeapps.list makes Firefox the browser. No x-terminal-emulator."""
    machine = Machine(tmp_path, desktop="ubuntu:GNOME")
    snap_apps = machine.add_data_dir("var/lib/snapd/desktop") / "applications"
    machine.programs("env", "gnome-text-editor", "gnome-terminal", "/snap/bin/firefox")
    machine.programs("/snap/bin/chromium")
    vim_and_nano(machine)
    for snap, name in (("firefox", "Firefox Web Browser"), ("chromium", "Chromium")):
        machine.entry(
            f"{snap}_{snap}.desktop",
            folder="var/lib/snapd/desktop",
            Name=name,
            GenericName="Web Browser",
            Exec=f"env BAMF_DESKTOP_FILE_HINT={snap_apps}/{snap}_{snap}.desktop "
            f"{machine.root}/snap/bin/{snap} %u",
            Categories="GNOME;GTK;Network;WebBrowser;",
            MimeType="text/html;x-scheme-handler/http;x-scheme-handler/https;",
        )
    machine.entry(
        "org.gnome.TextEditor.desktop",
        Name="Text Editor",
        Exec="gnome-text-editor %U",
        Categories="GNOME;GTK;Utility;TextEditor;",
        MimeType="text/plain;",
    )
    machine.entry(
        "org.gnome.Terminal.desktop",
        Name="Terminal",
        Exec="gnome-terminal --window",
        Categories="GNOME;GTK;System;TerminalEmulator;",
    )
    machine.mimeapps(
        "usr/share/applications/gnome-mimeapps.list",
        {
            "x-scheme-handler/https": "firefox_firefox.desktop",
            "text/plain": "org.gnome.TextEditor.desktop",
        },
    )
    return machine


@pytest.fixture
def fedora_kde(tmp_path: Path) -> Machine:
    """Fedora KDE: Kate and KWrite (KWrite the user's text/plain default), Konsole,
    Dolphin in a kde4/ subfolder, Firefox, vim; German translations."""
    machine = Machine(tmp_path, desktop="KDE")
    machine.programs("kate", "kwrite", "konsole", "dolphin", "firefox")
    vim_and_nano(machine)
    machine.entry(
        "org.kde.kate.desktop",
        Name="Kate",
        GenericName="Advanced Text Editor",
        GenericName_de="Erweiterter Texteditor",
        Exec="kate -b %U",
        Categories="Qt;KDE;Utility;TextEditor;",
        MimeType="text/plain;",
    )
    machine.entry(
        "org.kde.kwrite.desktop",
        Name="KWrite",
        GenericName="Text Editor",
        GenericName_de="Texteditor",
        Exec="kwrite %U",
        Categories="Qt;KDE;Utility;TextEditor;",
        MimeType="text/plain;",
    )
    machine.entry(
        "org.kde.konsole.desktop",
        Name="Konsole",
        GenericName="Terminal",
        Exec="konsole",
        Categories="Qt;KDE;System;TerminalEmulator;",
    )
    machine.entry(
        "kde4/dolphin.desktop",
        Name="Dolphin",
        GenericName="File Manager",
        GenericName_de="Dateiverwaltung",
        Exec="dolphin %u",
        Categories="Qt;KDE;System;FileTools;FileManager;",
        MimeType="inode/directory;",
    )
    machine.entry(
        "firefox.desktop",
        Name="Firefox",
        GenericName="Web Browser",
        Exec="firefox %u",
        Categories="Network;WebBrowser;",
    )
    machine.mimeapps("home/.config/kde-mimeapps.list", {"text/plain": "org.kde.kwrite.desktop"})
    return machine


@pytest.fixture
def xfce(tmp_path: Path) -> Machine:
    """Debian Xfce: Mousepad, Xfce Terminal, Thunar, nano; an entry whose program is not
    installed, a KDE-only and a not-in-Xfce entry."""
    machine = Machine(tmp_path, desktop="XFCE")
    machine.programs("mousepad", "xfce4-terminal", "thunar", "nano", "kinfocenter", "gnome-help")
    machine.entry(
        "org.xfce.mousepad.desktop",
        Name="Mousepad",
        GenericName="Text Editor",
        Exec="mousepad %U",
        Categories="Utility;TextEditor;GTK;",
        MimeType="text/plain;",
    )
    machine.entry(
        "xfce4-terminal.desktop",
        Name="Xfce Terminal",
        Exec="xfce4-terminal",
        Categories="GTK;System;TerminalEmulator;",
    )
    machine.entry(
        "thunar.desktop",
        Name="Thunar File Manager",
        GenericName="File Manager",
        Exec="thunar %F",
        Categories="System;Core;GTK;FileTools;FileManager;",
        MimeType="inode/directory;",
    )
    nano(machine)
    # Left behind by an uninstalled package: its program is gone.
    machine.entry(
        "org.gnome.gedit.desktop",
        Name="gedit",
        Exec="gedit %U",
        Categories="Utility;TextEditor;",
    )
    machine.entry(
        "org.kde.kinfocenter.desktop",
        Name="Info Center",
        Exec="kinfocenter",
        OnlyShowIn="KDE;",
        Categories="Qt;KDE;System;",
    )
    machine.entry(
        "yelp.desktop",
        Name="Help",
        Exec="gnome-help",
        NotShowIn="XFCE;KDE;",
        Categories="GNOME;Core;",
    )
    return machine


# --- Debian GNOME -------------------------------------------------------------------------


def test_debian_text_editor_is_gedit_although_vim_is_the_default(debian_gnome: Machine) -> None:
    found = debian_gnome.resolve("text editor")
    assert labels(found) == ["gedit — Text Editor"]  # vim and nano run in a terminal
    assert found[0].argv == ("gedit",)
    assert debian_gnome.first("the text editor") == ("gedit",)
    assert debian_gnome.first("Editor") == ("gedit",)


def test_debian_kinds_and_names(debian_gnome: Machine) -> None:
    assert debian_gnome.first("web browser") == (f"{debian_gnome.bin}/chromium",)
    assert debian_gnome.first("chromium") == (f"{debian_gnome.bin}/chromium",)
    # GNOME's "Terminal" by name before XTerm; both are offered.
    assert labels(debian_gnome.resolve("terminal")) == ["Terminal", "XTerm — Terminal"]
    assert debian_gnome.first("file manager") == ("nautilus", "--new-window")
    assert debian_gnome.first("files") == ("nautilus", "--new-window")
    assert debian_gnome.first("org.gnome.gedit") == ("gedit",)
    assert debian_gnome.first("org.gnome.gedit.desktop") == ("gedit",)
    assert debian_gnome.first("nautilus") == ("nautilus", "--new-window")


def test_debian_vim_by_name_runs_in_the_terminal(debian_gnome: Machine) -> None:
    (vim,) = debian_gnome.resolve("vim")
    assert vim.argv == ("x-terminal-emulator", "-e", "vim")
    assert vim.label == "Vim — Text Editor (runs in a terminal)"
    assert vim.entry is not None and vim.entry.id == "vim.desktop"
    # A command line for a terminal program runs in the terminal too.
    (command,) = debian_gnome.resolve("vim /tmp/notes.txt")
    assert command.argv == ("x-terminal-emulator", "-e", "vim", "/tmp/notes.txt")


def test_debian_localized_names(debian_gnome: Machine) -> None:
    assert debian_gnome.first("Dateien", LANG="de_DE.UTF-8") == ("nautilus", "--new-window")
    assert debian_gnome.first("Files", LANG="de_DE.UTF-8") == ("nautilus", "--new-window")
    listed = application_list(debian_gnome.apps(LC_ALL="de_AT.UTF-8", LANG="en_US.UTF-8"))
    assert "Dateien — File Manager" in listed


def test_debian_unknown_name_suggests_near_matches(debian_gnome: Machine) -> None:
    with pytest.raises(LaunchError, match="no application or command 'geddit'") as error:
        debian_gnome.resolve("geddit")
    assert "Did you mean gedit, editor?" in str(error.value)
    assert "Applications: Chromium, Files, gedit, GNU nano, Terminal, Vim, XTerm" in str(
        error.value
    )


def test_debian_application_list_says_what_each_is_for(debian_gnome: Machine) -> None:
    assert application_list(debian_gnome.apps()) == [
        "Chromium — Web Browser",
        "Files — File Manager",
        "gedit — Text Editor",
        "GNU nano — Text Editor (runs in a terminal)",
        "Terminal",
        "Vim — Text Editor (runs in a terminal)",
        "XTerm — Terminal",
    ]


# --- Ubuntu -------------------------------------------------------------------------------


def test_ubuntu_default_browser_is_the_firefox_snap(ubuntu: Machine) -> None:
    found = ubuntu.resolve("web browser")
    assert labels(found) == ["Firefox — Web Browser", "Chromium — Web Browser"]
    env, hint, firefox = found[0].argv
    assert env == "env" and hint.startswith("BAMF_DESKTOP_FILE_HINT=")
    assert firefox == f"{ubuntu.root}/snap/bin/firefox"
    assert ubuntu.first("firefox") == found[0].argv  # the executable behind `env`
    assert ubuntu.first("Firefox") == found[0].argv  # the name without "Web Browser"
    assert ubuntu.first("Firefox Web Browser") == found[0].argv


def test_ubuntu_editor_terminal_and_vim(ubuntu: Machine) -> None:
    assert ubuntu.first("text editor") == ("gnome-text-editor",)
    assert ubuntu.first("Text Editor") == ("gnome-text-editor",)
    assert ubuntu.first("terminal") == ("gnome-terminal", "--window")
    # No x-terminal-emulator: GNOME Terminal runs the program after "--".
    assert ubuntu.first("vim") == ("gnome-terminal", "--window", "--", "vim")


def test_ubuntu_without_the_snap_folder_has_no_firefox(ubuntu: Machine) -> None:
    data_dirs = f"{ubuntu.root}/usr/local/share:{ubuntu.root}/usr/share"
    with pytest.raises(LaunchError, match="no application or command 'firefox'"):
        ubuntu.resolve("firefox", XDG_DATA_DIRS=data_dirs)
    with pytest.raises(LaunchError, match="Did you mean Firefox?"):
        ubuntu.resolve("firefx")


# --- Fedora KDE ---------------------------------------------------------------------------


def test_fedora_kde_default_editor_comes_first(fedora_kde: Machine) -> None:
    found = fedora_kde.resolve("text editor")
    assert [c.argv for c in found] == [("kwrite",), ("kate", "-b")]
    assert labels(found) == ["KWrite — Text Editor", "Kate — Advanced Text Editor"]
    # Without the KDE session, kde-mimeapps.list does not apply: reading order decides.
    assert fedora_kde.first("text editor", XDG_CURRENT_DESKTOP="") == ("kate", "-b")


def test_fedora_kde_names_ids_and_executables(fedora_kde: Machine) -> None:
    assert fedora_kde.first("Kate") == ("kate", "-b")
    assert fedora_kde.first("kwrite") == ("kwrite",)
    assert fedora_kde.first("KWRITE") == ("kwrite",)
    assert fedora_kde.first("kde4-dolphin") == ("dolphin",)  # the id of kde4/dolphin.desktop
    assert fedora_kde.first("file manager") == ("dolphin",)
    assert fedora_kde.first("terminal") == ("konsole",)
    assert fedora_kde.first("web browser") == ("firefox",)
    assert fedora_kde.first("vim") == ("konsole", "-e", "vim")
    with pytest.raises(LaunchError, match="'kwirte' here. Did you mean KWrite?"):
        fedora_kde.resolve("kwirte")


def test_fedora_kde_localized_generic_names(fedora_kde: Machine) -> None:
    german = {"LANG": "de_DE.UTF-8"}
    assert fedora_kde.first("Erweiterter Texteditor", **german) == ("kate", "-b")
    assert fedora_kde.first("Dateiverwaltung", **german) == ("dolphin",)
    listed = application_list(fedora_kde.apps(**german))
    assert "Kate — Erweiterter Texteditor" in listed
    assert "KWrite — Texteditor" in listed


# --- Xfce ---------------------------------------------------------------------------------


def test_xfce_kinds_and_command_lines(xfce: Machine) -> None:
    assert xfce.first("text editor") == ("mousepad",)
    assert xfce.first("file manager") == ("thunar",)
    assert xfce.first("Thunar") == ("thunar",)
    assert xfce.first("terminal") == ("xfce4-terminal",)
    assert xfce.first("mousepad /tmp/a.txt") == ("mousepad", "/tmp/a.txt")
    # xfce4-terminal's -e takes one string; -x takes the command's own arguments.
    assert xfce.first("nano") == ("xfce4-terminal", "-x", "nano")


def test_xfce_hides_what_does_not_run_or_belongs_elsewhere(xfce: Machine) -> None:
    names = [entry.name for entry in xfce.apps().entries]
    assert "gedit" not in names  # its program is not installed
    assert "Info Center" not in names  # OnlyShowIn=KDE
    assert "Help" not in names  # NotShowIn=XFCE
    assert "Info Center" in [e.name for e in xfce.apps(XDG_CURRENT_DESKTOP="KDE").entries]
    with pytest.raises(LaunchError, match="Did you mean"):
        xfce.resolve("gedit")


def test_case_is_folded_as_unicode_says(xfce: Machine) -> None:
    xfce.entry("strasse.desktop", Name="Straße", Exec="mousepad --street")
    assert xfce.first("STRASSE") == ("mousepad", "--street")
    assert xfce.first("straße") == ("mousepad", "--street")


def test_weaker_matches_come_last(xfce: Machine) -> None:
    assert xfce.first("mouse") == ("mousepad",)  # part of a name
    assert xfce.first("filetools") == ("thunar",)  # a category
    # A whole phrase is no application, even when a word of it is a kind.
    with pytest.raises(LaunchError, match="no application or command 'calculator and comp"):
        xfce.resolve("calculator and compute 12*7")


# --- terminals ----------------------------------------------------------------------------


def test_no_terminal_is_a_clear_error(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    vim_and_nano(machine)
    with pytest.raises(
        LaunchError, match="'vim': Vim runs in a terminal, and no terminal emulator"
    ):
        machine.resolve("vim")
    with pytest.raises(LaunchError, match="no terminal emulator is installed"):
        machine.resolve("text editor")  # only terminal editors here: they need one too


def test_only_terminal_editors_run_in_the_terminal(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    vim_and_nano(machine)
    machine.programs("xterm")
    machine.entry(
        "debian-xterm.desktop", Name="XTerm", Exec="xterm", Categories="System;TerminalEmulator;"
    )
    assert labels(machine.resolve("text editor")) == [
        "GNU nano — Text Editor (runs in a terminal)",
        "Vim — Text Editor (runs in a terminal)",
    ]
    assert machine.first("text editor") == ("xterm", "-e", "nano")


def test_a_generic_name_that_is_no_kind(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    machine.programs("notes-app", "sticky", "x-terminal-emulator")
    machine.entry(
        "org.example.Notes.desktop",
        Name="Notes",
        GenericName="Note Taker",
        Exec="notes-app --new %U",
    )
    machine.entry(
        "sticky.desktop", Name="Sticky", GenericName="Note Taker", Exec="sticky", Terminal="true"
    )
    assert labels(machine.resolve("note taker")) == ["Notes — Note Taker"]
    assert machine.first("notes-app") == ("notes-app", "--new")
    machine.programs("xmessage")  # a program without an entry: a command line
    assert machine.resolve("xmessage -center 'hi there'") == [
        Candidate(("xmessage", "-center", "hi there"), "xmessage -center 'hi there'")
    ]


def test_at_most_max_candidates(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    for number in range(MAX_CANDIDATES + 2):
        machine.programs(f"editor{number}")
        machine.entry(
            f"editor{number}.desktop",
            Name=f"Editor {number}",
            Exec=f"editor{number}",
            Categories="TextEditor;",
        )
    assert len(machine.resolve("text editor")) == MAX_CANDIDATES


# --- reading the folders ------------------------------------------------------------------


def test_the_user_folder_wins_and_hidden_removes_an_id(debian_gnome: Machine) -> None:
    debian_gnome.entry(
        "org.gnome.gedit.desktop",
        folder="home/.local/share",
        Name="My gedit",
        Exec="gedit --new-window",
    )
    debian_gnome.entry(
        "chromium.desktop", folder="home/.local/share", Name="x", Exec="x", Hidden="true"
    )
    debian_gnome.entry(
        "vim.desktop", folder="usr/local/share", Name="x", Exec="vim", NoDisplay="true"
    )
    apps = debian_gnome.apps()
    by_id = {entry.id: entry for entry in apps.entries}
    assert by_id["org.gnome.gedit.desktop"].argv == ("gedit", "--new-window")
    assert by_id["org.gnome.gedit.desktop"].name == "My gedit"
    assert "chromium.desktop" not in by_id  # hidden by the user, though /usr/share has it
    assert "vim.desktop" not in by_id  # NoDisplay in /usr/local/share hides /usr/share's


def test_xdg_data_home_is_read_first(debian_gnome: Machine, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    debian_gnome.entry("org.gnome.gedit.desktop", folder="elsewhere", Name="Moved", Exec="gedit")
    assert debian_gnome.resolve("Moved", XDG_DATA_HOME=str(elsewhere))[0].argv == ("gedit",)


def test_weird_files_are_skipped_without_hanging(xfce: Machine) -> None:
    folder = xfce.root / "usr/share/applications"
    os.mkfifo(folder / "a-pipe.desktop")  # opening it for reading would wait for a writer
    (folder / "a-folder.desktop").mkdir()
    (folder / "latin1.desktop").write_bytes(
        b"[Desktop Entry]\nType=Application\nName=Caf\xe9\nExec=mousepad --caf\xe9\n"
    )
    (folder / "broken-link.desktop").symlink_to(folder / "nowhere.desktop")
    (folder / "unquoted.desktop").write_text(
        '[Desktop Entry]\nType=Application\nName=Q\nExec="mousepad\n'
    )
    (folder / "no-group.desktop").write_text("Name=Loose\nExec=mousepad\n")
    names = [entry.name for entry in xfce.apps().entries]
    assert "Caf\ufffd" in names  # read as far as it goes
    assert "Q" not in names and "Loose" not in names


def test_a_mimeapps_default_that_is_not_installed_falls_through(fedora_kde: Machine) -> None:
    fedora_kde.mimeapps(
        "home/.config/kde-mimeapps.list",
        {"text/plain": "org.kde.gone.desktop;org.kde.kate.desktop;"},
    )
    fedora_kde.mimeapps("home/.config/mimeapps.list", {"text/plain": "org.kde.kwrite.desktop"})
    assert fedora_kde.first("text editor") == ("kate", "-b")


def test_exec_values_per_the_spec() -> None:
    path = Path("/usr/share/applications/x.desktop")
    assert parse_exec("gedit %U", "gedit", path) == ("gedit",)
    assert parse_exec('sh -c "echo \\"a b\\" \\$HOME" %f', "x", path) == (
        "sh",
        "-c",
        'echo "a b" $HOME',
    )
    assert parse_exec("prog --rate=100%% --title=%c --from=%k %i", "Prog", path) == (
        "prog",
        "--rate=100%",
        "--title=Prog",
        f"--from={path}",
    )
    assert parse_exec("sh -c 'a b'", "x", path) == ("sh", "-c", "a b")
    assert parse_exec('"/opt/My App/run"  --x', "x", path) == ("/opt/My App/run", "--x")
    assert parse_exec('prog "unterminated', "x", path) == ()
    assert parse_exec("", "x", path) == ()


def test_the_program_behind_env() -> None:
    assert program(("env", "A=1", "B=2", "/snap/bin/firefox", "%u")) == "/snap/bin/firefox"
    assert program(("env", "-u", "GTK_THEME", "gedit")) == "gedit"
    assert program(("/usr/bin/env",)) == "/usr/bin/env"
    assert program(("gedit", "--new-window")) == "gedit"


def test_locale_suffixes() -> None:
    assert locale_suffixes({"LANG": "de_DE.UTF-8@euro"}) == ("de_DE@euro", "de_DE", "de@euro", "de")
    assert locale_suffixes({"LC_ALL": "pt_BR", "LANG": "de_DE"}) == ("pt_BR", "pt")
    assert locale_suffixes({"LC_MESSAGES": "sr@latin", "LANG": "de"}) == ("sr@latin", "sr")
    assert locale_suffixes({"LANG": "C.UTF-8"}) == ()
    assert locale_suffixes({}) == ()


def test_xdg_defaults(tmp_path: Path) -> None:
    xdg = Xdg.from_env({"HOME": str(tmp_path), "XDG_DATA_DIRS": "relative:/opt/share"})
    assert xdg.data_home == tmp_path / ".local/share"
    assert xdg.data_dirs == (Path("/opt/share"),)
    assert Xdg.from_env({"HOME": str(tmp_path)}).data_dirs == (
        Path("/usr/local/share"),
        Path("/usr/share"),
    )
    assert read_entries(Xdg.from_env({"HOME": str(tmp_path), "XDG_DATA_DIRS": str(tmp_path)})) == []
