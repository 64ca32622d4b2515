"""The suite's own web server (the `serve` setup step and {server}), the checks that read
what it received and office documents, and tasks that approve their confirmations."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from roundhouse.suite.batch import BatchOptions, run_batch
from roundhouse.suite.checks import CheckContext, evaluate
from roundhouse.suite.family import SUITE
from roundhouse.suite.server import TaskServer, form_fields, read_posted
from roundhouse.suite.tasks import Check, Task
from tests.helpers import shell_answer, write_replay


def fetch(url: str, data: bytes | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, data=data, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def refused(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


# --- the server ---------------------------------------------------------------------------


def test_the_server_serves_its_folder_and_records_each_form_posted(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "hello.html").write_text("<title>Hello</title>")
    record = tmp_path / "posted.jsonl"
    server = TaskServer.bind()
    url = server.url  # known before anything is served: {server} is filled first
    assert url.startswith("http://127.0.0.1:")
    server.start(tmp_path / "pages", record)
    try:
        assert fetch(f"{url}/hello.html") == (200, "<title>Hello</title>")
        assert fetch(f"{url}/missing.html")[0] == 404
        status, page = fetch(f"{url}/submit?x=1", b"name=Ada+Lovelace&email=ada%40example.org")
        assert status == 200 and "Received: name=Ada Lovelace, email=ada@example.org" in page
        assert read_posted(record) == [
            {
                "method": "POST",
                "path": "/submit",
                "fields": {"name": "Ada Lovelace", "email": "ada@example.org"},
            }
        ]
    finally:
        server.stop()
    assert refused(url)  # stopped: the port is free again


def test_a_server_that_never_started_still_frees_its_port() -> None:
    server = TaskServer.bind()
    server.stop()
    assert refused(server.url)


def test_form_fields_keep_blanks_and_the_last_of_a_repeated_field() -> None:
    assert form_fields(b"a=1&a=2&b=&c=%C3%A9t%C3%A9") == {"a": "2", "b": "", "c": "été"}


# --- the task format ----------------------------------------------------------------------


def task(**fields: object) -> Task:
    return Task.model_validate({"id": "t", "request": "x", "agent": "host", **fields})


def test_server_placeholders_need_exactly_one_serve_step(tmp_path: Path) -> None:
    serve = {"serve": {"root": "{suite}/pages"}}
    with pytest.raises(ValueError, match="uses \\{server\\} but has no serve step"):
        task(request="open {server}/a.html", infeasible=True)
    with pytest.raises(ValueError, match="at most one serve step"):
        task(setup=[serve, serve], infeasible=True)
    with pytest.raises(ValueError, match="posted check reads the record of a serve step"):
        task(checks={"all": [{"posted": {"fields": {"a": "1"}}}]})
    with pytest.raises(ValueError, match="exactly one of launch, file, run, serve"):
        task(setup=[{**serve, "run": "true"}], infeasible=True)
    resolved = task(
        setup=[serve], request="open {server}/a.html", checks={"posted": {"fields": {"a": "1"}}}
    ).resolved(tmp_path, tmp_path / "suite", "http://127.0.0.1:4711")
    assert resolved.request == "open http://127.0.0.1:4711/a.html"
    assert resolved.serve is not None and resolved.serve.root == f"{tmp_path}/suite/pages"
    assert resolved.serve.record == "posted.jsonl"


def test_a_cell_check_names_a_cell_and_says_what_it_holds() -> None:
    with pytest.raises(ValueError, match="no cell name like A3"):
        Check.model_validate({"xlsx_cell": {"path": "a.xlsx", "cell": "a3", "value": "1"}})
    with pytest.raises(ValueError, match="gives value, formula or both"):
        Check.model_validate({"xlsx_cell": {"path": "a.xlsx", "cell": "A3"}})


# --- the checks ---------------------------------------------------------------------------


async def passed(spec: dict[str, object], context: CheckContext) -> tuple[bool, str]:
    outcome = await evaluate(Check.model_validate(spec), context)
    return outcome.passed, outcome.details[0]


async def test_posted_checks_read_what_the_server_received(tmp_path: Path) -> None:
    record = tmp_path / "posted.jsonl"
    record.write_text(
        json.dumps({"method": "POST", "path": "/submit", "fields": {"name": "Ada", "n": "2"}})
        + "\n"
    )
    context = CheckContext(workdir=tmp_path, answer="", posted=record)
    assert (await passed({"posted": {"path": "/submit", "fields": {"name": "Ada"}}}, context))[0]
    wrong, said = await passed({"posted": {"path": "/submit", "fields": {"name": "Bob"}}}, context)
    assert not wrong and "received [{'name': 'Ada', 'n': '2'}]" in said
    elsewhere, said = await passed({"posted": {"path": "/other", "fields": {}}}, context)
    assert not elsewhere and "received nothing" in said
    no_server = CheckContext(workdir=tmp_path, answer="")
    assert not (await passed({"posted": {"fields": {}}}, no_server))[0]


async def test_docx_checks_read_the_paragraphs_as_word_has_them(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Trains leave at dawn.")
    document.add_paragraph("They come back at dusk.")
    document.save(str(tmp_path / "t.docx"))
    (tmp_path / "plain.docx").write_text("Trains leave at dawn.")  # a text file, named so
    context = CheckContext(workdir=tmp_path, answer="")

    def spec(path: str, text: str) -> dict[str, object]:
        return {"docx_contains": {"path": path, "text": text}}

    two = "Trains leave at dawn.\nThey come back at dusk."
    assert (await passed(spec("t.docx", two), context))[0]
    one_line, said = await passed(spec("t.docx", "dawn. They"), context)  # two paragraphs
    assert not one_line and "They come back at dusk." in said
    fake, said = await passed(spec("plain.docx", "dawn"), context)
    assert not fake and "is no Word document" in said
    missing, said = await passed(spec("none.docx", "dawn"), context)
    assert not missing and "does not exist" in said


async def test_xlsx_checks_read_values_and_formulas(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Sums"
    sheet["A1"], sheet["A2"], sheet["B1"] = 12, 30.0, "twelve"
    sheet["A3"] = "=SUM(A1:A2)"  # openpyxl writes no calculated value: none is saved
    book.save(tmp_path / "s.xlsx")
    context = CheckContext(workdir=tmp_path, answer="")

    def cell(name: str, **wanted: str) -> dict[str, object]:
        return {"xlsx_cell": {"path": "s.xlsx", "cell": name, **wanted}}

    assert (await passed(cell("A1", value="12"), context))[0]
    assert (await passed(cell("A2", value="30"), context))[0]  # 30.0 is 30
    assert (await passed(cell("B1", value="twelve", sheet="Sums"), context))[0]
    assert (await passed(cell("A3", formula="=sum( A1:A2 )"), context))[0]
    uncalculated, said = await passed(cell("A3", value="42", formula="=SUM(A1:A2)"), context)
    assert not uncalculated and "A3 is '' from =SUM(A1:A2)" in said
    assert not (await passed(cell("A1", formula="=A2"), context))[0]  # a value, no formula
    other, said = await passed(cell("A1", value="12", sheet="Nope"), context)
    assert not other and "has no sheet 'Nope'" in said


# --- tasks in a batch ----------------------------------------------------------------------


def _one_task(folder: Path, spec: str, answers: list[object]) -> Path:
    folder.mkdir()
    (folder / "pages").mkdir()
    (folder / "pages" / "form.html").write_text("<form method=post action=/submit></form>")
    (folder / "t.yaml").write_text(spec)
    write_replay(folder / "t.answers.json", answers)
    return folder


async def test_a_served_task_posts_to_its_own_server_and_records_it_held(tmp_path: Path) -> None:
    """The server runs for the task, on a free port; what was posted decides; recorded
    answers hold its address as {server}, which changes with every run."""
    post = "curl -s -d name=Ada {server}/submit"
    suite = _one_task(
        tmp_path / "suite",
        "id: t\nrequest: send the form\n"
        'setup: [{serve: {root: "{suite}/pages"}}]\n'
        "checks: {posted: {path: /submit, fields: {name: Ada}}}\n",
        [shell_answer("CONTINUE", post), shell_answer("FINISH", result="sent")],
    )
    out = tmp_path / "out"
    options = BatchOptions(out=out, model="replay", workers=1, record=True)
    [row] = await run_batch(SUITE.load(suite), options)
    assert (row.passed, row.checks_passed) == (True, 1), row.reason
    assert read_posted(out / "work" / "t" / "posted.jsonl")[0]["fields"] == {"name": "Ada"}
    held = (suite / "t.answers.json").read_text()
    assert "curl -s -d name=Ada {server}/submit" in held and "127.0.0.1" not in held
    # Replayed again, on another free port: the held address is this run's.
    [again] = await run_batch(
        SUITE.load(suite), BatchOptions(out=tmp_path / "again", model="replay")
    )
    assert again.passed, again.reason


async def test_a_task_that_approves_runs_what_would_be_asked_about(tmp_path: Path) -> None:
    """A request that itself asks for a sensitive action (deleting a file here, submitting
    a form in the browser tasks) is approved by the task, as --yes would."""
    spec = "id: t\nrequest: delete old.txt\nsetup: [{file: {path: old.txt}}]\n"
    spec += "checks: {file_absent: old.txt}\n"
    answers: list[object] = [
        shell_answer("CONTINUE", "rm -f old.txt"),
        shell_answer("FINISH", result="deleted"),
    ]
    asked = _one_task(tmp_path / "asked", spec, answers)
    [declined] = await run_batch(
        SUITE.load(asked), BatchOptions(out=tmp_path / "o1", model="replay", workers=1)
    )
    assert not declined.passed
    approving = _one_task(tmp_path / "approving", spec + "approve: true\n", answers)
    [done] = await run_batch(
        SUITE.load(approving), BatchOptions(out=tmp_path / "o2", model="replay", workers=1)
    )
    assert done.passed, done.reason
