"""--record writes answers that carry no fact of the machine they were recorded on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from roundhouse.core.states import RoundState
from roundhouse.models import ModelPool
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.machine_facts import MachineFact
from roundhouse.models.observation import PastStep, ShellObservation
from roundhouse.models.recording import RecordingModel
from roundhouse.testing.function_model import FunctionModel
from tests.helpers import SessionFactory, shell_answer

HOST = MachineFact("the hostname", "test-host-42", name=True)
FREE = MachineFact("the disk free space of /", "77.0 GiB")


def request_after(*printed: str) -> ModelRequest:
    history = tuple(
        PastStep("run_shell", {"command": "x"}, "CONTINUE", "success", {"stdout": out}, None)
        for out in printed
    )
    return ModelRequest(agent="linux", messages=(), observation=ShellObservation("q", history))


def shim(folder: Path, name: str, prints: str) -> None:
    """A command early on PATH that prints what another machine would."""
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{prints}'\n")
    script.chmod(0o755)


async def test_a_recorded_shell_answer_replays_the_facts_of_the_machine_it_runs_on(
    make_session: SessionFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = tmp_path / "kernel.json"
    session = await make_session(model="offline", record_answers=recorded)
    outcome = await session.run_round("what is the kernel version")
    assert outcome.state is RoundState.FINISH
    assert os.uname().release in (outcome.result or "")
    final = json.loads(json.loads(recorded.read_text())[-1]["answer"])
    assert final["result"] == "The kernel version is {{step 1 line 1}}."
    assert os.uname().release not in recorded.read_text()

    shim(tmp_path / "bin", "uname", "5.4.0-999-elsewhere")  # another machine
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    again = await make_session(model=f"replay:{recorded}", task="again")
    replayed = await again.run_round("what is the kernel version")
    assert replayed.state is RoundState.FINISH
    assert replayed.result == "The kernel version is 5.4.0-999-elsewhere."


async def test_an_answer_quoting_an_output_by_matching_holds_it(tmp_path: Path) -> None:
    answer = shell_answer("FINISH", result="test-host-42 has 77.0 GiB free.")
    model = RecordingModel(FunctionModel(lambda _: answer), tmp_path / "r.json", (HOST, FREE))
    await model.complete(request_after("test-host-42\n", "77.0 GiB\n"))
    [item] = json.loads((tmp_path / "r.json").read_text())
    held = json.loads(item["answer"])["result"]
    assert held == "{{step 1 line 1}} has {{step 2 line 1}} free."


async def test_a_fact_no_output_shows_is_refused_and_earlier_answers_kept(
    tmp_path: Path,
) -> None:
    answers = iter(
        [
            shell_answer("CONTINUE", command="df -h /"),
            shell_answer("FINISH", result="About 77.0 GiB are free."),  # computed, not quoted
        ]
    )
    model = RecordingModel(FunctionModel(lambda _: next(answers)), tmp_path / "r.json", (FREE,))
    await model.complete(request_after())
    with pytest.raises(ModelError, match=r"refuses answer 2: its result quotes the disk free"):
        await model.complete(request_after("overlay 252G 175G 78G 70% /\n"))
    assert len(json.loads((tmp_path / "r.json").read_text())) == 1


async def test_facts_in_free_text_are_redacted_and_in_an_action_refused(tmp_path: Path) -> None:
    thinking = shell_answer("CONTINUE", command="ls", thought="This is test-host-42.")
    model = RecordingModel(FunctionModel(lambda _: thinking), tmp_path / "r.json", (HOST,))
    await model.complete(request_after())
    [item] = json.loads((tmp_path / "r.json").read_text())
    assert json.loads(item["answer"])["thought"] == "This is <the hostname>."

    acting = shell_answer("CONTINUE", command="ssh test-host-42 uptime")
    model = RecordingModel(FunctionModel(lambda _: acting), tmp_path / "s.json", (HOST,))
    with pytest.raises(ModelError, match="its action quotes the hostname"):
        await model.complete(request_after())


def test_the_pool_records_with_this_machines_facts(tmp_path: Path) -> None:
    from roundhouse.config import Settings

    pool = ModelPool(Settings(record_answers=tmp_path / "r.json"))
    model = pool.get("offline")
    recorder = model.inner  # priced outside, recorded inside
    assert isinstance(recorder, RecordingModel)
    assert any(fact.what == "the kernel release" for fact in recorder.facts)
    assert not any(fact.personal for fact in recorder.facts)
