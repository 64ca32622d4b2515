"""The offline planner reads requests as people write them, and nothing more: what it
cannot read whole it FAILs before acting, naming the part."""

from __future__ import annotations

import json
from typing import get_args

from roundhouse.models.base import ModelRequest
from roundhouse.models.observation import HostObservation, ShellObservation
from roundhouse.models.offline.host import parse_request, plan_host
from roundhouse.models.offline.intents import INTENTS, SHELL_NAMES, SLOTS, read_request
from roundhouse.models.offline.model import OfflineModel
from roundhouse.models.offline.ops import Op, OpKind
from roundhouse.models.references import StepOutput


def kinds(request: str) -> list[tuple[str, str]]:
    ops, unknown = parse_request(request)
    assert unknown == [], unknown
    return [(op.kind, op.text) for op in ops]


def test_launch_write_and_save_the_document_to() -> None:
    request = (
        "Launch the text editor, write 'groceries: milk, eggs' and save the document to "
        "/tmp/x/groceries.txt"
    )
    assert kinds(request) == [
        ("open", "text editor"),
        ("type", "groceries: milk, eggs"),
        ("save_as", "/tmp/x/groceries.txt"),
    ]


def test_a_quoted_text_is_never_split_even_when_it_holds_a_verb() -> None:
    assert kinds('open the editor and type "a, then save it" then save it as /tmp/a.txt') == [
        ("open", "text editor"),  # as the launcher knows the kind
        ("type", "a, then save it"),
        ("save_as", "/tmp/a.txt"),
    ]


def test_writing_in_the_editor_is_typing_into_the_window_not_into_a_field() -> None:
    ops, _ = parse_request("start gedit and write Dear Ada in the editor")
    assert ops[1] == Op("type", "write Dear Ada in the editor", text="Dear Ada")


def test_save_to_in_and_as_name_a_path() -> None:
    for verb in ("as", "to", "in", "under"):
        assert kinds(f"save it {verb} /tmp/n.txt") == [("save_as", "/tmp/n.txt")]


def test_what_it_does_not_understand_is_said() -> None:
    ops, unknown = parse_request("open gedit, then paint a sunset")
    assert [op.kind for op in ops] == ["open"] and unknown == ["paint a sunset"]
    assert kinds("type milk, eggs and bread") == [("type", "milk, eggs and bread")]


def plan(request: str) -> list[str] | None:
    return read_request(request).plan()


def test_the_requests_that_failed_before_are_understood() -> None:
    assert plan("What's the kernel release on this machine?") == ["kernel"]
    assert plan("Show me what's inside /etc/hostname") == ["inside path='/etc/hostname'"]
    assert plan("which files are in /etc/apt") == ["list_files path='/etc/apt'"]
    assert plan("How much space is left on the root filesystem") == ["disk_free path='/'"]
    assert plan("please open a web browser") == ["open 'web browser'"]
    assert plan("Open gedit. Type the words blue sky. Save the file to /tmp/sky.txt") == [
        "open 'gedit'",
        "type 'blue sky'",
        "save_as '/tmp/sky.txt'",
    ]


def test_verbs_are_read_by_meaning() -> None:
    for verb in ("write", "put", "enter", "type"):
        assert plan(f"{verb} hello in it") == ["type 'hello'"]
    for verb in ("store", "keep", "save"):
        assert plan(f"{verb} it as /tmp/a.txt") == ["save_as '/tmp/a.txt'"]
    for verb in ("start", "launch", "run", "open", "bring up"):
        assert plan(f"{verb} the spreadsheet") == ["open 'spreadsheet'"]
    for there in ("in it", "there", "into the document"):
        assert plan(f"open gedit and write hi {there}") == ["open 'gedit'", "type 'hi'"]


def test_a_value_said_with_its_place_before_it_and_the_same_step_said_again() -> None:
    assert plan("In the Name field, type Ada, and press Return") == [
        "type 'Ada' into 'Name'",
        "keys 'Return'",
    ]
    assert plan("put 1 in A1, 2 in A2 then 3 in A3") == [
        "cell '1' into 'A1'",
        "cell '2' into 'A2'",
        "cell '3' into 'A3'",
    ]
    assert plan("in the calculator click 7, plus, 3 and equals") == [
        "open 'calculator'",
        "click '7'",
        "click '+'",
        "click '3'",
        "click '='",
    ]
    # "in the calculator" after opening it names the window just opened: no second launch
    assert plan("open the calculator. In the calculator press 7") == [
        "open 'calculator'",
        "keys '7'",
    ]


def test_two_shell_questions_at_once_run_both_and_answer_both() -> None:
    reading = read_request("what's the hostname, and how many cores does this machine have?")
    assert reading.plan() == ["hostname", "cpus"]
    intent = reading.shell_intent()
    assert intent is not None and intent.commands == ("hostname", "nproc")
    spoken = intent.answer([StepOutput(1, "box\n"), StepOutput(2, "4\n")])
    assert spoken.text == "The hostname is box. There are 4 CPUs."
    assert spoken.held == "The hostname is {{step 1 line 1}}. There are {{step 2 line 1}} CPUs."
    # an answer of several lines stands apart from the next
    both = read_request("show me notes.txt and the hostname").shell_intent()
    assert both is not None and both.commands == ("cat -- notes.txt", "hostname")
    spoken = both.answer([StepOutput(1, "a\nb\n"), StepOutput(2, "box\n")])
    assert spoken.text == "Contents of notes.txt:\na\nb\nThe hostname is box."


def test_a_request_not_read_whole_fails_before_any_step_naming_the_part() -> None:
    for request, part in (
        ("open gedit. Type hello. Then paint a sunset.", "paint a sunset"),
        ("open the calculator and compute 12*7", "compute 12*7"),
        ("open gedit and the calculator", "open gedit and the calculator"),
        ("type hello into gedit", "type hello into gedit"),
    ):
        said = plan_host(HostObservation(request, (), ())).answer
        assert said["action"] == {"function": None, "arguments": {}, "status": "FAIL"}
        assert said["observation"] == f"I do not understand {part!r}."
        assert said["result"].startswith(f"I do not understand {part!r}. The offline model")


def test_a_shell_question_and_a_desktop_step_are_not_mixed() -> None:
    said = plan_host(HostObservation("open gedit and tell me the hostname", (), ())).answer
    assert said["action"]["status"] == "FAIL" and said["action"]["function"] is None
    assert "'tell me the hostname' is a question for the shell" in said["observation"]


async def test_the_linux_agent_says_a_desktop_step_needs_a_desktop() -> None:
    observation = ShellObservation(request="please open the text editor", history=())
    completion = await OfflineModel().complete(
        ModelRequest(agent="linux", messages=(), observation=observation)
    )
    said = json.loads(completion.text)
    assert said["action"]["status"] == "FAIL"
    assert "'open the text editor' is a step on a desktop" in said["observation"]
    assert "--agent host" in said["result"]


def test_every_line_of_the_table_compiles_and_means_something_the_planner_does() -> None:
    for entry in INTENTS:
        assert entry.template.pattern.groupindex.keys() <= SLOTS.keys(), entry.template.source
        assert entry.means in SHELL_NAMES or entry.means in get_args(OpKind)
