"""How an application is started on a desktop so that it exposes its accessibility tree and
starts straight into its window: per-application flags, and on a virtual desktop the
throw-away profiles kept in its runtime folder (gone when the desktop stops)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path


def app_command(
    argv: Sequence[str], env: Mapping[str, str], *, virtual: bool, wayland: bool
) -> list[str]:
    """The command line that makes the app expose its accessibility tree.

    Chromium and Electron apps only build their tree with --force-renderer-accessibility;
    as root Chromium also refuses to start without --no-sandbox (and then warns in a
    bar). On a virtual desktop a Chromium browser also gets a throw-away profile in the
    desktop's runtime folder (removed when the desktop stops) and no first-run or
    default-browser questions; on the user's own desktop it keeps the user's profile.
    Firefox gets the same on a virtual desktop (a prepared profile without its welcome
    and privacy tabs); its tree is switched on by GNOME_ACCESSIBILITY (session.py).
    LibreOffice starts without its splash window (--nologo), and on a virtual desktop in
    a prepared profile. GNOME Text Editor gets a data folder of the virtual desktop's,
    and restores no earlier session.
    """
    command = list(argv)
    if command and _is_chromium_like(command[0]):
        extra = ["--force-renderer-accessibility"]
        if wayland:
            extra.append("--ozone-platform=wayland")
        if os.geteuid() == 0:
            # --test-type (as chromedriver passes it) keeps the "unsupported command-line
            # flag" bar off the page: the model would read it as part of every page.
            extra += ["--no-sandbox", "--test-type"]
        runtime_dir = env.get("XDG_RUNTIME_DIR")
        if virtual and _is_chromium_browser(command[0]) and runtime_dir:
            extra += ["--no-first-run", "--no-default-browser-check"]
            if not any(arg.startswith("--user-data-dir") for arg in command):
                extra.append(f"--user-data-dir={os.path.join(runtime_dir, 'chromium-profile')}")
            if all(arg.startswith("-") for arg in command[1:]):
                # Nothing to open: a blank page, not the New Tab page, which takes the
                # focus when it has loaded. A ctrl+l pressed before that lost the address
                # bar to it, and the URL typed next went nowhere (a replayed suite task).
                command.append("about:blank")
        command[1:1] = [flag for flag in extra if flag not in command]
    runtime_dir = env.get("XDG_RUNTIME_DIR")
    if command and _is_libreoffice(command[0]) and "--nologo" not in command:
        # Its splash is a window of its own, the first new one: taken for the document
        # window, it was handed to the AppAgent and closed under it a moment later.
        command.insert(1, "--nologo")
    if command and virtual and runtime_dir and _is_libreoffice(command[0]):
        if not any(arg.startswith("-env:UserInstallation=") for arg in command):
            profile = prepare_office_profile(Path(runtime_dir) / "libreoffice-profile")
            command.insert(1, f"-env:UserInstallation={profile.as_uri()}")
    if command and virtual and runtime_dir and _is_firefox(command[0]):
        if not any(arg in ("--profile", "-profile", "-P") for arg in command):
            profile = prepare_firefox_profile(Path(runtime_dir) / "firefox-profile")
            command[1:1] = ["--no-remote", "--profile", str(profile)]
    if command and virtual and runtime_dir and _restores_session(command[0]):
        # GNOME Text Editor reopens the last session's documents and drafts (from its
        # data folder) and keeps writing them there: on a virtual desktop it starts
        # without them, as gedit does (a desktop lives on between tests: one test's
        # document was reopened and typed into by the next), and writes them into a
        # data folder of the desktop's own, leaving the user's session alone.
        data = Path(runtime_dir) / "app-data" / Path(command[0]).name
        data.mkdir(parents=True, exist_ok=True)
        if not {"--ignore-session", "-i", "--standalone", "-s"} & set(command):
            command.insert(1, "--ignore-session")
        command[0:0] = ["env", f"XDG_DATA_HOME={data}"]
    return command


def _is_chromium_like(program: str) -> bool:
    name = Path(program).name.lower()
    return any(key in name for key in ("chrom", "electron", "code", "brave", "edge"))


def _is_libreoffice(program: str) -> bool:
    name = Path(program).name.lower()
    return name in ("soffice", "soffice.bin", "localc", "lowriter", "loimpress", "lodraw") or (
        name.startswith("libreoffice")
    )


# What a first start of LibreOffice would otherwise put in front of the document: the tip
# of the day and the first-start wizard. The "Keep current format" question stays: saving
# in a foreign format is the user's (and the model's) choice to confirm.
OFFICE_SETTINGS = (
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
    ("/org.openoffice.Setup/Office", "FirstStartWizardCompleted", "true"),
)


def office_registry(settings: Sequence[tuple[str, str, str]] = OFFICE_SETTINGS) -> str:
    """LibreOffice's registrymodifications.xcu setting each (path, name, value)."""
    items = "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>\n"
        for path, name, value in settings
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry">\n'
        f"{items}</oor:items>\n"
    )


def prepare_office_profile(folder: Path) -> Path:
    """A LibreOffice profile that starts straight into the document (made once per
    virtual desktop, in its runtime folder, so it goes when the desktop stops)."""
    settings = folder / "user" / "registrymodifications.xcu"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(office_registry(), encoding="utf-8")
    return folder


# What a first start of Firefox would otherwise open beside the page asked for: the
# welcome page, the privacy notice (a tab that fails offline) and the default-browser bar.
FIREFOX_PREFERENCES = (
    ("browser.aboutwelcome.enabled", "false"),
    ("browser.startup.homepage_override.mstone", '"ignore"'),
    ("startup.homepage_welcome_url", '""'),
    ("startup.homepage_welcome_url.additional", '""'),
    ("datareporting.policy.firstRunURL", '""'),
    ("datareporting.policy.dataSubmissionPolicyBypassNotification", "true"),
    ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
)


def prepare_firefox_profile(folder: Path) -> Path:
    """A throw-away Firefox profile that opens just the page (made once per virtual
    desktop, in its runtime folder, so it goes when the desktop stops)."""
    preferences = folder / "user.js"
    if not preferences.exists():
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"user_pref({json.dumps(name)}, {value});" for name, value in FIREFOX_PREFERENCES]
        preferences.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _restores_session(program: str) -> bool:
    return Path(program).name == "gnome-text-editor"


def _is_firefox(program: str) -> bool:
    return Path(program).name.lower() in ("firefox", "firefox-esr", "firefox-bin")


def _is_chromium_browser(program: str) -> bool:
    """A browser built on Chromium (Electron apps keep their own profile switches)."""
    name = Path(program).name.lower()
    return any(key in name for key in ("chrom", "brave", "edge"))
