"""The fake Gemini API's checks of a request (fake.py answers with them): its tools and
its contents, each problem refused as the API words it, in Google's error body. Written
from the API's documentation, apart from roundhouse's client (fake.py's docstring lists
what is checked)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from roundhouse.models.fake_http import ImageProblem, Refused, decoded_image
from roundhouse.models.gemini.fake_tables import (
    ENVIRONMENTS,
    FUNCTION_NAME,
    IMAGE_TYPES,
    SCHEMA_TYPES,
    STATUSES,
    Model,
)


def error_body(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": STATUSES.get(code, "UNKNOWN")}}


def refusal(code: int, message: str) -> Refused:
    return Refused(code, message, error_body(code, message))


def invalid(message: str) -> Refused:
    return refusal(400, message)


def _get(data: Mapping[str, Any], name: str) -> Any:
    """A field by its JSON name (camelCase), or by its proto name (snake_case): the API
    reads both."""
    if name in data:
        return data[name]
    return data.get(re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower())


# ------------------------------------------------------------------ the checks


@dataclass
class Offered:
    """What a request's tools let the model call."""

    predefined: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)

    @property
    def names(self) -> set[str]:
        return self.predefined | self.declared


def check_tools(tools: Any, model: Model) -> Offered:
    offered = Offered()
    if tools is None:
        return offered
    if not isinstance(tools, list):
        raise invalid("Invalid JSON payload received. 'tools' must be a list.")
    computer_uses = 0
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise invalid(f"tools[{number}]: must be an object")
        computer = _get(tool, "computerUse")
        if computer is not None:
            computer_uses += 1
            offered.predefined = _check_computer_use(computer, model, number)
        declarations = _get(tool, "functionDeclarations")
        for index, declaration in enumerate(declarations or ()):
            name = _check_declaration(
                declaration, f"tools[{number}].function_declarations[{index}]"
            )
            if name in offered.declared:
                raise invalid(f"Duplicate function declaration found: {name}")
            offered.declared.add(name)
    if computer_uses > 1:
        raise invalid("At most one computer_use tool may be given.")
    if clash := offered.declared & offered.predefined:
        raise invalid(
            f"Duplicate function declaration found: {', '.join(sorted(clash))} is a predefined "
            "computer use function: exclude it (excluded_predefined_functions) to declare your own"
        )
    return offered


def _check_computer_use(computer: Any, model: Model, number: int) -> set[str]:
    where = f"tools[{number}].computer_use"
    if not isinstance(computer, dict):
        raise invalid(f"{where}: must be an object")
    environment = _get(computer, "environment")
    if environment is None:
        raise invalid(f"{where}.environment: required")
    if environment not in ENVIRONMENTS:
        raise invalid(
            f"Invalid value at '{where}.environment' (type.googleapis.com/google.ai."
            f'generativelanguage.v1beta.Tool.ComputerUse.Environment), "{environment}"'
        )
    excluded = _get(computer, "excludedPredefinedFunctions") or []
    if not isinstance(excluded, list) or not all(isinstance(name, str) for name in excluded):
        raise invalid(f"{where}.excluded_predefined_functions: a list of names")
    if unknown := [name for name in excluded if name not in model.functions]:
        raise invalid(
            f"{where}.excluded_predefined_functions: {', '.join(unknown)} is not a predefined "
            f"function of this model (they are: {', '.join(model.functions)})"
        )
    return set(model.functions) - set(excluded)


def _check_declaration(declaration: Any, where: str) -> str:
    if not isinstance(declaration, dict):
        raise invalid(f"{where}: must be an object")
    name = declaration.get("name")
    if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name):
        raise invalid(
            f"{where}.name: {name!r}: must start with a letter or an underscore and contain only "
            "a-z, A-Z, 0-9, underscores, dots, colons and dashes, at most 128"
        )
    parameters = _get(declaration, "parameters")
    schema = _get(declaration, "parametersJsonSchema")
    if parameters is not None and schema is not None:
        raise invalid(f"{where}: parameters and parameters_json_schema are mutually exclusive")
    if parameters is not None:
        _check_schema(parameters, f"{where}.parameters", top=True)
    if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
        raise invalid(f"{where}.parameters_json_schema: must describe an object")
    return name


def _check_schema(schema: Any, where: str, top: bool = False) -> None:
    if not isinstance(schema, dict):
        raise invalid(f"{where}: must be a schema object")
    kind = str(schema.get("type", "")).upper()
    if kind not in SCHEMA_TYPES:
        raise invalid(f"{where}.type: {schema.get('type')!r} is not a schema type")
    if top and kind != "OBJECT":
        raise invalid(f"{where}.type: the parameters of a function must be an OBJECT")
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise invalid(f"{where}.properties: must be a mapping")
    for name, inner in properties.items():
        _check_schema(inner, f"{where}.properties[{name}]")
    required = schema.get("required") or []
    if missing := [name for name in required if name not in properties]:
        raise invalid(f"{where}.required: {', '.join(map(str, missing))} is not a property")
    if kind == "ARRAY":
        if "items" not in schema:
            raise invalid(f"{where}.items: missing field (an ARRAY needs items)")
        _check_schema(schema["items"], f"{where}.items")


@dataclass(frozen=True)
class _Asked:
    """A functionCall of a model turn, waiting for its response."""

    name: str
    id: str | None
    confirm: bool  # its safety_decision requires confirmation


def check_contents(
    contents: Any, model: Model, predefined: Iterable[str], signatures: set[str]
) -> None:
    """Refused where the turns, the call/response pairs, the images or the signatures go
    wrong."""
    if not isinstance(contents, list) or not contents:
        raise invalid("* GenerateContentRequest.contents: contents is not specified")
    predefined = set(predefined)
    asked: list[_Asked] = []
    last_role = None
    current = _current_turn_start(contents)
    for number, content in enumerate(contents):
        where = f"contents[{number}]"
        if not isinstance(content, dict):
            raise invalid(f"{where}: must be an object")
        role = content.get("role") or "user"
        if role not in ("user", "model"):
            raise invalid(f"Please use a valid role: user, model. ({where}.role = {role!r})")
        if role == last_role or (last_role is None and role != "user"):
            raise invalid("Please ensure that multiturn requests alternate between user and model.")
        last_role = role
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise invalid(
                f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty."
            )
        for index, part in enumerate(parts):
            _check_part(part, f"{where}.parts[{index}]", role)
        if role == "model":
            asked = _calls_of(parts)
            if model.signs and number >= current:
                _check_signature(parts, number, signatures)
        else:
            latest = number == len(contents) - 1
            _check_answers(parts, asked, predefined if latest else set(), where)
            asked = []
    if asked:
        raise invalid(
            "Please ensure that function response turn comes immediately after a function call "
            f"turn: {', '.join(call.name for call in asked)} of the last model turn is unanswered."
        )


def _current_turn_start(contents: list[Any]) -> int:
    """Where the current turn starts: at the user's last message that is not function
    responses (thought signatures are checked from there on)."""
    start = 0
    for number, content in enumerate(contents):
        if not isinstance(content, dict) or (content.get("role") or "user") != "user":
            continue
        parts = content.get("parts") or []
        if not any(isinstance(p, dict) and _get(p, "functionResponse") for p in parts):
            start = number
    return start


DATA_FIELDS = ("text", "inlineData", "functionCall", "functionResponse", "fileData")


def _check_part(part: Any, where: str, role: str) -> None:
    if not isinstance(part, dict):
        raise invalid(f"{where}: must be an object")
    kinds = [name for name in DATA_FIELDS if _get(part, name) is not None]
    if len(kinds) != 1:
        raise invalid(f"{where}: a part holds exactly one of {', '.join(DATA_FIELDS)}, not {kinds}")
    kind = kinds[0]
    if kind == "functionCall" and role != "model":
        raise invalid(f"{where}: a functionCall is the model's, not in a {role} turn")
    if kind == "functionResponse" and role != "user":
        raise invalid(f"{where}: a functionResponse is the user's, not in a {role} turn")
    if kind == "inlineData":
        _check_image(_get(part, "inlineData"), f"{where}.inline_data")
    if kind == "functionResponse":
        answer = _get(part, "functionResponse")
        if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
            raise invalid(f"{where}.function_response.name: required")
        if not isinstance(answer.get("response"), dict):
            raise invalid(f"{where}.function_response.response: required, a JSON object")
        for index, inner in enumerate(answer.get("parts") or ()):
            blob = _get(inner, "inlineData") if isinstance(inner, dict) else None
            if blob is None:
                raise invalid(f"{where}.function_response.parts[{index}]: inline_data only")
            _check_image(blob, f"{where}.function_response.parts[{index}].inline_data")


def _check_image(blob: Any, where: str) -> str:
    """The image's type (PNG, JPEG, WEBP); Refused unless the data is base64 of it."""
    if not isinstance(blob, dict):
        raise invalid(f"{where}: must be an object")
    mime = _get(blob, "mimeType")
    if mime not in IMAGE_TYPES:
        raise invalid(f"{where}.mime_type: {mime!r} is not image/png, image/jpeg or image/webp")
    try:
        decoded_image(blob.get("data") or "", mime, IMAGE_TYPES)
    except ImageProblem as problem:
        said = {
            "base64": f"{where}.data: Invalid value, not base64",
            "unreadable": f"{where}: Unable to process input image",
            "mismatch": f"{where}: the data is {problem.found}, but mime_type says {mime}",
        }
        raise invalid(said[problem.kind]) from None
    return IMAGE_TYPES[mime]


def _calls_of(parts: list[Any]) -> list[_Asked]:
    asked = []
    for part in parts:
        call = _get(part, "functionCall")
        if call is None:
            continue
        args = call.get("args") or {}
        safety = _get(args, "safetyDecision") if isinstance(args, dict) else None
        confirm = isinstance(safety, dict) and safety.get("decision") == "require_confirmation"
        asked.append(_Asked(str(call.get("name")), call.get("id"), confirm))
    return asked


def _check_signature(parts: list[Any], number: int, signatures: set[str]) -> None:
    for position, part in enumerate(parts):
        call = _get(part, "functionCall")
        if call is None:
            continue
        signature = _get(part, "thoughtSignature")
        if signature is None:
            raise invalid(
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly. Additional data, function call "
                f"`{call.get('name')}`, position {position + 1} of contents[{number}]."
            )
        if signature not in signatures:
            raise invalid(f"Corrupted thought signature (contents[{number}].parts[{position}]).")
        return  # only the first call of a turn carries one


def _check_answers(parts: list[Any], asked: list[_Asked], predefined: set[str], where: str) -> None:
    answers = [_get(p, "functionResponse") for p in parts if _get(p, "functionResponse")]
    if answers and not asked:
        raise invalid(
            "Please ensure that function response turn comes immediately after a function "
            "call turn."
        )
    if len(answers) != len(asked):
        raise invalid(
            "Please ensure that the number of function response parts is equal to the number of "
            f"function call parts of the function call turn ({where}: {len(answers)} for "
            f"{len(asked)})."
        )
    beside = any(_get(p, "inlineData") for p in parts)
    for index, (call, answer) in enumerate(zip(asked, _paired(asked, answers, where), strict=True)):
        if answer["name"] != call.name:
            raise invalid(
                f"{where}: the function response {answer['name']!r} answers the call "
                f"{call.name!r}: names must match"
            )
        if call.confirm and answer["response"].get("safety_acknowledgement") != "true":
            raise invalid(
                f"{where}: the call {call.name} required confirmation (safety_decision), and its "
                'function response does not carry safety_acknowledgement: "true"'
            )
        if call.name in predefined and not answer.get("parts") and not beside:
            raise invalid(
                f"{where}: the response to {call.name} (call {index + 1}) carries no screenshot: "
                "a predefined computer use function is answered with the screen as an inline image"
            )


def _paired(asked: list[_Asked], answers: list[Any], where: str) -> list[Any]:
    """The responses in the order of the calls: by id where the calls have ids, else as
    given."""
    if not any(call.id for call in asked):
        return answers
    by_id = {answer.get("id"): answer for answer in answers}
    paired = []
    for call in asked:
        if call.id not in by_id:
            raise invalid(f"{where}: no function response has the id {call.id!r} of {call.name}")
        paired.append(by_id[call.id])
    return paired
