"""A provider for OSWorld's own DesktopEnv: a roundhouse desktop served by
`roundhouse serve --osworld` stands where OSWorld starts a VM.

    # in OSWorld's Python, with desktop-env installed and the server running:
    from roundhouse.osworld.provider import roundhouse_desktop_env
    env = roundhouse_desktop_env("http://127.0.0.1:5000", action_space="pyautogui")
    obs = env.reset(task_config=task)        # the task's config on a fresh desktop
    obs, reward, done, info = env.step("pyautogui.typewrite('hello')")
    score = env.evaluate()

What each of OSWorld's provider calls does here:
- start_emulator: waits until the server answers;
- get_ip_address: "HOST:PORT:DEVTOOLS:VNC:VLC" — the server's address, and the DevTools
  port of the Chromium and the HTTP port of the VLC on its current desktop (they change
  with every fresh desktop);
- revert_to_snapshot: POST /roundhouse/reset, a fresh virtual desktop with a fresh home;
- save_state: not supported (a roundhouse desktop has no snapshots); stop_emulator: nothing
  (the server's own life is its command's).

DesktopEnv accepts only the provider names it knows; this registers the provider under
"docker" while the environment is built (docker's reset rule applies: a desktop is replaced
before each task but the first, and the first is fresh). Only the standard library and
desktop-env are imported here, so OSWorld's Python needs nothing else of roundhouse.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from desktop_env import desktop_env as osworld_env  # type: ignore[import-not-found]
from desktop_env.providers.base import Provider, VMManager  # type: ignore[import-not-found]

TOKEN_ENV = "RH_MCP_TOKEN"
START_TIMEOUT = 60.0
RESET_TIMEOUT = 120.0
VNC_PORT = 8006  # not served: a roundhouse desktop has no VNC


def _call(server: str, path: str, method: str = "GET", timeout: float = 30.0) -> Any:
    request = urllib.request.Request(server.rstrip("/") + path, method=method)
    token = os.environ.get(TOKEN_ENV)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


class RoundhouseProvider(Provider):  # type: ignore[misc]
    """`path_to_vm` is the server's URL ("http://127.0.0.1:5000")."""

    def start_emulator(self, path_to_vm: str, headless: bool, *args: Any) -> None:
        # A loop of its own, not core/polling.py: OSWorld's Python imports this module
        # alone, with the standard library and desktop-env only (see above).
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                _call(path_to_vm, "/roundhouse/info", timeout=5.0)
                return
            except OSError as error:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no roundhouse server at {path_to_vm}: {error}") from None
                time.sleep(0.2)

    def get_ip_address(self, path_to_vm: str) -> str:
        address = urlsplit(path_to_vm)
        info = _call(path_to_vm, "/roundhouse/info")
        return (
            f"{address.hostname}:{address.port or 80}:{info['devtools_port']}:{VNC_PORT}:"
            f"{info['vlc_port']}"
        )

    def save_state(self, path_to_vm: str, snapshot_name: str) -> None:
        raise NotImplementedError("a roundhouse desktop has no snapshots; it is made fresh")

    def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
        _call(path_to_vm, "/roundhouse/reset", method="POST", timeout=RESET_TIMEOUT)
        return path_to_vm

    def stop_emulator(self, path_to_vm: str, *args: Any, **kwargs: Any) -> None:
        return None


class RoundhouseManager(VMManager):  # type: ignore[misc]
    """Nothing to allocate: the server is the environment."""

    def __init__(self, server: str) -> None:
        self.server = server

    def initialize_registry(self, **kwargs: Any) -> None:
        return None

    def add_vm(self, vm_path: str, **kwargs: Any) -> None:
        return None

    def delete_vm(self, vm_path: str, **kwargs: Any) -> None:
        return None

    def occupy_vm(self, vm_path: str, pid: int, **kwargs: Any) -> None:
        return None

    def list_free_vms(self, **kwargs: Any) -> list[str]:
        return [self.server]

    def check_and_clean(self, **kwargs: Any) -> None:
        return None

    def get_vm_path(self, **kwargs: Any) -> str:
        return self.server


def roundhouse_desktop_env(server: str, **kwargs: Any) -> Any:
    """OSWorld's DesktopEnv on the roundhouse server at `server`; `kwargs` are DesktopEnv's
    (action_space, require_a11y_tree, screen_size, client_password...)."""
    original = osworld_env.create_vm_manager_and_provider

    def ours(provider_name: str, region: str, use_proxy: bool = False) -> Any:
        return RoundhouseManager(server), RoundhouseProvider(region)

    osworld_env.create_vm_manager_and_provider = ours
    try:
        return osworld_env.DesktopEnv(provider_name="docker", path_to_vm=server, **kwargs)
    finally:
        osworld_env.create_vm_manager_and_provider = original
