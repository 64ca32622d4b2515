"""OSWorld's own DesktopEnv, pointed at `roundhouse serve --osworld` through roundhouse's
provider (run in .venv-osworld by test_server.py; stdin: {"server", "runs": [...]}).

Each run resets the environment with a task (its config runs through OSWorld's
SetupController), takes the actions given (pyautogui commands, or "FAIL"), then asks OSWorld's
evaluator for the score. JSON on stdout: per run, the score and what the reset gave."""

import contextlib
import io
import json
import logging
import sys


def main():
    job = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        from roundhouse.osworld.provider import roundhouse_desktop_env

        env = roundhouse_desktop_env(
            job["server"],
            action_space="pyautogui",
            require_a11y_tree=True,
            cache_dir=job["cache"],
        )
        seen = []
        for run in job["runs"]:
            observation = env.reset(task_config=run["task"])
            for action in run["actions"]:
                env.step(action, pause=0.2)
            seen.append(
                {
                    "score": float(env.evaluate()),
                    "screenshot": (observation["screenshot"] or b"")[:4] == b"\x89PNG",
                    "tree": "desktop-frame" in (observation["accessibility_tree"] or ""),
                }
            )
        env.close()
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
