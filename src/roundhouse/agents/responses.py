"""What each agent must answer, as pydantic models, validated at the boundary.

A parse or validation failure is an InvalidAnswer whose message goes back to the model;
nothing here falls back to a default status or a guessed function.

An answer's "action" is one action {function, arguments, status}, or a list of them, run
in order (agents/action_list.py says when a list stops early). The last one's status is
the answer's; the ones before it act and go on (CONTINUE, or CONFIRM: asked first). One
action is a list of one: every answer written before lists existed reads the same.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.json_schema import SkipJsonSchema

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
    # This action and the next are parts of one action of the model's (Gemini's
    # type_text_at: a click, then the typing): a part that shows no effect of its own (a
    # click into the field already focused) does not stop the list before the rest of it.
    # Set by a computer-use client, never asked of a model: left out of the answer schema.
    joined_to_next: SkipJsonSchema[bool] = False

    @field_validator("status", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("function", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value


# The statuses an action may have before the last one of a list: it runs and the list goes
# on. The others end an answer (FINISH, FAIL, ASSIGN...) or run nothing (SCREENSHOT,
# PENDING), so they stand last.
GOES_ON = frozenset({Status.CONTINUE, Status.CONFIRM})


class StepAnswer(_Answer):
    """What every acting agent answers each step."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    observation: str
    thought: str
    # "action" in the JSON: one action, or a list of them in the order they run.
    actions: list[ActionAnswer] = Field(alias="action", min_length=1)
    plan: list[str] = Field(default_factory=list)
    result: str = ""  # the answer so far; the final answer with FINISH, the reason with FAIL
    question: str | None = None  # what to ask the user when status is PENDING
    comment: str = ""  # what the agent notes for itself about this step (its progress)

    @field_validator("actions", mode="before")
    @classmethod
    def _one_or_several(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict | ActionAnswer) else value

    @field_validator("plan", mode="before")
    @classmethod
    def _plan_as_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [line.strip("- ").strip() for line in value.splitlines() if line.strip()]
        return value

    @property
    def status(self) -> Status:
        """The answer's status: its last action's."""
        return self.actions[-1].status

    @property
    def last(self) -> ActionAnswer:
        return self.actions[-1]


class LinuxAnswer(StepAnswer):
    """{observation, thought, action {function, arguments, status}, plan, result}"""


AnswerT = TypeVar("AnswerT", bound=StepAnswer)


def parse_answer(
    text: str,
    answer_type: type[AnswerT],
    *,
    agent: AgentKind,
    functions: Collection[str],
    max_actions: int = 1,
) -> AnswerT:
    try:
        data = extract_json_object(text)
        answer = answer_type.model_validate(data)
    except AnswerFormatError as error:
        raise InvalidAnswer(str(error)) from None
    except ValidationError as error:
        raise InvalidAnswer(_describe(error)) from None
    check_actions(answer.actions, agent=agent, functions=functions, max_actions=max_actions)
    if answer.status is Status.PENDING and not answer.question:
        raise InvalidAnswer("status PENDING needs a 'question' for the user")
    return answer


def check_actions(
    actions: list[ActionAnswer],
    *,
    agent: AgentKind,
    functions: Collection[str],
    max_actions: int,
) -> None:
    """Each action as check_action says; a list no longer than `max_actions`, where every
    action but the last calls a tool and goes on."""
    if len(actions) > max_actions:
        allowed = "one action" if max_actions == 1 else f"at most {max_actions} actions"
        raise InvalidAnswer(f"the answer holds {len(actions)} actions; give {allowed}")
    for number, action in enumerate(actions, 1):
        check_action(action, agent=agent, functions=functions)
        if number == len(actions):
            break
        if action.function is None:
            raise InvalidAnswer(f"action {number} of the list calls no function; only the last may")
        if action.status not in GOES_ON:
            raise InvalidAnswer(
                f"action {number} of the list has status {action.status.value}; the actions "
                "before the last are CONTINUE (or CONFIRM), the last one's status is the answer's"
            )


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


def answer_schema(answer_type: type[BaseModel], max_actions: int = 1) -> dict[str, Any]:
    """The JSON schema sent to endpoints that support structured output: "action" is one
    action, or (where several are allowed) a list of up to `max_actions`."""
    schema = answer_type.model_json_schema()
    properties = schema.get("properties", {})
    if "action" in properties:
        one = properties["action"]["items"]
        several = {"type": "array", "items": one, "minItems": 1, "maxItems": max_actions}
        properties["action"] = {"anyOf": [one, several]} if max_actions > 1 else one
    return schema


class HostAnswer(StepAnswer):
    """The host's decision: which application serves the next subtask, or the round's end."""

    current_subtask: str = ""  # with ASSIGN: what the AppAgent is to do
    # With ASSIGN: the subtask is all that is left of the request, and its FINISH is the
    # round's (the host is not asked again to say so); a FAIL still comes back to it.
    finish_with_subtask: bool = False


class AppAnswer(StepAnswer):
    """{observation, thought, action {function, arguments {id, name, ...}, status}, plan,
    comment, save_screenshot, result}"""

    save_screenshot: bool = False


ASSIGN_FUNCTIONS = (ToolName.SELECT_WINDOW, ToolName.LAUNCH_APPLICATION)


def check_host(answer: HostAnswer) -> HostAnswer:
    if answer.status is Status.ASSIGN:
        if answer.last.function not in ASSIGN_FUNCTIONS:
            raise InvalidAnswer(
                "ASSIGN needs the function select_window or launch_application "
                f"(got {answer.last.function!r})"
            )
        if not answer.current_subtask.strip():
            raise InvalidAnswer("ASSIGN needs 'current_subtask': what the application is to do")
    elif answer.finish_with_subtask:
        raise InvalidAnswer(
            f"'finish_with_subtask' goes with ASSIGN, not {answer.status.value}: it says the "
            "round finishes when the subtask assigned does"
        )
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
