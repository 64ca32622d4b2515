"""`roundhouse batch --executor ray` against real Ray — no mocks — in network namespaces
the tests make (tests/ray_cluster.py): the same rows as the local executor, a worker
killed mid-task, a driver killed mid-batch, and two nodes joined by a veth pair."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ray_cluster import BIN, REPO, Lab, cmdline, lab, parent, roundhouse, slow_suite

pytest.importorskip("ray", reason="the Ray tests need the ray extra: pip install -e '.[ray]'")
pytestmark = pytest.mark.ray

BASIC = REPO / "tasks" / "basic"
OSWORLD_EXAMPLES = REPO / "tests" / "osworld" / "examples"
SAME = ("passed", "status", "checks_passed", "checks_total", "steps")


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {row["task"]: row for row in json.loads((out / "results.json").read_text())}


def run(
    argv: list[str], env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


def test_ray_rows_equal_the_local_executors_rows(tmp_path: Path) -> None:
    """Local Ray (2 CPUs) runs the shell tasks and two GUI tasks of tasks/basic under
    replay: every row says what the local executor's says, and the logs are home."""
    shell = sorted(p.stem for p in BASIC.glob("shell-*.yaml"))
    chosen = [*shell, "gedit-type-save", "qt-press-button"]
    selection = [arg for task in chosen for arg in ("--task", task)]
    with lab() as here:
        ns = here.namespace()
        on_ray = run(
            here.inside(
                ns,
                *roundhouse("batch", str(BASIC), *selection, "--executor", "ray"),
                *("--workers", "2", "--out", str(tmp_path / "ray")),
            ),
            here.env(),
        )
        assert on_ray.returncode == 0, on_ray.stderr[-3000:]
        assert here.wait_until_nothing_runs() == {}
    local = run(
        roundhouse("batch", str(BASIC), *selection, "--out", str(tmp_path / "local")),
        here.env(),
    )
    assert local.returncode == 0, local.stderr[-3000:]
    ray_rows, local_rows = rows(tmp_path / "ray"), rows(tmp_path / "local")
    assert sorted(ray_rows) == sorted(local_rows) == sorted(chosen)
    for task in chosen:
        assert [ray_rows[task][k] for k in SAME] == [local_rows[task][k] for k in SAME], task
    assert {row["node"] for row in ray_rows.values()} == {"127.0.0.1"}
    assert "127.0.0.1" in on_ray.stdout and "127.0.0.1" in on_ray.stderr  # table, progress
    for task, row in ray_rows.items():
        folder = Path(row["log_dir"])
        assert folder == (tmp_path / "ray" / "logs" / task).resolve()
        assert (folder / "response.log").is_file() and (folder / "rounds.jsonl").is_file()
    gui = Path(ray_rows["gedit-type-save"]["log_dir"])
    assert (gui / "action_step1.png").is_file()
    report = run(roundhouse("report", str(gui)), here.env())
    assert report.returncode == 0 and (gui / "report.html").is_file(), report.stderr


def test_a_task_whose_worker_is_killed_is_retried_and_nothing_is_left(tmp_path: Path) -> None:
    """SIGKILL the Ray worker running a GUI task mid-task: the task runs again, passes, and
    its row says why; no desktop, run or janitor of the batch is left running."""
    suite = slow_suite(tmp_path / "suite", {"slow-gui": ("host", 6), "quick": ("linux", 0)})
    node_dir = tmp_path / "node"
    with lab() as here:
        ns = here.namespace()
        batch = subprocess.Popen(
            here.inside(
                ns,
                *roundhouse("batch", str(suite), "--executor", "ray", "--workers", "2"),
                *("--out", str(tmp_path / "R")),
            ),
            env=here.env(RH_NODE_WORKDIR=str(node_dir)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        sleeper = _wait_for(here, "rh-sleeper-slow-gui", batch)
        worker = sleeper
        while "ray::" not in cmdline(worker):
            worker = parent(worker)
        assert here.marked().get(worker, "").startswith("ray::roundhouse:slow-gui")
        xvfb = [pid for pid, line in here.marked().items() if line.startswith("Xvfb")]
        assert xvfb, "the GUI task runs on a desktop of its own"
        os.kill(worker, signal.SIGKILL)
        out, err = batch.communicate(timeout=240)
        assert batch.returncode == 0, err[-3000:]
        left = here.wait_until_nothing_runs()
        assert left == {}, left
    row = rows(tmp_path / "R")["slow-gui"]
    assert (row["passed"], row["attempts"]) == (True, 2), row
    assert "attempt 1" in row["retried"] and "WorkerCrashedError" in row["retried"], row
    assert "attempt 2" in err
    assert rows(tmp_path / "R")["quick"]["attempts"] == 1
    # The node's folders went with the attempts, the dead one's too (its janitor's work).
    assert [p.name for p in (node_dir / "roundhouse-batch").iterdir()] in ([], ["shipped"])


def test_ctrl_c_cancels_running_tasks_stops_their_desktops_and_keeps_rows(
    tmp_path: Path,
) -> None:
    suite = slow_suite(tmp_path / "suite", {"quick": ("linux", 0), "endless": ("host", 600)})
    out = tmp_path / "R"
    with lab() as here:
        ns = here.namespace()
        batch = subprocess.Popen(
            here.inside(
                ns,
                *roundhouse("batch", str(suite), "--executor", "ray", "--workers", "2"),
                *("--out", str(out)),
            ),
            env=here.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for(here, "rh-sleeper-endless", batch)
        deadline = time.monotonic() + 120
        while "quick" not in _rows_or_none(out) and time.monotonic() < deadline:
            time.sleep(0.1)
        batch.send_signal(signal.SIGINT)  # as Ctrl-C does: the exec chain kept the pid
        _, err = batch.communicate(timeout=60)
        assert batch.returncode == 130, err[-3000:]
        assert "batch cancelled" in err
        left = here.wait_until_nothing_runs()
        assert left == {}, left
    assert list(rows(out)) == ["quick"] and rows(out)["quick"]["passed"]


def test_resume_after_the_driver_is_killed_keeps_finished_rows(tmp_path: Path) -> None:
    suite = slow_suite(tmp_path / "suite", {f"t{n}": ("linux", 1.5) for n in range(6)})
    out = tmp_path / "R"
    with lab() as here:
        ns = here.namespace()
        argv = roundhouse("batch", str(suite), "--executor", "ray", "--workers", "2")
        driver = subprocess.Popen(
            here.inside(ns, *argv, "--out", str(out)),
            env=here.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_rows_or_none(out)) < 2:
            time.sleep(0.1)
        driver.send_signal(signal.SIGKILL)  # `ip netns exec` became the driver: same pid
        driver.wait(timeout=30)
        kept = _rows_or_none(out)
        assert 2 <= len(kept) < 6, kept
        # Ray's reaper ends the instance of a dead driver, and the janitors the attempts
        # (Ray's agents notice their raylet is gone last, in seconds, or more under load).
        assert here.wait_until_nothing_runs(timeout=90) == {}
        again = run(here.inside(ns, *argv, "--resume", str(out)), here.env())
        assert again.returncode == 0, again.stderr[-3000:]
    assert f"{len(kept)} tasks have a row, {6 - len(kept)} to run" in again.stderr
    assert f"[{6 - len(kept)}/{6 - len(kept)}]" in again.stderr
    final = rows(out)
    assert sorted(final) == [f"t{n}" for n in range(6)]
    assert all(final[task] == row for task, row in kept.items())  # untouched
    assert all(row["passed"] for row in final.values())


def test_two_nodes_share_a_batch_and_send_the_logs_home(tmp_path: Path) -> None:
    """Two namespaces joined by a veth pair, a head node in one and a worker node in the
    other, which cannot see the driver's folders (a tmpfs over them in its own mount
    namespace): the suite goes to it as bytes, its logs come back as bytes."""
    driver_side = tmp_path / "driver"
    suite = driver_side / "suite"
    suite.mkdir(parents=True)
    tasks = ["shell-os", "shell-kernel", "shell-hostname", "shell-whoami", "gedit-type-save"]
    for task in tasks:
        for name in (f"{task}.yaml", f"{task}.answers.json"):
            shutil.copy(BASIC / name, suite / name)
    out = driver_side / "R"
    node_dir = tmp_path / "node"  # where attempts work on both nodes, the suite's copy too
    with lab() as here:
        head, other = here.namespace(), here.namespace()
        here.link(head, other, ("10.200.0.1/24", "10.200.0.2/24"))
        ray = str(BIN / "ray")
        node = ("--num-cpus", "1", "--resources", '{"desktop": 1}', "--disable-usage-stats")
        started = run(
            here.inside(
                head,
                *(ray, "start", "--head", "--node-ip-address", "10.200.0.1", "--port", "6379"),
                *("--include-dashboard", "false", "--temp-dir", str(here.ray_tmp / "a"), *node),
            ),
            here.env(RH_NODE_WORKDIR=str(node_dir)),
        )
        assert started.returncode == 0, started.stderr[-2000:]
        joined = run(
            here.inside(
                other,
                *(ray, "start", "--address", "10.200.0.1:6379", "--node-ip-address", "10.200.0.2"),
                *("--temp-dir", str(here.ray_tmp / "b"), *node),
                hide=(driver_side,),  # this node cannot see the driver's folders
            ),
            here.env(RH_NODE_WORKDIR=str(node_dir)),
        )
        assert joined.returncode == 0, joined.stderr[-2000:]
        batch = run(
            here.inside(
                head,
                *roundhouse("batch", str(suite), "--executor", "ray"),
                *("--ray-address", "10.200.0.1:6379", "--out", str(out)),
            ),
            here.env(),
        )
        assert batch.returncode == 0, batch.stderr[-3000:]
        assert "Ray: 2 nodes, 2 CPUs, 2 desktops" in batch.stderr
    final = rows(out)
    assert sorted(final) == sorted(tasks) and all(row["passed"] for row in final.values())
    assert {row["node"] for row in final.values()} == {"10.200.0.1", "10.200.0.2"}
    for task, row in final.items():
        assert Path(row["log_dir"]) == (out / "logs" / task).resolve()
        assert (Path(row["log_dir"]) / "response.log").is_file()
    # The worker node got the suite as bytes (one copy at the driver's paths, kept for the
    # next batch); the head node used the driver's folder in place. The attempts' folders
    # are gone.
    [copy] = (node_dir / "roundhouse-batch" / "shipped").iterdir()
    shipped = copy.joinpath(*suite.resolve().parts[1:])
    assert sorted(p.name for p in shipped.iterdir()) == sorted(p.name for p in suite.iterdir())
    assert [p.name for p in (node_dir / "roundhouse-batch").iterdir()] == ["shipped"]


def test_osworld_tasks_run_on_ray_on_the_session_asked_for(tmp_path: Path) -> None:
    """OSWorld's tasks through Ray: a head node without desktops, and a worker node that
    offers one and cannot see the driver's folders. Each task's file, its answers and the
    dataset's files it downloads go to that node as bytes; it runs them on sway, as the
    batch asks; they score as under the local executor (tests/osworld/test_batch.py), and
    what cannot run here says so."""
    driver_side = tmp_path / "driver"
    examples = driver_side / "examples"
    shutil.copytree(OSWORLD_EXAMPLES, examples)
    scores = {"rh-os-compare": 1.0, "rh-os-terminal": 1.0, "rh-os-bluetooth": 1.0}
    chosen = [*scores, "rh-gui-tidy"]
    out = driver_side / "R"
    with lab() as here:
        head, other = here.namespace(), here.namespace()
        here.link(head, other, ("10.200.0.1/24", "10.200.0.2/24"))
        ray = str(BIN / "ray")
        common = ("--num-cpus", "1", "--disable-usage-stats")
        started = run(
            here.inside(
                head,
                *(ray, "start", "--head", "--node-ip-address", "10.200.0.1", "--port", "6379"),
                *("--include-dashboard", "false", "--temp-dir", str(here.ray_tmp / "a"), *common),
            ),
            here.env(),
        )
        assert started.returncode == 0, started.stderr[-2000:]
        joined = run(
            here.inside(
                other,
                *(ray, "start", "--address", "10.200.0.1:6379", "--node-ip-address", "10.200.0.2"),
                *("--temp-dir", str(here.ray_tmp / "b"), *common),
                *("--resources", '{"desktop": 1}'),
                hide=(driver_side,),
            ),
            here.env(RH_NODE_WORKDIR=str(tmp_path / "node")),
        )
        assert joined.returncode == 0, joined.stderr[-2000:]
        batch = subprocess.Popen(
            here.inside(
                head,
                *roundhouse("batch", str(examples), "--executor", "ray", "--session", "sway"),
                *("--ray-address", "10.200.0.1:6379", "--out", str(out)),
                *("--answers", str(examples / "answers"), "--files", str(examples / "files")),
                *(arg for task in chosen for arg in ("--task", task)),
            ),
            env=here.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        sway = _wait_for(here, "sway -c", batch, timeout=240)  # the desktops are sway's
        assert "Xvfb" not in cmdline(sway)
        _, err = batch.communicate(timeout=600)
        assert batch.returncode == 1, err[-3000:]  # one task is not runnable here
        assert "Ray: 2 nodes, 2 CPUs, 1 desktops" in err
        # Ray's nodes run on; every attempt's desktop and run ended with it.
        left = [line for line in here.marked().values() if "sway" in line or " run " in line]
        assert left == [], left
    final = rows(out)
    assert sorted(final) == sorted(chosen)
    for task, score in scores.items():
        assert (final[task]["score"], final[task]["passed"]) == (score, True), final[task]
        assert final[task]["node"] == "10.200.0.2"  # the one node with a desktop
        assert (Path(final[task]["log_dir"]) / "response.log").is_file()
    tidy = final["rh-gui-tidy"]
    assert tidy["status"] == "NOT RUNNABLE" and "tidy_desktop" in tidy["reason"]


def _wait_for(here: Lab, text: str, batch: subprocess.Popen[str], timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and batch.poll() is None:
        for pid, line in here.marked().items():
            if text in line and not line.startswith("ip "):
                return pid
        time.sleep(0.1)
    batch.kill()
    out, err = batch.communicate()
    raise AssertionError(f"no process of this test ran {text!r}: {out[-1500:]}\n{err[-3000:]}")


def _rows_or_none(out: Path) -> dict[str, dict[str, Any]]:
    try:
        return rows(out)
    except (OSError, ValueError):
        return {}
