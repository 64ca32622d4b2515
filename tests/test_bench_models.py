"""`roundhouse bench models`: docs/models.md's table is the bench's output over the kept
figures; the image formulas are the vendors' published ones; what a request sent is read
from each protocol's body; a recording is found per protocol and task, and fails the task
when its fake refused a request or was not played to its end."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from roundhouse.bench.models import (
    FAMILIES,
    Measured,
    anthropic_image_tokens,
    gemini_image_tokens,
    load_measured,
    openai_image_tokens,
    qwen_image_tokens,
    table,
)
from roundhouse.cli import app
from roundhouse.config import ConfigError
from roundhouse.models.fakes import FAMILIES as PROTOCOL_FAMILIES
from roundhouse.models.fakes import protocol_of
from roundhouse.suite.recordings import FOLDER, load_recording, playing, sent_of, turns_of
from roundhouse.suite.tasks import load_suite

ROOT = Path(__file__).parents[1]
SUITE = ROOT / "tasks" / "basic"


def test_the_docs_table_of_families_is_the_bench_output() -> None:
    """Re-measured figures (bench models --runs ... --save) fail here until docs/models.md
    has the table again: print `roundhouse bench models` and paste it between the markers."""
    docs = (ROOT / "docs" / "models.md").read_text()
    rendered = table(load_measured(SUITE))
    begin, end = "<!-- bench models: begin -->\n", "\n<!-- bench models: end -->"
    kept = docs[docs.index(begin) + len(begin) : docs.index(end)]
    assert kept == rendered, f"docs/models.md's table is stale; it is now:\n{rendered}"
    printed = CliRunner().invoke(app, ["bench", "models", "--suite", str(SUITE)])
    assert printed.exit_code == 0 and rendered in printed.stdout
    assert "4 characters a token (an estimate)" in printed.stdout  # says what is estimated


def test_every_measured_family_has_its_recordings_and_a_row() -> None:
    measured = load_measured(SUITE)
    assert {m.spec.partition(":")[0] for m in measured} == set(PROTOCOL_FAMILIES)
    rendered = table(measured)
    assert "no recording yet" not in rendered
    for facts in FAMILIES:
        assert f"| {facts.family} | `{facts.spec}` |" in rendered
    for m in measured:  # every family over the suite's four GUI tasks
        assert m.tasks == 4 and m.requests >= m.tasks and m.image_tokens > 0


def test_the_image_formulas_are_the_vendors() -> None:
    assert anthropic_image_tokens(1280, 800) == 1366  # 1280*800/750, rounded up
    assert anthropic_image_tokens(1000, 1000) == 1334  # the documentation's ~1334
    # OpenAI's documented example: 1024x1024 high detail -> 768x768, 4 tiles, 765 tokens.
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105  # their 2048x4096 example: 6 tiles
    assert qwen_image_tokens(1288, 812) == 46 * 29 + 2
    assert gemini_image_tokens(384, 384) == 258 and gemini_image_tokens(1280, 800) == 4 * 258


def test_a_table_row_without_a_price_says_unknown_never_zero() -> None:
    row = Measured("openai-computer:computer-use-preview", 1, 1, {"1228x768": 1}, 1105, 400, 40)
    rendered = table([row])
    assert "unknown (no price in the table)" in rendered and "no recording yet" in rendered
    assert "| $0.0000 |" not in rendered


def _png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_what_a_request_sent_is_read_from_each_protocols_body() -> None:
    data = _png(30, 20)
    anthropic = {"source": {"type": "base64", "media_type": "image/png", "data": data}}
    openai = {"type": "input_image", "image_url": f"data:image/png;base64,{data}"}
    gemini = {"inlineData": {"mimeType": "image/png", "data": data}}
    sent = sent_of({"messages": [anthropic, openai, gemini], "system": "x" * 100})
    assert sent.images == [(30, 20)] * 3
    assert 100 < sent.text_chars < 400  # the JSON without the images


def test_every_recording_names_a_task_of_the_suite_and_reads() -> None:
    tasks = {found.task.id for found in load_suite(SUITE)}
    paths = sorted((SUITE / FOLDER).glob("*/*.yaml"))
    gui_tasks = {"gedit-type-save", "calculator-739", "browser-form-submit", "calc-read-ods"}
    for family in PROTOCOL_FAMILIES:  # issue 45: each protocol, the four GUI tasks
        assert {p.stem for p in paths if p.parent.name == family} == gui_tasks, family
    for path in paths:
        assert path.parent.name in PROTOCOL_FAMILIES and path.stem in tasks, path
        recording = load_recording(path)
        assert recording.why and recording.turns
        protocol = protocol_of(f"{path.parent.name}:")
        assert protocol is not None and len(turns_of(path, protocol)) == len(recording.turns)


def test_a_fake_that_refused_or_was_not_played_out_fails_the_run(tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text("turns:\n  - text: done\n")
    protocol = protocol_of("anthropic:claude-sonnet-4-5")
    assert protocol is not None and protocol_of("offline") is None
    with playing(turns_of(script, protocol), protocol) as fake:
        assert fake.env["RH_LOOPBACK_ONLY"] == "1"
        assert fake.env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
        assert fake.problem() == "the run ended with 1 recorded turn(s) not played"


@pytest.mark.parametrize("model", ["replay", "offline"])
def test_recordings_need_a_computer_use_protocol(model: str) -> None:
    said = CliRunner().invoke(
        app, ["batch", str(SUITE), "--agent", "computer", "--model", model, "--recordings"]
    )
    assert said.exit_code == 2 and "--recordings plays a computer-use protocol" in said.stderr


def test_a_computer_agents_run_does_not_record_over_the_tasks_answers() -> None:
    """TASK.answers.json are the host agent's answers, which --model replay reads."""
    said = CliRunner().invoke(
        app, ["batch", str(SUITE), "--agent", "computer", "--model", "anthropic:x", "--record"]
    )
    assert said.exit_code == 2 and "--record keeps the tasks' own agents' answers" in said.stderr


def test_a_script_its_fake_cannot_read_is_refused_naming_it(tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text("turns:\n  - {calls: [{name: click_at}], bogus: 1}\n")
    protocol = protocol_of("gemini:gemini-2.5-computer-use-preview-10-2025")
    assert protocol is not None
    with pytest.raises(ConfigError, match="unknown turn keys"):
        turns_of(script, protocol)
