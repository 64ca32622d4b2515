"""What the prompts tell a model about its tools, and what they repeat."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client

from roundhouse.agents.app import _tool_arguments, as_app_tool
from roundhouse.agents.prompting import app_messages
from roundhouse.cli.serve import engine_tools
from roundhouse.config import Settings
from roundhouse.core.commands import Command, Result, ResultStatus
from roundhouse.core.states import RoundState
from roundhouse.devices.base import Tool, ToolRegistry, make_tool
from roundhouse.devices.contract import WINDOW_ACTIONS, Control, ControlList, Rect, WindowInfo
from roundhouse.devices.describing import describe_tool, purpose, signature
from roundhouse.devices.linux.tools import desktop_registry
from roundhouse.devices.mcp.server import build_server
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.models.base import ModelRequest
from roundhouse.models.observation import AppObservation, HostObservation
from roundhouse.testing.dispatch import FunctionDispatcher
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.function_model import FunctionModel
from roundhouse.testing.tools import fake_tools
from tests.helpers import SessionFactory, read_jsonl, shell_answer, write_replay


def test_the_purpose_is_the_first_whole_sentence() -> None:
    assert purpose("Take a screenshot.\n\nannotate: draw boxes.") == "Take a screenshot."
    assert purpose("Scroll the window. More text follows.") == "Scroll the window."
    # Neither a ':' nor a '.' inside quotes or brackets ends it, nor a line break.
    launch = (
        'Start an application: a desktop entry name ("Mousepad. Text Editor", "gedit")\n'
        'or a command line (e.g. "mousepad /tmp/notes.txt"). Then wait.'
    )
    assert purpose(launch) == (
        'Start an application: a desktop entry name ("Mousepad. Text Editor", "gedit") '
        'or a command line (e.g. "mousepad /tmp/notes.txt").'
    )
    assert purpose("Use one, e.g. this one. Or not.") == "Use one, e.g. this one."
    assert purpose("No full stop at the end") == "No full stop at the end"
    assert purpose("\n\n  Leading blank lines.  ") == "Leading blank lines."
    assert purpose(purpose(launch)) == purpose(launch)  # an MCP client's copy is unchanged


def test_a_signature_is_rendered_from_the_schema() -> None:
    schema = {
        "properties": {
            "id": {"title": "Id", "type": "integer"},
            "name": {"title": "Name", "type": "string"},
            "window_id": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "default": None,
                "title": "Window Id",
            },
            "button": {"enum": ["left", "right"], "default": "left", "type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}, "default": []},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "mode": {"$ref": "#/$defs/Mode"},
            "anything": {},
            "seconds": {"type": ["number", "null"], "default": 1.0},
        },
        "required": ["id", "name", "mode", "anything"],
        "$defs": {"Mode": {"enum": [1, 2], "title": "Mode"}},
    }
    assert signature("act", schema) == (
        "act(id: int, name: str, window_id: int | None = None, "
        'button: "left" | "right" = "left", paths: list[str] = [], '
        "env?: dict[str, str], mode: 1 | 2, anything: Any, seconds: float | None = 1.0)"
    )
    assert signature("list_windows", {"properties": {}}) == "list_windows()"


def test_a_tool_line_comes_from_the_function() -> None:
    def wait(seconds: float = 1.0, unit: Literal["s", "ms"] = "s") -> None:
        """Wait a while (up to 60 s).

        seconds: how long.
        """

    spec = make_tool(wait, "action").spec
    assert spec.description == "Wait a while (up to 60 s)."
    assert describe_tool(spec) == (
        'wait(seconds: float = 1.0, unit: "s" | "ms" = "s") — Wait a while (up to 60 s).'
    )


# --- every agent's real prompt --------------------------------------------------------------

GEDIT = WindowInfo(
    xid=4242,
    title="Untitled Document 1 - gedit",
    application="Gedit",
    pid=99,
    rect=Rect(left=0, top=0, right=800, bottom=600),
    active=True,
)
TEXT_FIELD = Control(
    label=1,
    id="/a11y/1",
    role="text",
    name="Document",
    rect=Rect(left=10, top=40, right=790, bottom=590),
)


def served_registry() -> ToolRegistry:
    """The tools `roundhouse serve` and a desktop session hand out, from the real tool
    functions, on the fake display (nothing here connects to a desktop)."""
    tools = fake_tools(FakeDesktop(size=(800, 600)))
    return desktop_registry(tools, extra=engine_tools(Settings()))


def served(registry: ToolRegistry, name: str) -> Tool:
    tool = registry.get(name)
    assert tool is not None, name
    return tool


def gedit_desktop(command: Command) -> Result:
    """One gedit window and its text field; no display, no screenshots."""

    def ok(value: Any) -> Result:
        return Result(status=ResultStatus.SUCCESS, result=value)

    window = GEDIT.model_dump(mode="json")
    match command.tool_name:
        case "list_windows":
            return ok([window])
        case "launch_application" | "select_window":
            return ok(window)
        case "list_applications":
            return ok(["gedit — Text Editor", "Vim — Text Editor (runs in a terminal)"])
        case "get_controls":
            return ok(ControlList(window=GEDIT, controls=[TEXT_FIELD]).model_dump(mode="json"))
        case "capture_desktop_screenshot" | "capture_window_screenshot" | "get_ui_tree":
            return Result.failure("no screen in this test")
        case _:
            return ok({"screen_changed": True})


def answer(status: str, function: str | None = None, **arguments: Any) -> dict[str, Any]:
    return {
        "observation": "seen",
        "thought": "thinking",
        "action": {"function": function, "arguments": arguments, "status": status},
        "plan": ["type the text", "save"],
        "result": "done" if status in ("FINISH", "FAIL") else "",
    }


def host_and_app(request: ModelRequest) -> dict[str, Any]:
    """The host assigns gedit, the app types once and finishes, the host finishes."""
    observation = request.observation
    if isinstance(observation, HostObservation):
        if observation.subtasks:
            return answer("FINISH")
        return answer("ASSIGN", "launch_application", name="gedit") | {
            "current_subtask": "type the word hello"
        }
    assert isinstance(observation, AppObservation)
    if observation.history:
        return answer("FINISH")
    return answer("CONTINUE", "type_text", id=1, name="Document", text="hello")


Prompt = dict[str, str]  # agent, system, user: one model call as request.log has it


def logged_prompts(session: Session) -> list[Prompt]:
    """The prompts as request.log has them; an AppAgent is logged by its application's name."""
    return [
        {
            "agent": p["agent"] if p["agent"] in ("host", "linux") else "app",
            "system": p["messages"][0]["text"],
            "user": p["messages"][1]["text"],
        }
        for p in read_jsonl(session.store.folder / "request.log")
    ]


async def desktop_prompts(tmp_path: Path) -> list[Prompt]:
    """The host's and the AppAgent's prompts of a round on the fake desktop, two rounds so
    that the second shows the session's blackboard."""
    settings = Settings.model_validate(
        {"logs": tmp_path / "logs", "workdir": tmp_path, "model": "function", "agent": "host"}
    )
    desktop = FunctionDispatcher(gedit_desktop, served_registry().specs())
    async with compose_session(
        settings,
        dispatcher=desktop,
        models={"function": FunctionModel(host_and_app)},
        snapshots=NoSnapshots(),
    ) as session:
        for request in ("open gedit and type hello", "now type hello again"):
            outcome = await session.run_round(request)
            assert outcome.state is RoundState.FINISH, outcome.result
    return logged_prompts(session)


async def shell_prompts(tmp_path: Path, make_session: SessionFactory) -> list[Prompt]:
    replay = write_replay(
        tmp_path / "answers.json",
        [
            shell_answer("CONTINUE", "echo hi"),
            shell_answer("FINISH", result="said hi"),
            shell_answer("FINISH", result="nothing to do"),
        ],
    )
    session = await make_session(model=f"replay:{replay}")
    await session.run(["say hi", "say nothing"])
    return logged_prompts(session)


@pytest.fixture
async def every_prompt(tmp_path: Path, make_session: SessionFactory) -> list[Prompt]:
    prompts = await desktop_prompts(tmp_path / "desktop")
    prompts += await shell_prompts(tmp_path, make_session)
    assert {p["agent"] for p in prompts} == {"host", "app", "linux"}
    return prompts


OFFERED = {
    "host": {"select_window", "launch_application", "run_shell", "get_system_info"},
    "app": set(WINDOW_ACTIONS),
    "linux": {"run_shell", "get_system_info"},
}
MAX_TOOL_LINE = 240  # characters: one line a model reads at a glance
_TOOL_LINE = re.compile(r"^- (?P<name>\w+)\((?P<arguments>.*)\) — (?P<purpose>.+)$")


def tool_lines(system: str) -> dict[str, re.Match[str]]:
    found = (_TOOL_LINE.match(line) for line in system.splitlines())
    return {match["name"]: match for match in found if match}


def test_every_prompt_lists_its_tools_as_whole_lines(every_prompt: list[Prompt]) -> None:
    schema_titles = {
        schema["title"]
        for spec in served_registry().specs()
        for schema in spec.parameters["properties"].values()
        if "title" in schema
    }
    for prompt in every_prompt:
        lines = tool_lines(prompt["system"])
        assert set(lines) == OFFERED[prompt["agent"]], prompt["agent"]
        for line in lines.values():
            text = line.group(0)
            assert text.endswith("."), f"ends mid-sentence: {text}"
            assert len(text) <= MAX_TOOL_LINE, text
            assert '{"' not in text and "anyOf" not in text and '"title"' not in text, text
            assert not any(title in line["arguments"] for title in schema_titles), text
        # Nothing of a tool is left on the lines after it (the old cut left its rest there).
        assert "Arguments:" not in prompt["system"]


def test_signatures_say_types_and_defaults(every_prompt: list[Prompt]) -> None:
    host = tool_lines(next(p["system"] for p in every_prompt if p["agent"] == "host"))
    app = tool_lines(next(p["system"] for p in every_prompt if p["agent"] == "app"))
    linux = tool_lines(next(p["system"] for p in every_prompt if p["agent"] == "linux"))
    assert app["set_text"]["arguments"] == "id: int, name: str, text: str"
    assert app["type_text"]["arguments"] == (
        "text: str, id: int | None = None, name: str | None = None"
    )
    assert app["click_control"]["arguments"] == (
        'id: int, name: str, button: "left" | "middle" | "right" = "left", double: bool = False'
    )
    assert app["wait"]["arguments"] == "seconds: float"
    assert host["launch_application"].group(0) == (
        "- launch_application(name: str, timeout: float = 60.0) — Start an application by what "
        'it is ("text editor", "web browser"), its name from list_applications ("gedit") or a '
        'command line ("mousepad /tmp/notes.txt"), and wait for its window.'
    )
    assert (
        host["select_window"]["arguments"]
        == "window_id: int | None = None, title: str | None = None"
    )
    assert linux["run_shell"]["arguments"] == (
        "command: str, cwd: str | None = None, timeout: float | None = None"
    )
    assert linux["get_system_info"]["arguments"] == ""


async def test_the_mcp_server_lists_the_purpose_the_prompts_give(
    every_prompt: list[Prompt],
) -> None:
    registry = served_registry()
    async with Client(build_server(registry)) as client:
        listed = (await client.list_tools()).tools
    described = {tool.name: tool.description for tool in listed}
    assert set(described) == set(registry.names())
    for prompt in every_prompt:
        lines = tool_lines(prompt["system"])
        assert lines, prompt["agent"]
        for name, line in lines.items():
            assert described[name] == line["purpose"], name
    for tool in listed:  # the schema stays whole, for the client to validate with
        assert tool.input_schema == served(registry, tool.name).spec.parameters
        assert purpose(tool.description or "") == tool.description


def test_the_app_agent_calls_its_tools_with_arguments_the_tools_accept() -> None:
    registry = served_registry()
    window = GEDIT.model_copy(update={"xid": 7})
    examples: dict[str, dict[str, Any]] = {
        "click_control": {"id": 3, "name": "Save", "double": True},
        "set_text": {"id": 3, "name": "Name", "text": "Ada"},
        "type_text": {"text": "hello"},
        "scroll": {"x": 10, "y": 20, "direction": "up"},
    }
    for name in WINDOW_ACTIONS:
        tool = served(registry, name)
        given = set(as_app_tool(tool.spec).parameters["properties"])
        wanted = set(tool.spec.parameters["properties"])
        assert given - {"id", "name"} <= wanted, name
        assert wanted - given <= {"label", "control_id", "window_id"}, name
        if name in examples:
            tool.arguments.model_validate(
                _tool_arguments(name, examples[name], [tool.spec], window)
            )
    converted = _tool_arguments("set_text", examples["set_text"], registry.specs(), window)
    assert converted == {"text": "Ada", "label": 3, "window_id": 7}
    # The control the model saw under that number is named by its node, whatever the
    # tool's list (read again for the annotated screenshot) numbers it by now.
    seen = Control(
        label=3,
        id=":1.9/obj/42",
        role="text",
        name="Name",
        rect=Rect(left=0, top=0, right=9, bottom=9),
    )
    converted = _tool_arguments(
        "set_text", examples["set_text"], registry.specs(), window, control=seen
    )
    assert converted == {"text": "Ada", "control_id": ":1.9/obj/42", "window_id": 7}


def test_no_label_is_repeated_in_a_prompt(every_prompt: list[Prompt]) -> None:
    for prompt in every_prompt:
        user = prompt["user"]
        assert "Request: Request:" not in user and "Request: Request:" not in prompt["system"]
        assert user.count("Request:") == 1, user
    app = next(p["user"] for p in every_prompt if p["agent"] == "app")
    assert app.count("type the word hello") == 1, app  # under "Your subtask:" alone
    assert app.startswith("Request: open gedit and type hello\nPlan:\n- type the text\n")


def test_a_model_is_shown_each_controls_role_so_twins_of_one_name_differ() -> None:
    """Issue 46: a page titled "Order" has a tab and a button named "Order"; the app prompt
    gives each its role, and a disabled one says so, for a model to tell them apart."""

    def control(label: int, role: str, states: list[str] | None = None) -> Control:
        box = Rect(left=10, top=10 * label, right=90, bottom=10 * label + 8)
        return Control(
            label=label, id=str(label), role=role, name="Order", rect=box, states=states or []
        )

    window = WindowInfo(
        xid=4,
        title="Order - Chromium",
        application="chromium",
        pid=1,
        active=True,
        rect=Rect(left=0, top=0, right=1000, bottom=800),
    )
    shown = (
        control(2, "page tab", ["selected"]),
        control(15, "push button"),
        control(16, "link"),
        control(17, "push button", ["disabled"]),
    )
    observation = AppObservation(
        board="Request: click the Order button",
        subtask="click the Order button",
        application="chromium",
        window=window,
        controls=shown,
    )
    _, user = app_messages(observation, [])
    assert "2: [page tab] 'Order' (selected)" in user.text
    assert "15: [push button] 'Order'\n" in user.text
    assert "16: [link] 'Order'" in user.text
    assert "17: [push button] 'Order' (disabled)" in user.text
