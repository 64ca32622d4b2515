"""Fuzz the task-file loader: whatever a task file holds, load_task and load_suite return
tasks or raise ConfigError (which `roundhouse batch` shows as a message), nothing else."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from roundhouse.config import ConfigError
from roundhouse.suite.tasks import Check, SuiteTask, load_suite, load_task
from tests.fuzz.common import FUZZ, HUGE_DIGITS, scalars
from tests.fuzz.yaml_documents import documents, dump, encode, near

VALID_TASK: dict[str, Any] = {
    "id": "t",
    "request": "make {workdir}/a.txt",
    "setup": [{"run": "true"}, {"file": {"path": "a", "content": "x"}}],
    "checks": {"all": [{"file_exists": "a.txt"}, {"file_matches": {"path": "a", "pattern": "x"}}]},
}
patterns_text = st.one_of(
    st.sampled_from(["x", "^a.*$", "(", "[a-", "*", "(?P<", "\\"]), st.text(max_size=6)
)
HOSTILE_NAMES = ["../../etc", "..", ".", "a/b", "/etc/passwd", "a\x00b", "", " ", "a" * 5000]

# Mostly values of the right type, so that many documents load and what loads is used.
# (st.one_of draws its first strategy most often.)
texts = st.one_of(st.text(max_size=30), st.sampled_from(HOSTILE_NAMES))
leaf_checks = st.one_of(
    st.fixed_dictionaries({"file_exists": texts}),
    st.fixed_dictionaries({"answer_contains": texts}),
    st.fixed_dictionaries({"window_title": texts}),
    st.fixed_dictionaries(
        {"file_matches": st.fixed_dictionaries({"path": texts, "pattern": patterns_text})}
    ),
    st.fixed_dictionaries(
        {
            "command": st.fixed_dictionaries(
                {"run": st.just("true")}, optional={"exit_code": st.integers()}
            )
        }
    ),
    st.dictionaries(st.sampled_from(["file_exists", "file_absent", "tree_text"]), scalars),
)
checks = st.recursive(
    leaf_checks,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"all": st.lists(inner, max_size=3)}),
        st.fixed_dictionaries({"any": st.lists(inner, max_size=3)}),
        st.dictionaries(st.sampled_from(["all", "any"]), st.lists(inner, max_size=3)),
    ),
    max_leaves=6,
)
setup_steps = st.one_of(
    st.fixed_dictionaries({"run": st.just("true")}),
    st.fixed_dictionaries({"launch": texts}),
    st.fixed_dictionaries({"file": st.fixed_dictionaries({"path": texts, "content": texts})}),
    st.dictionaries(st.sampled_from(["run", "launch", "file"]), scalars),
)
tasks = near(
    {
        "id": st.one_of(
            st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True),
            st.sampled_from(HOSTILE_NAMES),
        ),
        "request": texts,
        "agent": st.sampled_from(["linux", "host", "app"]),
        "setup": st.lists(setup_steps, max_size=3),
        "checks": checks,
        "infeasible": st.booleans(),
        "max_step": st.one_of(st.none(), st.integers(-2, 50)),
        "description": texts,
    }
)
# Tasks that should load, their strings anything: what loads must be usable.
valid_tasks = st.fixed_dictionaries(
    {
        "id": st.one_of(
            st.sampled_from(["t", "T", "t.1"]),  # the same id in two files of a suite
            st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True),
        ),
        "request": st.text(),
        "checks": st.fixed_dictionaries(
            {"all": st.lists(st.fixed_dictionaries({"answer_contains": st.text()}), max_size=2)}
        ),
    },
    optional={
        "agent": st.sampled_from(["linux", "host"]),
        "setup": st.lists(st.fixed_dictionaries({"launch": st.text()}), max_size=2),
        "max_step": st.integers(min_value=1),
        "description": st.text(),
    },
)
valid_task_files = valid_tasks.map(dump).map(encode)
task_documents = st.one_of(documents(tasks), valid_task_files)


def patterns(check: Check | None) -> list[str]:
    if check is None:
        return []
    found = [check.file_matches.pattern] if check.file_matches else []
    for part in (check.all or []) + (check.any or []):
        found += patterns(part)
    return found


def load_or_refuse(path: Path) -> SuiteTask | None:
    try:
        return load_task(path)
    except ConfigError:
        return None


def test_any_task_file_loads_or_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"

    @FUZZ
    @given(task_documents)
    @example(b"id: \xff\xfe")  # not UTF-8: was UnicodeDecodeError
    @example(encode("id: " + "[" * 1000))  # was RecursionError
    @example(encode("max_step: " + HUGE_DIGITS))  # was ValueError (4300-digit limit)
    @example(b"max_step: 2001-13-45")  # an impossible date: was ValueError
    @example(b"request: !!bool maybe")  # was KeyError
    @example(b"request: !!timestamp soon")  # was AttributeError
    @example(b"request: !!int x")  # was ValueError
    @example(encode(dump({**VALID_TASK, "id": "../../etc"})))
    @example(
        encode(dump({**VALID_TASK, "checks": {"file_matches": {"path": "a", "pattern": "("}}}))
    )
    def load(raw: bytes) -> None:
        path.write_bytes(raw)
        loaded = load_or_refuse(path)
        if loaded is not None:
            # What loaded is safe to use: its id names a file beside the task, and its
            # patterns compile.
            assert loaded.answers.parent == path.parent
            assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", loaded.task.id)
            for pattern in patterns(loaded.task.checks):
                re.compile(pattern)
            loaded.task.resolved(tmp_path, tmp_path)

    load()


def test_any_suite_folder_loads_or_is_a_config_error(tmp_path: Path) -> None:
    @FUZZ
    # Mostly tasks that load, so that the suite's own checks (one id per task) are reached.
    @given(st.lists(st.one_of(valid_task_files, task_documents), min_size=1, max_size=3))
    def load(raws: list[bytes]) -> None:
        suite = tmp_path / "suite"
        suite.mkdir(exist_ok=True)
        for old in suite.iterdir():
            old.unlink()
        for number, raw in enumerate(raws):
            (suite / f"task{number}.yaml").write_bytes(raw)
        try:
            tasks = load_suite(suite)
        except ConfigError:
            return
        assert len({item.task.id for item in tasks}) == len(tasks)

    load()
