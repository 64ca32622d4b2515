"""A job for tests/osworld/drive_env.py from OSWorld's task files and our recorded answers:
each task's answers' shell commands become python actions in OSWorld's pyautogui action
space; with --nothing, each task is also run once with no action (it must score 0).

    python3 scripts/osworld-answers-job.py OSWorld/evaluation_examples/META.json \\
        tasks/osworld/answers http://127.0.0.1:5000 [--files-base URL] [--nothing] > job.json
    PYTHONPATH=tests/osworld/standins:src .venv-osworld/bin/python \\
        tests/osworld/drive_env.py < job.json

--files-base URL serves the dataset's files (the download steps' host is replaced by it):
OSWorld's SetupController fetches them on the harness's side and uploads them.
"""

import argparse
import json
import re
import sys
from pathlib import Path

DATASET_HOSTS = re.compile(r"https://(hf-mirror\.com|huggingface\.co)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("meta", type=Path, help="a meta file: {domain: [task ids]}")
    parser.add_argument("answers", type=Path)
    parser.add_argument("server")
    parser.add_argument("--files-base")
    parser.add_argument("--nothing", action="store_true")
    parser.add_argument("--cache", default="cache")
    args = parser.parse_args()
    root = args.meta.parent / "examples"
    runs = []
    for domain, ids in json.loads(args.meta.read_text()).items():
        for task_id in ids:
            text = (root / domain / f"{task_id}.json").read_text()
            if args.files_base:
                text = DATASET_HOSTS.sub(args.files_base, text)
            steps = [
                json.loads(a["answer"])
                for a in json.loads((args.answers / f"{task_id}.answers.json").read_text())
            ]
            commands = [
                step["action"]["arguments"]["command"]
                for step in steps
                if step["action"]["function"] == "run_shell"
            ]
            actions = [
                f"import subprocess; subprocess.run({command!r}, shell=True, "
                "executable='/bin/bash', timeout=60)"
                for command in commands
            ]
            runs.append({"task": json.loads(text), "actions": actions})
            if args.nothing:
                runs.append({"task": json.loads(text), "actions": []})
    json.dump({"server": args.server, "runs": runs, "cache": args.cache}, sys.stdout)


if __name__ == "__main__":
    main()
