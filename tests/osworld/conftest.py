"""Fixtures for the OSWorld tests: OSWorld's own code, in the environment `make test`
builds (.venv-osworld: desktop-env 1.0.2 without its dependencies, plus the light ones it
imports), run beside ours; and the task files we wrote in OSWorld's format (examples/)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
OSWORLD_PYTHON = ROOT / ".venv-osworld" / "bin" / "python"
HERE = Path(__file__).resolve().parent
STANDINS = HERE / "standins"
EXAMPLES = HERE / "examples"
THEIRS_TIMEOUT = 300.0


@pytest.fixture(scope="session")
def osworld_python() -> Path:
    """OSWorld's Python. Missing, the tests fail and say how to build it (never a skip:
    `make test` builds it)."""
    if not OSWORLD_PYTHON.exists():
        pytest.fail(f"{OSWORLD_PYTHON} is missing: `make osworld-venv` builds OSWorld's code")
    return OSWORLD_PYTHON


def theirs_env() -> dict[str, str]:
    """The environment OSWorld's code runs in: the stand-ins and our provider importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(STANDINS), str(ROOT / "src")])
    env.pop("PYTHONHOME", None)
    return env


def run_theirs(
    python: Path, script: str | Path, payload: Any, cwd: Path, env: dict[str, str] | None = None
) -> Any:
    """Run a script of ours in OSWorld's Python (it imports OSWorld's code), JSON in and
    out through stdin and stdout; `env` adds to its environment."""
    done = subprocess.run(
        [str(python), str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**theirs_env(), **(env or {})},
        timeout=THEIRS_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{script} exited {done.returncode}: {done.stderr[-3000:]}")
    return json.loads(done.stdout)
