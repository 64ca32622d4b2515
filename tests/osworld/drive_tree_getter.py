"""OSWorld's get_active_url_from_accessTree on trees we give it (run in .venv-osworld by
test_getters_agree_apps.py; stdin: [{"tree", "config"}]; stdout: each answer)."""

import contextlib
import io
import json
import logging
import sys
import types


def main():
    cases = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        from desktop_env.evaluators import getters

        seen = []
        for case in cases:
            controller = types.SimpleNamespace(
                get_accessibility_tree=lambda tree=case["tree"]: tree
            )
            env = types.SimpleNamespace(controller=controller)
            try:
                seen.append({"value": getters.get_active_url_from_accessTree(env, case["config"])})
            except Exception as error:  # noqa: BLE001 - what raised is the answer
                seen.append({"raised": type(error).__name__})
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
