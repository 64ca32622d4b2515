"""OSWorld's own getters, reading a roundhouse desktop through `roundhouse serve --osworld`
(run in .venv-osworld by the getter agreement tests; stdin: {"server", "cache", "cases"}).

Each case first uploads files into the desktop's home (as OSWorld's SetupController does)
and runs its shell commands there, then asks each named getter: "getters" (each with an
empty config) or "calls" ([name, config] pairs). JSON on stdout: per case, each answer's
value or what raised; a value that is a file the getter wrote is given as its sha256."""

import contextlib
import hashlib
import io
import json
import logging
import os
import sys
import types
from urllib.parse import urlsplit


def shown(value):
    if isinstance(value, str) and os.path.isfile(value):
        with open(value, "rb") as file:
            return {"file": hashlib.sha256(file.read()).hexdigest()}
    if isinstance(value, list):
        return [shown(item) for item in value]
    return value


def main():
    job = json.load(sys.stdin)
    address = urlsplit(job["server"])
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        import requests
        from desktop_env.controllers.python import PythonController
        from desktop_env.evaluators import getters

        controller = PythonController(address.hostname, address.port)
        controller.retry_times, controller.retry_interval = 1, 0.2
        info = requests.get(job["server"] + "/roundhouse/info", timeout=10).json()
        env = types.SimpleNamespace(
            controller=controller,
            vm_platform="Linux",
            cache_dir=job["cache"],
            vm_ip=address.hostname,
            server_port=address.port,
            vlc_port=info.get("vlc_port"),
        )
        seen = []
        for case in job["cases"]:
            for path, text in case["files"].items():
                data = text.encode() if isinstance(text, str) else bytes.fromhex(text["hex"])
                requests.post(
                    job["server"] + "/setup/upload",
                    data={"file_path": path},
                    files={"file_data": ("f", data)},
                    timeout=10,
                )
            for command in case.get("commands", []):
                controller.execute_python_command(
                    f"import subprocess; subprocess.run({command!r}, shell=True)"
                )
            calls = case.get("calls") or [[name, {}] for name in case["getters"]]
            answers = []
            for name, config in calls:
                try:
                    answers.append({"value": shown(getattr(getters, "get_" + name)(env, config))})
                except Exception as error:  # noqa: BLE001 - what raised is the answer
                    answers.append({"raised": type(error).__name__})
            named = dict(zip(case.get("getters", []), answers, strict=False))
            seen.append(answers if "calls" in case else named)
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
