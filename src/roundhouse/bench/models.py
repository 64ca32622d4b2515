"""`roundhouse bench models`: each computer-use family's spec, variables, tool or grammar,
coordinates and screenshot, and its tokens and cost per step, from the recorded suite runs
(`roundhouse batch tasks/basic --agent computer --model SPEC --recordings`).

What is counted from what was sent, and what is not:
- the screenshots are the images the requests carried, as the fake received them, counted
  by the vendor's published image formula (IMAGE_FORMULAS);
- the rest of each request (instructions, tools, the transcript it carries) is its JSON
  without the images, at 4 characters a token: an estimate, not the vendor's tokenizer;
- the output is the recording's own answers (what the fake played), at 4 characters a
  token: scripted, not what a model would write;
- each request is counted as sent: where the vendor keeps the conversation (OpenAI's
  previous_response_id) it also bills what the chain holds, which is not counted here, and
  Anthropic's prompt cache (reads at a tenth) is not counted either;
- the cost is models/pricing.py's table over those tokens ("unknown" where it has no price).

The figures of tasks/basic are kept in tasks/basic/recordings/measured.json (`--runs OUT
... --save` rewrites it), and docs/models.md holds the table rendered from it (a test
holds the two together).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from roundhouse.bench.app import bench_app
from roundhouse.bench.tree import SOURCE_TREE
from roundhouse.config import read_yaml
from roundhouse.core.usage import Usage
from roundhouse.models.fakes import protocol_of
from roundhouse.models.pricing import LOCAL_PREFIXES, PriceTable
from roundhouse.suite.recordings import FOLDER, SENT_SUFFIX

SUITE = SOURCE_TREE / "tasks" / "basic"
MEASURED = "measured.json"  # in SUITE/recordings/
CHARS_PER_TOKEN = 4
# The output's parts a turn of a script holds besides the model's answer.
NOT_ANSWERED = frozenset({"usage", "status", "headers", "delay"})


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's vision documentation: tokens = width * height / 750."""
    return math.ceil(width * height / 750)


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's high detail: fit 2048x2048, the short side to at most 768, then 85 tokens
    and 170 per 512-pixel tile."""
    scale = min(1.0, 2048 / max(width, height))
    scale *= min(1.0, 768 / (min(width, height) * scale))
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def qwen_image_tokens(width: int, height: int) -> int:
    """Qwen2.5-VL (UI-TARS-1.5's base): one token per 28x28 patch of the smart-resized image,
    and the two that open and close it."""
    return (width // 28) * (height // 28) + 2


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini 2.x: 258 tokens for an image of at most 384 pixels a side, else 258 per
    768x768 tile (Gemini 3's media_resolution counts otherwise)."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


@dataclass(frozen=True)
class FamilyFacts:
    """What a family is, from the code: for the table's first columns."""

    family: str
    spec: str
    tool: str
    coordinates: str
    image_formula: str
    image_tokens: Callable[[int, int], int] | None


FAMILIES = (
    FamilyFacts(
        "anthropic", "anthropic:claude-sonnet-4-5",
        "computer_20250124 (beta computer-use-2025-01-24); computer_20251124 for Opus 4.5+ "
        "and Sonnet 4.6+; roundhouse's tools as custom tools",
        "pixels of the image sent", "w*h/750", anthropic_image_tokens,
    ),
    FamilyFacts(
        "openai-computer", "openai-computer:computer-use-preview",
        "computer_use_preview (display size, environment); the GA `computer` tool for "
        "gpt-5.4+", "pixels of the image sent", "85 + 170 per 512 px tile",
        openai_image_tokens,
    ),
    FamilyFacts(
        "gemini", "gemini:gemini-2.5-computer-use-preview-10-2025",
        "computer_use (browser functions excluded); roundhouse's tools as declarations",
        "0-999 grid", "258 per 768 px tile (Gemini 2.x)", gemini_image_tokens,
    ),
    FamilyFacts(
        "uitars", "uitars:ui-tars-1.5-7b",
        "UI-TARS Thought/Action grammar, its own action space only",
        "pixels of the smart-resized image (1.5); 0-1000 before", "one per 28x28 patch + 2",
        qwen_image_tokens,
    ),
    FamilyFacts(
        "qwen-vl", "qwen-vl:qwen2.5-vl-7b-instruct",
        "the computer_use function in its tools block; roundhouse's tools beside it",
        "pixels of the smart-resized image (2.5); 0-999 (Qwen3-VL)",
        "one per 28x28 patch + 2 (32x32 for Qwen3-VL)", qwen_image_tokens,
    ),
    FamilyFacts(
        "opencua", "opencua:opencua-7b",
        "OpenCUA's ## Thought / ## Action / ## Code, its pyautogui subset only",
        "qwen25: pixels of the smart-resized image (7B, 32B); relative 0-1 (A3B); "
        "absolute", "one per 28x28 patch + 2 (OpenCUA-7B, on Qwen2.5-VL)", qwen_image_tokens,
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Measured:
    """One family's recorded runs over a suite, summed."""

    spec: str
    tasks: int
    requests: int
    images: dict[str, int]  # "WxH" -> how many were sent
    image_tokens: int  # by the vendor's formula
    text_chars: int  # of the requests without their images
    output_chars: int  # of the recording's answers that were played


def measure(out: Path, suite: Path) -> Measured:
    """A recorded batch's figures: OUT/work/*.sent.json and the suite's recordings."""
    files = sorted((out / "work").glob("*" + SENT_SUFFIX))
    if not files:
        raise typer.BadParameter(f"{out} holds no {SENT_SUFFIX}: run batch --recordings into it")
    sent = [json.loads(path.read_text()) for path in files]
    spec = str(sent[0]["model"])
    protocol = protocol_of(spec)
    facts = _facts(spec)
    assert protocol is not None and facts.image_tokens is not None
    images: dict[str, int] = {}
    image_tokens = text_chars = 0
    for run in sent:
        for request in run["requests"]:
            text_chars += int(request["text_chars"])
            for width, height in request["images"]:
                images[f"{width}x{height}"] = images.get(f"{width}x{height}", 0) + 1
                image_tokens += facts.image_tokens(width, height)
    tasks = [path.name.removesuffix(SENT_SUFFIX) for path in files]
    output = sum(
        _answer_chars(turn)
        for task in tasks
        for turn in read_yaml(suite / FOLDER / protocol.family / f"{task}.yaml", task)["turns"]
    )
    requests = sum(len(run["requests"]) for run in sent)
    return Measured(spec, len(sent), requests, images, image_tokens, text_chars, output)


def _answer_chars(turn: dict[str, Any]) -> int:
    return len(json.dumps({k: v for k, v in turn.items() if k not in NOT_ANSWERED}))


def _facts(spec: str) -> FamilyFacts:
    protocol = protocol_of(spec)
    return next(f for f in FAMILIES if protocol is not None and f.family == protocol.family)


def _variables(family: str) -> str:
    protocol = protocol_of(f"{family}:")
    assert protocol is not None
    return ", ".join(f"`{name}`" for name in (*protocol.key_vars, *protocol.url_vars))


def table(measured: Iterable[Measured], prices: PriceTable | None = None) -> str:
    """The Markdown table: a row per family, its measured columns where it has recordings."""
    prices = prices or PriceTable()
    found = {_facts(m.spec).family: m for m in measured}
    lines = [
        "| family | spec | keys and variables | tool or grammar | coordinates | screenshot "
        "sent (1280x800 desktop) | tasks / steps | input tokens per step (images + text) "
        "| output tokens per step | cost per step |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for facts in FAMILIES:
        m = found.get(facts.family)
        cells = [
            facts.family, f"`{facts.spec}`", _variables(facts.family), facts.tool,
            facts.coordinates,
        ]  # fmt: skip
        if m is None:
            cells += ["no recording yet", "-", "-", "-", "-"]
        else:
            steps = max(m.requests, 1)
            images = round(m.image_tokens / steps)
            text = round(m.text_chars / CHARS_PER_TOKEN / steps)
            output = round(m.output_chars / CHARS_PER_TOKEN / steps)
            usage = Usage(requests=1, input_tokens=images + text, output_tokens=output)
            cost = prices.priced(m.spec, usage).cost
            sizes = ", ".join(sorted(m.images))
            cells += [
                f"{sizes} ({facts.image_formula})",
                f"{m.tasks} / {m.requests}",
                f"{images + text} ({images} + {text})",
                str(output),
                _cost(m.spec, cost),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cost(spec: str, cost: float | None) -> str:
    if cost is None:
        return "unknown (no price in the table)"
    if spec.startswith(LOCAL_PREFIXES) and cost == 0:
        return "$0 (your own server; `prices:` sets one)"
    return f"${cost:.4f}"


def load_measured(suite: Path) -> list[Measured]:
    path = suite / FOLDER / MEASURED
    if not path.is_file():
        raise typer.BadParameter(f"no {path}: measure batch --recordings runs with --runs OUT")
    return [Measured(**entry) for entry in json.loads(path.read_text())]


def save_measured(suite: Path, measured: list[Measured]) -> Path:
    path = suite / FOLDER / MEASURED
    path.write_text(json.dumps([asdict(m) for m in measured], indent=1) + "\n")
    return path


@bench_app.command("models")
def models_command(
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
            metavar="OUT",
            help="A batch --recordings folder to measure (repeatable); without it, the "
            "figures kept in SUITE/recordings/measured.json",
        ),
    ] = None,
    suite: Annotated[Path, typer.Option(help="The suite the recordings lie in")] = SUITE,
    save: Annotated[
        bool, typer.Option("--save", help="Keep the measured figures in measured.json")
    ] = False,
) -> None:
    """Each computer-use family: spec, variables, tool or grammar, coordinates, screenshot
    sent, and its tokens and cost per step from the recorded suite runs."""
    measured = [measure(out, suite) for out in runs] if runs else load_measured(suite)
    if save and runs:
        typer.echo(f"kept in {save_measured(suite, measured)}", err=True)
    typer.echo(table(measured))
    typer.echo(
        "\nScreenshots: the images sent, by the vendor's formula. Text: the requests' JSON "
        f"without images, at {CHARS_PER_TOKEN} characters a token (an estimate). Output: the "
        f"recordings' scripted answers, at {CHARS_PER_TOKEN} characters a token. Each request "
        "as sent (a conversation the vendor keeps is billed beyond it; a prompt cache is "
        "not counted). Cost: models/pricing.py."
    )
