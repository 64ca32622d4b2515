"""Runs OSWorld's own metric functions, in the OSWorld environment `make test` builds
(.venv-osworld): desktop-env 1.0.2 as published, never our code.

    .venv-osworld/bin/python tests/osworld/theirs.py < cases.json > outcomes.json

Each case is {"function": name, "args": [...], "kwargs": {...}}; each outcome is {"value":
float} or {"raised": "TypeName"}. Their functions print and log as they go: stdout is kept
for the answer alone.
"""

import contextlib
import io
import json
import logging
import sys


def main() -> None:
    cases = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        from desktop_env.evaluators import metrics

        outcomes = []
        for case in cases:
            function = getattr(metrics, case["function"])
            try:
                value = function(*case["args"], **case.get("kwargs", {}))
                outcomes.append({"value": float(value)})
            except Exception as error:  # noqa: BLE001 - what raised is the outcome
                outcomes.append({"raised": type(error).__name__})
    json.dump(outcomes, sys.stdout)


if __name__ == "__main__":
    main()
