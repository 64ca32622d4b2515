"""OSWorld's own getters, reading a roundhouse desktop through `roundhouse serve --osworld`
(run in .venv-osworld by test_getters_agree.py; stdin: {"server", "cases": [...]}).

Each case first uploads files into the desktop's home (as OSWorld's SetupController does),
then asks each named getter; JSON on stdout: per case, each getter's value or what raised."""

import contextlib
import io
import json
import logging
import sys
import types
from urllib.parse import urlsplit


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
        env = types.SimpleNamespace(
            controller=controller,
            vm_platform="Linux",
            cache_dir=job["cache"],
            vm_ip=address.hostname,
            server_port=address.port,
        )
        seen = []
        for case in job["cases"]:
            for path, text in case["files"].items():
                requests.post(
                    job["server"] + "/setup/upload",
                    data={"file_path": path},
                    files={"file_data": ("f", text.encode())},
                    timeout=10,
                )
            answers = {}
            for name in case["getters"]:
                try:
                    answers[name] = {"value": getattr(getters, "get_" + name)(env, {})}
                except Exception as error:  # noqa: BLE001 - what raised is the answer
                    answers[name] = {"raised": type(error).__name__}
            seen.append(answers)
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
