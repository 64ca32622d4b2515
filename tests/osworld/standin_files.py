"""Stand-ins for dataset files OSWorld's thunderbird tasks download, made here because the
dataset cannot be fetched on this machine: a Thunderbird profile of our own in the place
and shape the tasks expect (~/.thunderbird with the profile t5q2a5hp.default-release, an
IMAP account anonym-x2024@outlook.com and Local Folders), kept in a file cache under the
URL's path, as `--files DIR` reads it.

    python -m tests.osworld.standin_files DIR     # then: roundhouse batch ... --files DIR

Its answers are not the dataset's profile's: the tasks that read only prefs.js (the theme,
the quoting, the signature) behave the same with it; those that read its mail do not.
"""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

PROFILE_URL = (
    "https://hf-mirror.com/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/"
    "thunderbird/dd84e895-72fd-4023-a336-97689ded257c/thunderbird-profile.tar.gz"
)
PROFILE = "t5q2a5hp.default-release"
PROFILES_INI = f"""[Profile0]
Name=default-release
IsRelative=1
Path={PROFILE}
Default=1

[General]
StartWithLastProfile=1
Version=2
"""
PREFS = {
    "mail.accountmanager.accounts": '"account1,account2"',
    "mail.accountmanager.defaultaccount": '"account1"',
    "mail.accountmanager.localfoldersserver": '"server2"',
    "mail.account.account1.identities": '"id1"',
    "mail.account.account1.server": '"server1"',
    "mail.account.account2.server": '"server2"',
    "mail.identity.id1.fullName": '"Anonym Tester"',
    "mail.identity.id1.useremail": '"anonym-x2024@outlook.com"',
    "mail.identity.id1.valid": "true",
    "mail.server.server1.hostname": '"outlook.office365.com"',
    "mail.server.server1.name": '"anonym-x2024@outlook.com"',
    "mail.server.server1.type": '"imap"',
    "mail.server.server1.userName": '"anonym-x2024@outlook.com"',
    "mail.server.server1.port": "993",
    "mail.server.server1.socketType": "3",
    "mail.server.server1.login_at_startup": "false",  # no network here: never connect
    "mail.server.server1.check_new_mail": "false",
    "mail.server.server2.hostname": '"Local Folders"',
    "mail.server.server2.name": '"Local Folders"',
    "mail.server.server2.type": '"none"',
    "mail.server.server2.userName": '"nobody"',
    "mail.shell.checkDefaultClient": "false",
    "mailnews.start_page.enabled": "false",
    "mail.provider.suppress_dialog_on_startup": "true",
    "datareporting.policy.dataSubmissionPolicyBypassNotification": "true",
}


def thunderbird_profile() -> bytes:
    """The .tar.gz the tasks unpack into the home: .thunderbird/ with its profile."""
    prefs = "".join(f'user_pref("{key}", {value});\n' for key, value in PREFS.items())
    files = {
        ".thunderbird/profiles.ini": PROFILES_INI,
        f".thunderbird/{PROFILE}/prefs.js": "// Mozilla User Preferences\n\n" + prefs,
    }
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for name, text in files.items():
            body = text.encode()
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode = len(body), 0o644
            archive.addfile(entry, io.BytesIO(body))
    return data.getvalue()


def write_cache(root: Path) -> Path:
    """Put the stand-ins where a file cache in `root` finds them (files.py's layout)."""
    from roundhouse.osworld.files import FileCache

    target = FileCache(root).path(PROFILE_URL)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(thunderbird_profile())
    return target


if __name__ == "__main__":
    print(write_cache(Path(sys.argv[1])))
