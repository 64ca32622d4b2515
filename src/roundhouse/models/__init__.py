"""Language models by spec: `offline`, `replay:FILE`, `openai:NAME`; for --agent computer
`anthropic:NAME`, `openai-computer:NAME`, `gemini:NAME`, and the open models on a server of
the user's own, `uitars:NAME`, `qwen-vl:NAME`, `opencua:NAME`. A family is one folder under
models/ and one entry here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from roundhouse.config import ConfigError, Settings
from roundhouse.core.limits import Limits
from roundhouse.core.usage import NOTHING_SPENT, Usage
from roundhouse.models.base import LanguageModel, ModelError
from roundhouse.models.offline.model import OfflineModel
from roundhouse.models.priced import PricedModel
from roundhouse.models.pricing import PriceTable
from roundhouse.models.recording import RecordingModel
from roundhouse.models.replay import ReplayModel

MODEL_FORMS = (
    "offline, replay:FILE, openai:NAME, or anthropic:NAME, openai-computer:NAME, "
    "gemini:NAME, uitars:NAME, qwen-vl:NAME or opencua:NAME (with --agent computer)"
)
LOCAL_KINDS = ("uitars", "qwen-vl", "opencua")  # models/local/: the `openai` endpoint's
# The specs' kinds that speak a computer-use protocol: they see screenshots and act by
# pixels, as the computer agent, or as the host's AppAgent (`model_app`).
COMPUTER_USE_KINDS = ("anthropic", "openai-computer", "gemini", *LOCAL_KINDS)


def acts_by_pixels(spec: str) -> bool:
    """Whether `spec` names a computer-use model (anthropic:NAME, ...), not one that answers
    roundhouse's own JSON (offline, replay:FILE, openai:NAME)."""
    kind, colon, _ = spec.partition(":")
    return bool(colon) and kind in COMPUTER_USE_KINDS


def make_model(spec: str, settings: Settings) -> LanguageModel:
    kind, _, argument = spec.partition(":")
    if spec == "offline":
        return OfflineModel()
    if kind == "replay":
        if not argument:
            raise ConfigError("--model replay needs a file: replay:answers.yaml")
        return ReplayModel(Path(argument))
    if kind == "openai":
        if not argument:
            raise ConfigError("--model openai needs a model name: openai:gpt-4o-mini")
        # Imported here: the SDK takes a while to load, and most runs never need it.
        from roundhouse.models.openai_client import OpenAIModel

        try:
            return OpenAIModel(argument, settings.openai)
        except ModelError as error:
            raise ConfigError(str(error)) from None
    if kind == "anthropic":
        if not argument:
            raise ConfigError("--model anthropic needs a model name: anthropic:claude-sonnet-4-5")
        from roundhouse.models.anthropic.client import AnthropicModel

        try:
            return AnthropicModel(argument, settings.anthropic)
        except ModelError as error:
            raise ConfigError(str(error)) from None
    if kind == "openai-computer":
        if not argument:
            raise ConfigError(
                "--model openai-computer needs a model name: openai-computer:computer-use-preview"
            )
        from roundhouse.models.openai_computer.client import OpenAIComputerModel

        try:
            return OpenAIComputerModel(argument, settings.openai)
        except ModelError as error:
            raise ConfigError(str(error)) from None
    if kind == "gemini":
        if not argument:
            raise ConfigError(
                "--model gemini needs a model name: gemini:gemini-2.5-computer-use-preview-10-2025"
            )
        from roundhouse.models.gemini.client import GeminiModel

        try:
            return GeminiModel(argument, settings.gemini)
        except ModelError as error:
            raise ConfigError(str(error)) from None
    if kind in LOCAL_KINDS:
        if not argument:
            raise ConfigError(f"--model {kind} needs a model name: uitars:ui-tars-1.5-7b")
        from roundhouse.models.local.client import LocalModel

        try:
            return LocalModel(kind, argument, settings.openai, settings.local)
        except ModelError as error:
            raise ConfigError(str(error)) from None
    raise ConfigError(f"unknown model {spec!r}: use {MODEL_FORMS}")


class ModelPool:
    """One model object per spec for a whole session, so that agents sharing a spec share
    it (a replay file is read in order across agents and rounds). Each comes priced, and
    held to the session's limits before each request (priced.py): the agents and the judge
    alike."""

    def __init__(
        self,
        settings: Settings,
        preset: Mapping[str, LanguageModel] | None = None,
        *,
        limits: Limits | None = None,
        spent: Callable[[], Usage] = lambda: NOTHING_SPENT,
    ) -> None:
        """`preset`: spec → model, for fakes. `limits`: the session's (default: the
        settings'). `spent`: what the session has spent so far (its records' sum), which
        the limits are checked against."""
        self.settings = settings
        self.prices = PriceTable(settings.prices)
        self.limits = limits if limits is not None else Limits.of(settings)
        self.spent = spent
        self._preset = dict(preset or {})
        self._models: dict[str, PricedModel] = {}

    def get(self, spec: str) -> PricedModel:
        if spec not in self._models:
            model = self._preset.get(spec) or make_model(spec, self.settings)
            if self.settings.record_answers is not None and spec not in self._preset:
                model = RecordingModel(model, self.settings.record_answers)
            self._models[spec] = PricedModel(model, self.prices, self.limits, self.spent)
        return self._models[spec]

    async def close(self) -> None:
        """Close the HTTP clients of the models that have them."""
        for model in self._models.values():
            await model.aclose()
