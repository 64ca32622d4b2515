"""What each agent must answer, as pydantic models, validated at the boundary.

A parse or validation failure is an InvalidAnswer whose message goes back to the model;
nothing here falls back to a default status or a guessed function.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from roundhouse.agents.parsing import AnswerFormatError, extract_json_object
from roundhouse.core.states import AgentKind, InvalidTransition, Status, transition
from roundhouse.devices.contract import ToolName


class InvalidAnswer(ValueError):
    """The model's answer cannot be used; the message says why, for the model to fix."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ActionAnswer(_Answer):
    function: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: Status

    @field_validator("status", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("function", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value


class StepAnswer(_Answer):
    """What every acting agent answers each step."""

    observation: str
    thought: str
    action: ActionAnswer
    plan: list[str] = Field(default_factory=list)
    result: str = ""  # the answer so far; the final answer with FINISH, the reason with FAIL
    question: str | None = None  # what to ask the user when status is PENDING
    comment: str = ""  # what the agent notes for itself about this step (its progress)

    @field_validator("plan", mode="before")
    @classmethod
    def _plan_as_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [line.strip("- ").strip() for line in value.splitlines() if line.strip()]
        return value


class LinuxAnswer(StepAnswer):
    """{observation, thought, action {function, arguments, status}, plan, result}"""


AnswerT = TypeVar("AnswerT", bound=StepAnswer)


def parse_answer(
    text: str, answer_type: type[AnswerT], *, agent: AgentKind, functions: Collection[str]
) -> AnswerT:
    try:
        data = extract_json_object(text)
        answer = answer_type.model_validate(data)
    except AnswerFormatError as error:
        raise InvalidAnswer(str(error)) from None
    except ValidationError as error:
        raise InvalidAnswer(_describe(error)) from None
    check_action(answer.action, agent=agent, functions=functions)
    if answer.action.status is Status.PENDING and not answer.question:
        raise InvalidAnswer("status PENDING needs a 'question' for the user")
    return answer


def check_action(action: ActionAnswer, *, agent: AgentKind, functions: Collection[str]) -> None:
    try:
        transition(agent, action.status)
    except InvalidTransition as error:
        raise InvalidAnswer(str(error)) from None
    if action.function is not None and action.function not in functions:
        known = ", ".join(sorted(functions))
        raise InvalidAnswer(f"unknown function {action.function!r}; the functions are: {known}")


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "answer"
        problems.append(f"{where}: {item['msg']}")
    return "the answer does not have the required fields: " + "; ".join(problems)


def answer_schema(answer_type: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to endpoints that support structured output."""
    return answer_type.model_json_schema()


class HostAnswer(StepAnswer):
    """The host's decision: which application serves the next subtask, or the round's end."""

    current_subtask: str = ""  # with ASSIGN: what the AppAgent is to do


class AppAnswer(StepAnswer):
    """{observation, thought, action {function, arguments {id, name, ...}, status}, plan,
    comment, save_screenshot, result}"""

    save_screenshot: bool = False


ASSIGN_FUNCTIONS = (ToolName.SELECT_WINDOW, ToolName.LAUNCH_APPLICATION)


def check_host(answer: HostAnswer) -> HostAnswer:
    if answer.action.status is Status.ASSIGN:
        if answer.action.function not in ASSIGN_FUNCTIONS:
            raise InvalidAnswer(
                "ASSIGN needs the function select_window or launch_application "
                f"(got {answer.action.function!r})"
            )
        if not answer.current_subtask.strip():
            raise InvalidAnswer("ASSIGN needs 'current_subtask': what the application is to do")
    return answer


def check_control(arguments: dict[str, Any], controls: Collection[tuple[int, str]]) -> None:
    """The control an answer names by id must exist, and its name must agree with the id."""
    if "id" not in arguments:
        return
    names = dict(controls)
    try:
        label = int(arguments["id"])
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite id
        raise InvalidAnswer(f"control id {arguments['id']!r} is not a number") from None
    if label not in names:
        available = ", ".join(f"{k} {v!r}" for k, v in sorted(names.items())[:40]) or "none"
        raise InvalidAnswer(f"there is no control {label}; the controls are: {available}")
    given = str(arguments.get("name", "")).strip()
    if given.casefold() != names[label].strip().casefold():
        raise InvalidAnswer(
            f"control {label} is named {names[label]!r}, not {given!r}: give the id and name of "
            "the same control"
        )
