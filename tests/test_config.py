from __future__ import annotations

from pathlib import Path

import pytest

from roundhouse.config import MAX_YAML_DEPTH, ConfigError, ShellPolicy, load_settings, read_yaml
from tests.helpers import UNREADABLE_YAML


def test_defaults_without_file_env_or_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(env={})
    assert settings.model == "offline"
    assert settings.max_step == 30
    assert settings.shell_policy is ShellPolicy.CONFIRM


def test_flags_win_over_environment_over_file(tmp_path: Path) -> None:
    config = tmp_path / "roundhouse.yaml"
    config.write_text("max_step: 5\nmax_round: 3\nsleep_time: 0.5\n")
    env = {"ROUNDHOUSE_MAX_ROUND": "7", "ROUNDHOUSE_OPENAI__BASE_URL": "http://127.0.0.1:9/v1"}
    settings = load_settings(config, env=env, overrides={"max_step": 9, "model": None})
    assert settings.max_step == 9  # flag
    assert settings.max_round == 7  # environment
    assert settings.sleep_time == 0.5  # file
    assert settings.openai.base_url == "http://127.0.0.1:9/v1"
    assert settings.model == "offline"  # a flag left unset does not override


def test_the_seeds_upper_case_keys_are_accepted(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("SLEEP_TIME: 2\nMAX_STEP: 4\nSAVE_UI_TREE: true\nEVA_ROUND: true\n")
    settings = load_settings(config, env={})
    assert (settings.sleep_time, settings.max_step) == (2.0, 4)
    assert settings.save_ui_tree and settings.eva_round


def test_an_unknown_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("max_steps: 5\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: unknown key 'max_steps'"):
        load_settings(config, env={})


def test_a_wrong_type_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("max_step: many\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: key 'max_step'"):
        load_settings(config, env={})


def test_a_wrong_environment_value_names_the_environment() -> None:
    with pytest.raises(ConfigError, match="environment: key 'max_round'"):
        load_settings(env={"ROUNDHOUSE_MAX_ROUND": "-1"})
    with pytest.raises(ConfigError, match="environment: unknown key 'colour'"):
        load_settings(env={"ROUNDHOUSE_COLOUR": "blue"})


def test_a_nested_unknown_key_is_an_error(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("openai:\n  base_ur1: http://x\n")
    with pytest.raises(ConfigError, match=r"openai\.base_ur1"):
        load_settings(config, env={})


def test_a_missing_or_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.yaml", env={})
    broken = tmp_path / "broken.yaml"
    broken.write_text("max_step: [1,\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(broken, env={})
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_settings(listed, env={})


@pytest.mark.parametrize(("raw", "why"), UNREADABLE_YAML)
def test_yaml_that_cannot_be_built_is_a_config_error(tmp_path: Path, raw: bytes, why: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_bytes(raw)
    with pytest.raises(ConfigError, match=rf"c\.yaml: cannot read it: .*{why}"):
        load_settings(config, env={})


def test_the_yaml_nesting_limit_is_ours(tmp_path: Path) -> None:
    """Not the interpreter's recursion limit, which Python versions count differently."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1))
    value = read_yaml(deep, "deep")["a"]
    for _ in range(MAX_YAML_DEPTH - 2):
        [value] = value
    assert value == []
    deep.write_text("a: " + "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH)
    with pytest.raises(ConfigError, match=f"nested too deeply .more than {MAX_YAML_DEPTH} levels"):
        read_yaml(deep, "deep")


def test_model_per_agent_falls_back_to_the_default(tmp_path: Path) -> None:
    settings = load_settings(env={"ROUNDHOUSE_MODEL_EVAL": "openai:judge"})
    assert settings.model_for("eval") == "openai:judge"
    assert settings.model_for("linux") == "offline"


@pytest.mark.parametrize(
    "env",
    [
        {"ROUNDHOUSE_OPENAI": "x", "ROUNDHOUSE_OPENAI__TIMEOUT": "3"},
        {"ROUNDHOUSE_OPENAI__TIMEOUT": "3", "ROUNDHOUSE_OPENAI": "x"},
        {"ROUNDHOUSE_MAX_STEP": "3", "ROUNDHOUSE_MAX_STEP__X": "1"},  # was a TypeError
        {"ROUNDHOUSE_OPENAI": "x", "ROUNDHOUSE_OPENAI__A__B": "1"},  # was an AttributeError
    ],
)
def test_a_variable_that_sets_a_key_whole_beside_one_that_sets_a_part_is_refused(
    env: dict[str, str],
) -> None:
    with pytest.raises(ConfigError, match="one sets .* whole, the other a part of it"):
        load_settings(env=env)
