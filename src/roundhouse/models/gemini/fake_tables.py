"""The fake Gemini API's tables, from the API's documentation and Google's reference client
(fake.py and fake_checks.py check with them): each model's predefined computer-use
functions, the enums a request's fields take, and the error statuses by HTTP code."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The predefined functions, as Google's reference client lists them per model generation.
LEGACY_FUNCTIONS = (
    "open_web_browser", "click_at", "hover_at", "type_text_at", "scroll_document",
    "scroll_at", "wait_5_seconds", "go_back", "go_forward", "search", "navigate",
    "key_combination", "drag_and_drop",
)  # fmt: skip
FUNCTIONS = (
    "click", "double_click", "triple_click", "middle_click", "right_click", "mouse_down",
    "mouse_up", "move", "type", "drag_and_drop", "wait", "press_key", "key_down", "key_up",
    "hotkey", "take_screenshot", "scroll", "go_back", "navigate", "go_forward",
)  # fmt: skip
ENVIRONMENTS = frozenset(
    {"ENVIRONMENT_UNSPECIFIED", "ENVIRONMENT_BROWSER", "ENVIRONMENT_MOBILE", "ENVIRONMENT_DESKTOP"}
)
SCHEMA_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
PATH = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):generateContent$")
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
GRID_ARGS = ("x", "y", "destination_x", "destination_y")


@dataclass(frozen=True)
class Model:
    """What a served model offers: its predefined functions, whether it signs its calls."""

    functions: tuple[str, ...]
    signs: bool  # Gemini 3 and later: thought signatures, checked on the current turn


MODELS: dict[str, Model] = {
    "gemini-2.5-computer-use-preview-10-2025": Model(LEGACY_FUNCTIONS, signs=False),
    "gemini-3-flash-preview": Model(LEGACY_FUNCTIONS, signs=True),
    "gemini-3.1-pro-preview": Model(LEGACY_FUNCTIONS, signs=True),
    "gemini-3.5-flash": Model(FUNCTIONS, signs=True),
}


STATUSES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
