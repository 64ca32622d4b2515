"""OSWorld's own PythonController and SetupController, driving `roundhouse serve --osworld`
(run in .venv-osworld by test_server.py; stdin: {"server": "http://host:port", ...}).

It does what OSWorld's harness does with a VM and writes what it saw as JSON on stdout."""

import base64
import contextlib
import io
import json
import logging
import sys
import time
from urllib.parse import urlsplit


def wait_for(check, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def main():
    job = json.load(sys.stdin)
    address = urlsplit(job["server"])
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        seen = drive(address.hostname, address.port, job)
    json.dump(seen, sys.stdout)


def drive(host, port, job):
    import requests
    from desktop_env.controllers.python import PythonController
    from PIL import Image

    controller = PythonController(host, port)
    controller.retry_times, controller.retry_interval = 1, 0.5
    seen = {}
    if job.get("only") == "screenshot":
        shot = controller.get_screenshot()
        seen["png"] = shot is not None and shot[:8] == b"\x89PNG\r\n\x1a\n"
        return seen
    shot = controller.get_screenshot()
    seen["png"] = shot[:8] == b"\x89PNG\r\n\x1a\n"
    seen["png_size"] = list(Image.open(io.BytesIO(shot)).size)
    seen["screen_size"] = controller.get_vm_screen_size()
    seen["platform"] = controller.get_vm_platform()
    seen["cursor"] = requests.get(f"http://{host}:{port}/cursor_position", timeout=10).json()
    written = controller.execute_python_command(
        "open('/home/user/Desktop/from_osworld.txt', 'w').write('written by OSWorld')"
    )
    seen["execute"] = written
    seen["file"] = base64.b64encode(
        controller.get_file("/home/user/Desktop/from_osworld.txt") or b""
    ).decode()
    seen["missing_file"] = controller.get_file("/home/user/nothing-here.txt")
    seen["listing"] = controller.get_vm_directory_tree("/home/user/Desktop")
    seen["desktop_path"] = controller.get_vm_desktop_path()
    seen["terminal_before"] = controller.get_terminal_output()
    launched = requests.post(
        f"http://{host}:{port}/setup/launch", json={"command": ["gedit"]}, timeout=10
    )
    seen["launch"] = launched.text

    def gedit_tree():
        tree = controller.get_accessibility_tree()
        return (
            tree if tree and 'application name="gedit"' in tree and "st:focused" in tree else None
        )

    tree = wait_for(gedit_tree)
    seen["tree_has_gedit"] = tree is not None
    seen["tree_namespaces"] = "https://accessibility.ubuntu.example.org/ns/state" in (tree or "")
    controller.execute_action({"action_type": "TYPING", "parameters": {"text": "typed by OSWorld"}})
    seen["typed"] = bool(
        wait_for(lambda: "typed by OSWorld" in (controller.get_accessibility_tree() or ""))
    )
    seen["window_size"] = controller.get_vm_window_size("gedit")
    return seen


if __name__ == "__main__":
    main()
