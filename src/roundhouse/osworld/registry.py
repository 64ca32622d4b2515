"""Functions by the name OSWorld's task files give them (a getter's `type`, a step's, a
metric's `func`). Each is registered where it is defined, under its own name, which is
OSWorld's, so that the name is written once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Registry(dict[str, F]):
    def add(self, function: F) -> F:
        """Register `function` under its own name (a decorator)."""
        self[function.__name__] = function
        return function

    def named(self, name: str) -> Callable[[F], F]:
        """Register a function under `name`, where OSWorld's name is not a good one in
        Python (its step `open`) or one function serves two names."""

        def add(function: F) -> F:
            self[name] = function
            return function

        return add
