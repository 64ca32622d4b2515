"""Fuzz the settings loader: whatever roundhouse.yaml and the ROUNDHOUSE_* environment
hold, load_settings returns settings or raises ConfigError, which every command shows as
a message and exits 2 on; nothing else. What loads has no NaN or negative timeout."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from roundhouse.config import ENV_PREFIX, ConfigError, Settings, load_settings
from tests.fuzz.common import FUZZ, HUGE_DIGITS, scalars
from tests.fuzz.yaml_documents import documents, encode, near

numbers = st.one_of(
    st.integers(min_value=-5, max_value=500),
    st.floats(),  # NaN, the infinities, negative zero
    st.sampled_from([".nan", ".inf", "-1", "1e999", HUGE_DIGITS, "many"]),
)
sections = st.fixed_dictionaries(
    {},
    optional={
        "timeout": numbers,
        "retry_budget": numbers,
        "max_retries": numbers,
        "base_url": st.text(max_size=20),
        "settle_timeout": numbers,
        "unresponsive_timeout": numbers,
        "effect_grace": numbers,
        "width": numbers,
        "mode": st.sampled_from(["auto", "virtual", "current", "other"]),
    },
)
settings_documents = documents(
    near(
        {
            "max_step": numbers,
            "MAX_STEP": numbers,
            "SLEEP_TIME": numbers,
            "shell_timeout": numbers,
            "shell_output_limit": numbers,
            "shell_policy": st.sampled_from(["confirm", "allow", "deny", "DENY", "yes"]),
            "model": st.text(max_size=20),
            "logs": st.one_of(st.text(max_size=20), scalars),
            "workdir": st.one_of(st.none(), st.text(max_size=20)),
            "openai": sections,
            "desktop": sections,
            "prices": st.dictionaries(
                st.text(max_size=8),
                st.fixed_dictionaries({"input_per_mtok": numbers, "output_per_mtok": numbers}),
                max_size=2,
            ),
        }
    )
)

KEYS = [name.upper() for name in Settings.model_fields] + ["OPENAI__TIMEOUT", "DESKTOP__MODE"]
env_names = st.one_of(
    st.sampled_from(KEYS),
    st.lists(st.sampled_from([*KEYS, "", "X"]), min_size=1, max_size=3).map("__".join),
    st.text(max_size=12),
).map(lambda name: ENV_PREFIX + name)
env_values = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["nan", "-inf", "inf", "-1", "0", "1e999", HUGE_DIGITS, "true", "{}"]),
)
environments = st.dictionaries(env_names, env_values, max_size=4)


def timeouts(settings: Settings) -> list[float]:
    return [
        settings.sleep_time,
        settings.shell_timeout,
        settings.openai.timeout,
        settings.openai.retry_budget,
        settings.desktop.settle_timeout,
        settings.desktop.unresponsive_timeout,
        settings.desktop.effect_grace,
    ]


def load_or_refuse(path: Path, env: dict[str, str]) -> None:
    try:
        settings = load_settings(path, env=env)
    except ConfigError as error:
        assert str(error)  # a message the user can act on
        return
    assert all(not math.isnan(value) and value >= 0 for value in timeouts(settings))
    assert settings.max_step >= 1 and settings.shell_output_limit >= 200


def test_any_settings_file_and_environment_load_or_are_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "roundhouse.yaml"

    @FUZZ
    @given(settings_documents, environments)
    @example(b"max_step: \xff", {})  # not UTF-8: was UnicodeDecodeError
    @example(encode("openai: " + "[" * 1000), {})  # was RecursionError
    @example(encode("max_step: " + HUGE_DIGITS), {})  # was ValueError
    @example(b"shell_timeout: !!timestamp soon", {})  # was AttributeError
    @example(b"shell_timeout: .nan", {})
    @example(b"", {"ROUNDHOUSE_MAX_STEP": "3", "ROUNDHOUSE_MAX_STEP__X": "1"})  # was TypeError
    @example(b"", {"ROUNDHOUSE_OPENAI__TIMEOUT": "nan", "ROUNDHOUSE_SHELL_TIMEOUT": "-1"})
    def load(raw: bytes, env: dict[str, str]) -> None:
        path.write_bytes(raw)
        load_or_refuse(path, env)

    load()


def test_any_environment_alone_loads_or_is_a_config_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")

    @FUZZ
    @given(environments)
    def load(env: dict[str, Any]) -> None:
        load_or_refuse(empty, env)

    load()
