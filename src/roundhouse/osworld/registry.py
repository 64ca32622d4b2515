"""Functions by the name OSWorld's task files give them (a getter's `type`, a step's, a
metric's `func`). Each is registered where it is defined, under its own name, which is
OSWorld's, so that the name is written once. A name registered twice is refused at import,
where a dict literal's repeated key would have been caught by ruff."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Registry(dict[str, F]):
    def add(self, function: F) -> F:
        """Register `function` under its own name (a decorator)."""
        return self.named(function.__name__)(function)

    def named(self, name: str) -> Callable[[F], F]:
        """Register a function under `name`, where OSWorld's name is not a good one in
        Python (its step `open`) or one function serves two names."""

        def add(function: F) -> F:
            if name in self:
                raise ValueError(f"{name!r} is registered twice: {self[name]} and {function}")
            self[name] = function
            return function

        return add

    def include(self, other: Mapping[str, F]) -> None:
        """Take in another module's registry; a name both hold is refused."""
        for name, function in other.items():
            self.named(name)(function)
