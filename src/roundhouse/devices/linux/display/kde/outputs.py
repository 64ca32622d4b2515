"""KWin's outputs: a virtual desktop's second monitor scaled, and every monitor read.

KWin's virtual backend makes `--output-count` outputs, all of `--width` x `--height`
pixels, side by side at scale 1 (one mode each: no size of their own). What Plasma's
display settings use, kde_output_management_v2 (KWin 5.27 and 6, the same requests), then
sets the second one's scale: 1.5 makes 1280x800 pixels 853x533 of the desktop's.

The monitors are read as any client reads them (wl_output and xdg-output, offered to every
client, its permission checks on or not): names, places in logical pixels, modes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from roundhouse.devices.linux.display.base import Monitor, numbered
from roundhouse.devices.linux.display.wayland.globals import Output, bind_outputs
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError, decode

MANAGEMENT = "kde_output_management_v2"
DEVICE = "kde_output_device_v2"
# kde_output_device_v2 events; kde_output_configuration_v2 requests and events.
DEVICE_DONE, DEVICE_NAME = 3, 14
CONFIG_POSITION, CONFIG_SCALE, CONFIG_APPLY, CONFIG_DESTROY = 3, 4, 5, 6
APPLIED, FAILED = 0, 1
APPLY_TIMEOUT = 10.0
# Wayland's fractional scales are 120ths (wp_fractional_scale_v1); KWin rounds a scaled
# output's logical size to whole pixels (1280 / 1.5 = 853), so the ratio of its pixels to
# its logical ones is read to the nearest 120th (1.5006 is 1.5).
SCALE_STEPS = 120


@dataclass
class _Device:
    object_id: int
    name: str = ""
    done: bool = False


def scale_outputs(env: Mapping[str, str], scales: Mapping[str, float]) -> None:
    """Set each named output's scale (its place: right of those before it, tops aligned),
    as Plasma's display settings do; WaylandError where KWin refuses."""
    with Connection.open(env, APPLY_TIMEOUT) as wayland:
        if wayland.find(MANAGEMENT) is None:
            raise WaylandError(f"KWin offers this program no {MANAGEMENT} (output settings)")
        devices = _devices(wayland)
        missing = sorted(set(scales) - {device.name for device in devices})
        if missing:
            named = ", ".join(device.name for device in devices)
            raise WaylandError(f"KWin has no output {', '.join(missing)} (it has {named})")
        paired = _left_to_right(wayland, devices)
        # Ids in the order they are sent: the server takes a new id only as the next one.
        management = wayland.bind(MANAGEMENT, 2)
        answer: list[int] = []
        configuration = wayland.new_id(lambda opcode, _payload, _fds: answer.append(opcode))
        wayland.request(management, 0, "n", configuration)
        left = 0
        for device, output in paired:
            scale = scales.get(device.name, 1.0)
            wayland.request(configuration, CONFIG_SCALE, "of", device.object_id, scale)
            wayland.request(configuration, CONFIG_POSITION, "oii", device.object_id, left, 0)
            left += round(output.width / scale)
        wayland.request(configuration, CONFIG_APPLY)
        wayland.wait(lambda: bool(answer), APPLY_TIMEOUT, "apply the output settings")
        wayland.request(configuration, CONFIG_DESTROY)
        if answer[0] != APPLIED:
            raise WaylandError(f"KWin refused the output settings {dict(scales)}")


def read_monitors(env: Mapping[str, str]) -> list[Monitor]:
    """KWin's outputs as monitors, numbered left to right."""
    with Connection.open(env) as wayland:
        outputs = bind_outputs(wayland)
    return numbered([(output.name, output.rect, output_scale(output)) for output in outputs])


def output_scale(output: Output) -> float:
    """How many of the output's pixels make a logical one, to the nearest 120th."""
    if not output.rect.width:
        return 1.0
    return round(output.width / output.rect.width * SCALE_STEPS) / SCALE_STEPS


def _devices(wayland: Connection) -> list[_Device]:
    """Every kde_output_device_v2, bound and described (its name: version 2 on)."""
    found = [g for g in wayland.registry().values() if g.interface == DEVICE]
    devices = []
    for one in found:
        device = _Device(0)

        def on_event(
            opcode: int, payload: bytes, fds: deque[int], device: _Device = device
        ) -> None:
            if opcode == DEVICE_NAME:
                (device.name,) = decode("s", payload, fds)
            elif opcode == DEVICE_DONE:
                device.done = True

        device.object_id = wayland.bind(DEVICE, 2, on_event, one)
        devices.append(device)
    wayland.wait(lambda: all(d.done for d in devices), None, "describe its output devices")
    return devices


def _left_to_right(wayland: Connection, devices: list[_Device]) -> list[tuple[_Device, Output]]:
    """Each device with its wl_output (its mode's pixels), left to right as they are."""
    outputs = {output.name: output for output in bind_outputs(wayland)}
    missing = [device.name for device in devices if device.name not in outputs]
    if missing:
        raise WaylandError(f"KWin's outputs {', '.join(missing)} have no wl_output")
    paired = [(device, outputs[device.name]) for device in devices]
    return sorted(paired, key=lambda pair: (pair[1].rect.left, pair[1].rect.top))
