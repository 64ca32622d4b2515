"""Issue 45's `model_app`: under `--agent host`, a computer-use model is the AppAgent while
another model plans. `roundhouse run "open gedit, type ... and save it as PATH" --agent
host --model offline` with `ROUNDHOUSE_MODEL_APP=anthropic:claude-sonnet-4-5`, on a real
X11 virtual desktop, and on sway: the offline planner (the HostAgent) launches gedit and
hands it the subtask; Claude, through the real client against the fake Anthropic server
(which refuses what the API refuses), types the text and saves it by keys; the host
finishes the round. The file holds the text, and the session's record shows both agents,
each step's model and the round's cost (the offline planner's $0 and Claude's priced
steps)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roundhouse.models.anthropic import fake as anthropic_fake

KEY = "test-key"
SPEC = "anthropic:claude-sonnet-4-5"


@pytest.mark.parametrize("session", ["x11", "sway"])
def test_the_offline_host_hands_gedit_to_a_computer_use_app_agent(
    session: str, tmp_path: Path
) -> None:
    target = tmp_path / "hello.txt"
    # Keys only (design.md): gedit opens with its text focused, and Save As with its name
    # field focused, which takes a whole path.
    turns = [
        {
            "actions": [
                {"action": "type", "text": "Hello from roundhouse"},
                {"action": "key", "text": "ctrl+shift+s"},
            ]
        },
        {"actions": [{"action": "type", "text": str(target)}]},
        {"actions": [{"action": "key", "text": "Return"}]},
        {"text": f"The text is saved as {target}."},
    ]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    source = Path(__file__).parents[2] / "src"  # this checkout's, first
    env = {
        **os.environ,
        "RH_LOOPBACK_ONLY": "1",
        "PYTHONPATH": os.pathsep.join([str(source), str(source.parent)]),
        "ROUNDHOUSE_MODEL_APP": SPEC,
        "ANTHROPIC_API_KEY": KEY,
    }
    argv = [
        sys.executable, "-m", "roundhouse", "run",
        f"open gedit, type Hello from roundhouse and save it as {target}",
        "--agent", "host", "--model", "offline", "--yes",
        "--desktop", "virtual", "--session", session, "--logs", str(tmp_path / "logs"),
    ]  # fmt: skip
    with anthropic_fake.FakeAnthropic(anthropic_fake.load_script(script), key=KEY) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
        done = subprocess.run(
            argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=240, check=False,
        )  # fmt: skip
        refusals, left = fake.refusals, fake.remaining
    said = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    assert refusals == [], said  # every request was one the API takes
    assert done.returncode == 0 and left == 0, said
    assert target.read_text(encoding="utf-8").rstrip("\n") == "Hello from roundhouse", said
    [session] = (tmp_path / "logs").glob("session-*/session.json")
    [round_] = json.loads(session.read_text())["rounds"]
    assert round_["state"] == "FINISH", said
    steps = round_["steps"]
    agents = [(s["agent"], s["agent_name"], s["status"]) for s in steps]
    # The host launches gedit and assigns; Claude's four answers; the host finishes.
    assert agents[0] == ("host", "host", "ASSIGN") and agents[-1] == ("host", "host", "FINISH")
    app = [s for s in steps if s["agent"] == "app"]
    assert [s["status"] for s in app] == ["CONTINUE"] * 3 + ["FINISH"], agents
    assert {s["agent_name"].lower() for s in app} == {"gedit"}
    assert all(s["subtask"] and str(target) in s["subtask"] for s in app)
    # The cost: the offline planner's nothing, and each of Claude's steps priced.
    assert all(s["usage"]["cost"] == 0 for s in steps if s["agent"] == "host")
    assert all(s["usage"]["cost"] > 0 and s["usage"]["requests"] == 1 for s in app)
    # Both named in the printout (X11's WM_CLASS says Gedit, sway's app_id gedit).
    assert "step 2 [gedit]" in done.stderr.lower() and "[host] FINISH" in done.stderr
