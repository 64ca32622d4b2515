"""One typed settings object, built once at the entry point and passed down.

Sources, later ones winning: defaults < roundhouse.yaml < ROUNDHOUSE_* environment < flags.
An unknown key or a value of the wrong type is a ConfigError that names the key and where
it came from. The seeds' upper-case keys (MAX_STEP, SLEEP_TIME, ...) are accepted in the file.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

ENV_PREFIX = "ROUNDHOUSE_"
DEFAULT_CONFIG_FILE = Path("roundhouse.yaml")


class ConfigError(ValueError):
    """A configuration problem a user can fix; the message says which key and where."""


class ShellPolicy(enum.StrEnum):
    CONFIRM = "confirm"  # destructive commands need a yes
    ALLOW = "allow"  # run anything
    DENY = "deny"  # refuse destructive commands outright


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Price(_Section):
    """Dollars per million tokens."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class OpenAISettings(_Section):
    base_url: str | None = None
    api_key: str | None = None
    api_version: str | None = None  # Azure OpenAI
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    # Seconds one request may spend on all its attempts and the waits between them; a storm
    # of 429s (each asking to wait) ends with an error once this is spent.
    retry_budget: float = Field(default=300.0, gt=0)
    vision: bool = True
    image_max_side: int = Field(default=1280, ge=64)
    structured_output: bool = True
    # Offer the tools as native tool calls too (the endpoint's "tools"); the action may then
    # come as a tool call, merged into the JSON answer before the one parser reads it. Off
    # by default: the JSON answer works with every endpoint.
    native_tools: bool = False
    # openai-computer: which computer tool: auto (by the model: the GA `computer` for
    # gpt-5.4 and later, computer_use_preview for computer-use-preview), or either.
    computer_tool: Literal["auto", "computer", "computer_use_preview"] = "auto"


class AnthropicSettings(_Section):
    """The Messages API (`anthropic:MODEL`); the key and the URL fall back to the vendor
    client's ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL."""

    base_url: str | None = None
    api_key: str | None = None
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    retry_budget: float = Field(default=300.0, gt=0)  # as openai.retry_budget
    max_tokens: int = Field(default=4096, ge=1)  # of one answer: the API wants a cap
    # Screenshots kept in the conversation; older ones are replaced by a line saying so.
    keep_screenshots: int = Field(default=3, ge=1)


class LocalSettings(_Section):
    """The open computer-use models served on the `openai` settings' endpoint (vLLM, Ollama,
    LM Studio): `uitars:MODEL`, `qwen-vl:MODEL`, `opencua:MODEL` (models/local/)."""

    # OpenCUA's coordinates: auto (by the model's name), relative (0-1), qwen25 (pixels of
    # the smart-resized image) or absolute (pixels of the screenshot as taken).
    coordinates: Literal["auto", "relative", "qwen25", "absolute"] = "auto"
    max_tokens: int = Field(default=1024, ge=1)  # of one answer
    temperature: float = Field(default=0.0, ge=0)
    keep_screenshots: int = Field(default=3, ge=1)  # the newest sent; older ones a line


class GeminiSettings(_Section):
    """generateContent with the computer_use tool (`gemini:MODEL`); the key falls back to
    GOOGLE_API_KEY, then GEMINI_API_KEY (google-genai's order), and the URL to
    GOOGLE_GEMINI_BASE_URL, then GEMINI_BASE_URL."""

    base_url: str | None = None
    api_key: str | None = None
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    retry_budget: float = Field(default=300.0, gt=0)  # as openai.retry_budget
    keep_screenshots: int = Field(default=3, ge=1)  # turns whose screenshots are sent
    # The computer_use tool's environment: a desktop; the browser's where a model takes
    # no other.
    environment: Literal["ENVIRONMENT_DESKTOP", "ENVIRONMENT_BROWSER"] = "ENVIRONMENT_DESKTOP"


class DesktopSettings(_Section):
    # auto: the current session if there is one, else a virtual desktop; or a desktop
    # started with `roundhouse desktop start` (":3", "sway-1").
    mode: str = Field(default="auto", pattern=r"^(auto|virtual|current|:[0-9]+|[a-z]+-[0-9]+)$")
    # What a virtual desktop runs: a session kind, as display/backends.py lists them (Xvfb +
    # openbox, or a headless Wayland compositor). Checked when a desktop starts, where the
    # kinds are known: this bottom layer names none.
    session: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9]*$")  # None: the default
    # As distributions ship it (GNOME Shell without unsafe mode, KWin with its permission
    # checks), as on a person's own session; else opened up for the agent.
    shipped: bool = False
    width: int = Field(default=1280, ge=320)
    height: int = Field(default=800, ge=240)
    # A virtual desktop's monitors: 2 adds a second one to the right of the first, 1920x1200
    # pixels at scale 1.5 (sway), the first's pixels at scale 1.5 (KWin, whose virtual
    # outputs are all one size), or 1920x1200 at scale 1 (X11).
    monitors: int = Field(default=1, ge=1, le=2)
    # A virtual desktop's keyboard layout, as XKB names it ("de", "fr", "us(dvorak)"); ""
    # is US. What a person's own session reads keys with is its own.
    layout: str = Field(default="", pattern=r"^([a-z]{2,12}(\([a-z0-9_]+\))?)?$")
    settle_timeout: float = Field(default=2.0, ge=0)
    # Seconds an AppAgent waits for an application that stopped answering before its
    # subtask fails with that reason (the host then decides).
    unresponsive_timeout: float = Field(default=10.0, ge=0)
    # Seconds an action that showed no effect yet is watched for a late one (gedit's file
    # dialog opens ~0.3 s after the click, the screen still meanwhile) before its result
    # says "no visible effect". Bounded: an endless one would hold every such action.
    effect_grace: float = Field(default=0.6, ge=0, le=10)
    # When input that roundhouse did not send arrives (the person took over), actions wait
    # for the person to hand the desktop back; with this, also until they have left it alone
    # this many seconds (the next action then goes on by itself). None: only a hand-back.
    hand_back_after: float | None = Field(default=None, gt=0)


class Settings(_Section):
    # The seeds' keys.
    max_step: int = Field(default=30, ge=1)
    max_round: int = Field(default=10, ge=1)
    # Actions one answer may hold, run in order while each does what it meant to
    # (agents/action_list.py): 1 is one action per model call. A step is one answer, so
    # max_step bounds answers, and a round's actions are at most max_step * max_actions.
    max_actions: int = Field(default=8, ge=1, le=50)
    # What the session's model calls may spend, checked before each request (core/limits.py;
    # None: no cap). Dollars: a model whose price is unknown cannot be held to max_cost, so
    # the request after its first is refused, saying so. Requests count every HTTP attempt,
    # retries too; tokens are input and output together.
    max_cost: float | None = Field(default=None, gt=0)
    max_requests: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    # Seconds waited at each subtask end, once (engine/round.py), before the UI is waited on.
    sleep_time: float = Field(default=0.0, ge=0)
    save_ui_tree: bool = False
    save_full_screen: bool = False
    eva_round: bool = False
    eva_session: bool = False

    # Models: "offline", "replay:FILE", "openai:NAME"; with --agent computer also
    # "anthropic:NAME", "openai-computer:NAME", "gemini:NAME", "uitars:NAME", "qwen-vl:NAME",
    # "opencua:NAME";
    # per-agent overrides fall back to `model`.
    model: str = "offline"
    model_host: str | None = None
    model_app: str | None = None
    model_linux: str | None = None
    model_eval: str | None = None
    answer_retries: int = Field(default=3, ge=0)
    record_answers: Path | None = None  # write every model answer here, as a replay file
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    gemini: GeminiSettings = Field(default_factory=GeminiSettings)
    prices: dict[str, Price] = Field(default_factory=dict)

    # Where and how rounds run.
    agent: Literal["auto", "linux", "host", "computer"] = "auto"
    # The desktop of `roundhouse serve --http` at this URL (.../mcp) instead of one here;
    # its token comes from RH_MCP_TOKEN.
    mcp: str | None = None
    logs: Path = Path("logs")
    task: str | None = None
    workdir: Path | None = None

    # Shell.
    shell_policy: ShellPolicy = ShellPolicy.CONFIRM
    shell_timeout: float = Field(default=60.0, gt=0)
    shell_output_limit: int = Field(default=8000, ge=200)
    assume_yes: bool = False

    desktop: DesktopSettings = Field(default_factory=DesktopSettings)

    def model_for(self, agent: Literal["host", "app", "linux", "computer", "eval"]) -> str:
        override = {
            "host": self.model_host,
            "app": self.model_app,
            "linux": self.model_linux,
            "computer": None,  # the one agent of its rounds: `model`
            "eval": self.model_eval,
        }[agent]
        return override or self.model


SEED_ALIASES = {name.upper(): name for name in Settings.model_fields}


@dataclass(frozen=True)
class _Layer:
    source: str  # shown to the user: a file path, "environment" or "command line"
    values: dict[str, Any]


def load_settings(
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    restored: tuple[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build the settings from file, environment and flags (flags win). `restored` (where
    from, and the values) is a session's own settings, carried on by resume whole: they win
    over file and environment, and flags still win over them."""
    layers: list[_Layer] = []
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    path = config_file or (DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.is_file() else None)
    if path is not None:
        layers.append(_Layer(str(path), _read_file(path)))
    layers.append(_Layer("environment", _read_env(os.environ if env is None else env)))
    if restored is not None:
        layers.append(_Layer(restored[0], dict(restored[1])))
    flags = {key: value for key, value in (overrides or {}).items() if value is not None}
    layers.append(_Layer("command line", flags))

    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.values.items():
            _check_key(key, layer.source)
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
            origin[key] = layer.source
    try:
        return Settings.model_validate(merged)
    except ValidationError as error:
        raise ConfigError(_explain(error, origin)) from None


# Settings and task files nest a few levels. Deeper YAML is refused before it is built: the
# limit is ours, not the interpreter's recursion limit (which PyYAML's builder hits near
# 1,000 levels, and which Python versions count differently).
MAX_YAML_DEPTH = 100


def read_yaml(path: Path, name: str) -> Any:
    """The YAML document in `path`, or a ConfigError "{name}: cannot read it: why".

    PyYAML raises more than YAMLError on text it cannot construct: ValueError for an
    impossible date or an integer past 4300 digits, KeyError for `!!bool maybe`,
    AttributeError for `!!timestamp soon`. Each is the file's fault, so each is said as one.
    Nesting past MAX_YAML_DEPTH is refused before PyYAML builds it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        where = f"byte {error.object[error.start]:#04x} at offset {error.start}"
        raise ConfigError(f"{name}: cannot read it: it is not UTF-8 text ({where})") from None
    except OSError as error:
        raise ConfigError(f"{name}: cannot read it: {error}") from None
    try:
        too_deep = _too_deep(text)
        data = None if too_deep else yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{name}: cannot read it: {error}") from None
    except (ValueError, KeyError, AttributeError) as error:
        why = f"{type(error).__name__}: {error}"
        raise ConfigError(f"{name}: cannot read it: a value is not valid YAML ({why})") from None
    if too_deep:
        levels = f"more than {MAX_YAML_DEPTH} levels"
        raise ConfigError(f"{name}: cannot read it: it is nested too deeply ({levels})")
    return data


def _too_deep(text: str) -> bool:
    """Whether text's collections nest past MAX_YAML_DEPTH. PyYAML's parser is a state
    machine, not a recursion: its events are counted before anything is built."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


def _read_file(path: Path) -> dict[str, Any]:
    data = read_yaml(path, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ConfigError(f"{path}: expected a mapping of keys to values, got {kind}")
    return {SEED_ALIASES.get(str(key), str(key)): value for key, value in data.items()}


def _read_env(env: Mapping[str, str]) -> dict[str, Any]:
    """ROUNDHOUSE_MAX_STEP=5 sets max_step; ROUNDHOUSE_OPENAI__BASE_URL sets openai.base_url."""
    values: dict[str, Any] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        target = values
        for depth, part in enumerate(path[:-1], 1):
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise _whole_and_parts(name, path[:depth])
        if isinstance(target.get(path[-1]), dict):
            raise _whole_and_parts(name, path)
        target[path[-1]] = raw
    return values


def _whole_and_parts(name: str, key: list[str]) -> ConfigError:
    """ROUNDHOUSE_OPENAI=x beside ROUNDHOUSE_OPENAI__TIMEOUT=3: neither can win silently."""
    return ConfigError(
        f"environment: {name} clashes with another {ENV_PREFIX}* variable: one sets "
        f"'{'.'.join(key)}' whole, the other a part of it; keep one of them"
    )


def _check_key(key: str, source: str) -> None:
    if key not in Settings.model_fields:
        known = ", ".join(sorted(Settings.model_fields))
        raise ConfigError(f"{source}: unknown key '{key}' (known keys: {known})")


def _explain(error: ValidationError, origin: Mapping[str, str]) -> str:
    lines = []
    for problem in error.errors():
        loc = [str(part) for part in problem["loc"]]
        source = origin.get(loc[0], "settings") if loc else "settings"
        lines.append(f"{source}: key '{'.'.join(loc)}': {problem['msg']}")
    return "\n".join(lines)
