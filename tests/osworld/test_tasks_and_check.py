"""OSWorld's task files as roundhouse reads them, and `roundhouse osworld check` (no desktop:
what is installed is stated by the test, never read from this machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roundhouse.cli import app
from roundhouse.config import ConfigError
from roundhouse.osworld.check import APPS, Machine, classify, table
from roundhouse.osworld.files import BadURL, FileCache, cache_key
from roundhouse.osworld.places import Places
from roundhouse.osworld.tasks import is_osworld, load_examples
from tests.osworld.conftest import EXAMPLES

EVERYTHING = Machine(frozenset(APPS))
NOTHING = Machine(frozenset())
FILES = FileCache(EXAMPLES / "files")


def verdicts(machine: Machine, files: FileCache | None) -> dict[str, tuple[str, str]]:
    out = {}
    for item in load_examples(EXAMPLES):
        verdict = classify(item, machine, files)
        out[item.task.id] = (verdict.klass, verdict.reason)
    return out


def test_every_layout_reads_the_same_tasks() -> None:
    everything = {i.task.id for i in load_examples(EXAMPLES)}
    assert len(everything) == 11
    assert {i.task.id for i in load_examples(EXAMPLES / "examples")} == everything
    assert {i.task.id for i in load_examples(EXAMPLES / "test_all.json")} == everything
    domain = load_examples(EXAMPLES / "examples" / "os")
    assert {i.domain for i in domain} == {"os"} and len(domain) == 7
    one = load_examples(EXAMPLES / "examples" / "gui" / "rh-gui-gedit.json")
    assert [(i.task.id, i.domain) for i in one] == [("rh-gui-gedit", "gui")]
    assert is_osworld(EXAMPLES) and is_osworld(EXAMPLES / "test_all.json")
    assert not is_osworld(Path(__file__).parents[2] / "tasks" / "basic")


def test_an_evaluator_is_read_part_by_part() -> None:
    (item,) = load_examples(EXAMPLES / "examples" / "os" / "rh-os-notes.json")
    parts = item.task.evaluator.parts()
    assert [p.metric for p in parts] == ["file_contains", "check_include_exclude"]
    assert parts[0].result is not None and parts[0].result.type == "vm_file"
    assert parts[1].expected is not None and parts[1].expected.config["rules"]["include"] == ["1.5"]
    assert item.task.evaluator.conj == "or"
    (compare,) = load_examples(EXAMPLES / "examples" / "os" / "rh-os-compare.json")
    (part,) = compare.task.evaluator.parts()
    assert part.options == {"ignore_blanks": True}


def _write(folder: Path, name: str, task: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(task))
    return path


def _task(task_id: str) -> dict[str, object]:
    return {"id": task_id, "instruction": "x", "config": [], "evaluator": {"func": "infeasible"}}


@pytest.mark.parametrize(
    "domain, task_id, name",
    [
        ("os", "../../etc/passwd", "x.json"),  # a path as an id
        ("os", "a b", "a b.json"),
        ("os", "good", "other.json"),  # a file whose name is not its id
        ("..", "good", "good.json"),
    ],
)
def test_a_hostile_task_file_is_refused_clearly(
    tmp_path: Path, domain: str, task_id: str, name: str
) -> None:
    folder = tmp_path / "examples" / domain if domain != ".." else tmp_path / "examples" / "x"
    path = _write(folder, name, _task(task_id))
    target = path if domain != ".." else tmp_path / "meta.json"
    if domain == "..":
        target.write_text(json.dumps({"../../etc": ["good"]}))
    with pytest.raises(ConfigError) as raised:
        load_examples(target)
    assert "not a plain name" in str(raised.value) or "must be its id" in str(raised.value)


def test_a_meta_file_naming_a_missing_task_or_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "examples" / "os", "t1.json", _task("t1"))
    meta = tmp_path / "test_all.json"
    meta.write_text(json.dumps({"os": ["t1", "t2"]}))
    with pytest.raises(ConfigError, match="t2"):
        load_examples(meta)
    _write(tmp_path / "examples" / "gui", "t1.json", _task("t1"))
    with pytest.raises(ConfigError, match="'t1' is in"):
        load_examples(tmp_path)


def test_a_task_file_that_is_no_json_is_named(tmp_path: Path) -> None:
    (tmp_path / "os").mkdir()
    (tmp_path / "os" / "t.json").write_text("{")
    with pytest.raises(ConfigError, match="t.json"):
        load_examples(tmp_path / "os")


def test_each_task_lands_in_one_class() -> None:
    found = verdicts(EVERYTHING, FILES)
    assert found["rh-gui-web"][0] == "web" and "https://www.example.org" in found["rh-gui-web"][1]
    assert found["rh-gui-tidy"] == ("missing", "step 'tidy_desktop'")
    assert found["rh-gui-impress"] == ("files", "rh-gui-impress/talk.pptx")
    runnable = {task for task, (klass, _) in found.items() if klass == "runnable"}
    assert runnable == {
        "rh-os-lock", "rh-os-rename", "rh-os-terminal", "rh-os-photos", "rh-os-notes",
        "rh-os-compare", "rh-os-bluetooth", "rh-gui-gedit",
    }  # fmt: skip


def test_what_is_not_installed_or_not_cached_decides_the_class() -> None:
    bare = verdicts(NOTHING, None)
    assert bare["rh-gui-impress"] == ("apps", "LibreOffice Impress")
    assert bare["rh-gui-gedit"][0] == "runnable"  # gedit is not among the apps it asks for
    assert bare["rh-os-terminal"][0] == "runnable"
    assert bare["rh-os-photos"] == ("files", "rh-os-photos/beach.jpg and 1 more")
    assert bare["rh-os-compare"][0] == "files"  # a cloud_file getter's file too
    assert bare["rh-gui-web"][0] == "web"  # the live web comes first


def test_a_compare_table_rule_not_written_here_is_named(tmp_path: Path) -> None:
    task = _task("t")
    task["evaluator"] = {
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "/home/user/a.xlsx", "dest": "a.xlsx"},
        "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
                              {"type": "row_height", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
    }  # fmt: skip
    (item,) = load_examples(_write(tmp_path / "calc", "t.json", task))
    assert classify(item, EVERYTHING, None).reason == "compare_table rule 'row_height'"


def test_a_malformed_evaluator_is_counted_not_refused(tmp_path: Path) -> None:
    task = _task("t")
    task["evaluator"] = {
        "func": ["exact_match", "exact_match"],
        "result": [{"type": "rule", "rules": {}}] * 3,
        "expected": [{"type": "rule", "rules": {}}] * 2,
    }
    (item,) = load_examples(_write(tmp_path / "os", "t.json", task))
    verdict = classify(item, EVERYTHING, None)
    assert verdict.klass == "missing"
    assert "2 functions but 3 result entries" in verdict.reason


def test_the_table_counts_per_domain_and_in_total() -> None:
    items = load_examples(EXAMPLES)
    pairs = [(item, classify(item, NOTHING, None)) for item in items]
    lines = table(pairs).splitlines()
    assert lines[0].split() == ["domain", "runnable", "files", "web", "apps", "missing", "total"]
    rows = {line.split()[0]: [int(n) for n in line.split()[1:]] for line in lines[1:4]}
    assert rows["gui"] == [1, 0, 1, 1, 1, 4]
    assert rows["os"] == [5, 2, 0, 0, 0, 7]
    assert rows["total"] == [6, 2, 1, 1, 1, 11]


def test_the_check_command_prints_the_table_and_each_task(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["osworld", "check", str(EXAMPLES), "--files", str(EXAMPLES / "files"), "--list"]
    )
    assert result.exit_code == 0, result.output
    assert "os/rh-os-photos  runnable here" in result.output
    assert "gui/rh-gui-web  needs the live web" in result.output
    assert result.output.splitlines()[-3].split()[0] == "total"
    assert result.output.splitlines()[-3].split()[-1] == "11"
    missing = CliRunner().invoke(app, ["osworld", "check", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_machine_here_reads_what_is_on_path(tmp_path: Path) -> None:
    def which(program: str) -> str | None:
        return "/bin/" + program if program in ("gimp", "localc") else None

    found = Machine.here(which).installed
    assert {"GIMP", "LibreOffice Calc"} <= found
    assert "VS Code" not in found


# ---------------------------------------------------------------- places and the file cache


def test_osworlds_home_and_runtime_folder_are_this_desktops() -> None:
    places = Places("/tmp/t/home", 1920, 1080, "pw", runtime="/tmp/rt")
    assert places.local("/home/user/Desktop/a b.txt") == "/tmp/t/home/Desktop/a b.txt"
    assert places.local("cd /home/user && ls /home/user") == "cd /tmp/t/home && ls /tmp/t/home"
    assert places.local("/home/username/x /home/user2 x/home/user") == (
        "/home/username/x /home/user2 x/home/user"
    )
    assert places.local("export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'") == (
        "export DBUS_SESSION_BUS_ADDRESS='unix:path=/tmp/rt/bus'"
    )
    assert places.fill(
        "echo {CLIENT_PASSWORD}; click({SCREEN_WIDTH_HALF}, {SCREEN_HEIGHT_HALF})"
    ) == ("echo pw; click(960, 540)")
    assert places.osworld("/tmp/t/home/Desktop") == "/home/user/Desktop"


def test_a_file_is_kept_under_its_urls_path_whatever_the_host() -> None:
    mirror = "https://hf-mirror.com/datasets/x/resolve/main/os/id/a%20b.sh"
    origin = "https://huggingface.co/datasets/x/resolve/main/os/id/a%20b.sh"
    assert cache_key(mirror) == cache_key(origin)
    assert str(cache_key(mirror)) == "datasets/x/resolve/main/os/id/a b.sh"
    for hostile in ("https://h/../../etc/passwd", "https://h/a/%2e%2e/b", "file:///etc/passwd",
                    "https://h/", "https://h/a%2fb"):  # fmt: skip
        with pytest.raises(BadURL):
            cache_key(hostile)
    assert FILES.find("https://elsewhere.org/datasets/rh/resolve/main/os/rh-os-photos/notes.txt")
    assert FILES.find("https://h/../../etc/passwd") is None


def test_what_roundhouse_leaves_out_is_named_with_why(tmp_path: Path) -> None:
    task = _task("t")
    task["evaluator"] = {"func": "compare_image_text", "result": {"type": "rule", "rules": {}},
                         "expected": {"type": "rule", "rules": {"text": "ls"}}}  # fmt: skip
    (item,) = load_examples(_write(tmp_path / "multi_apps", "t.json", task))
    verdict = classify(item, EVERYTHING, None)
    assert verdict.klass == "missing"
    assert verdict.reason.startswith("metric 'compare_image_text' (OCR with easyocr, whose weights")


def test_rates_over_osworlds_369_and_verifieds_361() -> None:
    """OSWorld's success rate counts every task of its suite, run or not; OSWorld-Verified's
    leaves out the tasks that use Google Drive, whatever they scored."""
    import dataclasses

    from roundhouse.suite.results import TaskResult, suite_rates

    def row(task: str, score: float | None, drive: bool = False) -> TaskResult:
        return TaskResult(task=task, passed=score == 1.0, status="FINISH", checks_passed=0,
                          checks_total=0, steps=1, seconds=1.0, input_tokens=0,
                          output_tokens=0, cost=None, answer="", reason="", log_dir="",
                          score=score, domain="multi_apps", google_drive=drive)  # fmt: skip

    rows = [row("a", 1.0), row("b", 0.5), row("c", None), row("d", 1.0, drive=True)]
    every, verified = suite_rates(rows)
    assert (every.score, every.tasks) == (2.5, 369)
    assert (verified.score, verified.tasks) == (1.5, 361)
    assert verified.rate == 1.5 / 361
    ours = [dataclasses.replace(r, domain="") for r in rows]
    assert suite_rates(ours) == []  # roundhouse's own tasks: no OSWorld rate
