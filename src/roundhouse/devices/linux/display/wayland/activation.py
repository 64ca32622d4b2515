"""xdg-activation: the token a launcher hands an application it starts, so that the
compositor gives its first window the focus (XDG_ACTIVATION_TOKEN, as desktops' launchers
set it). Without one, Mutter leaves a window launched by another program unfocused; with a
person's GNOME refusing to tell roundhouse about windows (no Eval), it could not be
brought forward otherwise."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError, decode

INTERFACE = "xdg_activation_v1"
GET_ACTIVATION_TOKEN = 1  # xdg_activation_v1's request
COMMIT, DESTROY_TOKEN = 3, 4  # xdg_activation_token_v1's
TOKEN_TIMEOUT = 2.0


def startup_env(env: Mapping[str, str]) -> dict[str, str]:
    """What an application started now gets to be focused (the token under both names
    toolkits read); nothing where the compositor offers no xdg-activation."""
    try:
        with Connection.open(env, TOKEN_TIMEOUT) as wayland:
            if wayland.find(INTERFACE) is None:
                return {}
            activation = wayland.bind(INTERFACE, 1)
            tokens: list[str] = []

            def on_done(_opcode: int, payload: bytes, fds: deque[int]) -> None:
                tokens.append(decode("s", payload, fds)[0])

            token = wayland.new_id(on_done)
            wayland.request(activation, GET_ACTIVATION_TOKEN, "n", token)
            wayland.request(token, COMMIT)
            wayland.wait(lambda: bool(tokens), TOKEN_TIMEOUT, "hand out an activation token")
            wayland.request(token, DESTROY_TOKEN)
    except WaylandError:
        return {}  # the app starts unfocused, as without a token
    return {"XDG_ACTIVATION_TOKEN": tokens[0], "DESKTOP_STARTUP_ID": tokens[0]}
