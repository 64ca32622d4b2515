"""What every computer-use model's client does before its protocol begins: find its endpoint
(a setting, else the vendor's variables, else its default; only loopback under
RH_LOOPBACK_ONLY), find its key (a setting, else the vendor's variables: never logged), open
one HTTP client with the vendor's headers behind a Poster, and close it with the model.

    class AnthropicModel(Connected):
        def __init__(self, model, settings, ...):
            self.name = f"anthropic:{model}"
            self.base_url = endpoint(settings.base_url, ("ANTHROPIC_BASE_URL",), DEFAULT, env)
            key = api_key(settings.api_key, ("ANTHROPIC_API_KEY",), env, "no API key ...")
            self._poster = connect(self.name, self.base_url, {"x-api-key": key}, ...)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, Self

import httpx

from roundhouse.core.usage import Usage
from roundhouse.endpoints import LOOPBACK_ENV, is_loopback_url
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.computer.observation import ComputerObservation
from roundhouse.models.computer.posting import Poster, Retrying
from roundhouse.models.retrying import Clock, Sleep


class ClientSettings(Protocol):
    """What each vendor's settings section holds for its HTTP client."""

    timeout: float
    max_retries: int
    retry_budget: float


def endpoint(
    setting: str | None, variables: Sequence[str], default: str | None, env: Mapping[str, str]
) -> str:
    """The base URL: the setting, else the first variable set, else `default` (None: there
    is none, and the caller says what to set); refused off loopback under RH_LOOPBACK_ONLY."""
    found = setting or next((env[name] for name in variables if env.get(name)), None) or default
    if not found:
        return ""
    base_url = found.rstrip("/")
    if env.get(LOOPBACK_ENV) == "1" and not is_loopback_url(base_url):
        raise ModelError(
            f"{LOOPBACK_ENV}=1: refusing the non-loopback endpoint {base_url} "
            "(tests must use the fake server on 127.0.0.1)"
        )
    return base_url


def api_key(
    setting: str | None, variables: Sequence[str], env: Mapping[str, str], missing: str
) -> str:
    """The key: the setting, else the first variable set; ModelError(`missing`) otherwise."""
    key = setting or next((env[name] for name in variables if env.get(name)), None)
    if not key:
        raise ModelError(missing)
    return key


def connect(
    name: str,
    base_url: str,
    headers: Mapping[str, str],
    settings: ClientSettings,
    section: str,
    key_hint: str,
    tokens: Callable[[Any], Usage],
    *,
    transport: httpx.AsyncBaseTransport | None,
    sleep: Sleep,
    clock: Clock | None,
    usage_key: str = "usage",
) -> Poster:
    """One HTTP client for the model's requests, behind the retrying Poster."""
    client = httpx.AsyncClient(
        base_url=base_url,
        timeout=settings.timeout,
        transport=transport,
        headers={**headers, "content-type": "application/json"},
    )
    retrying = Retrying(
        settings.timeout, settings.max_retries, settings.retry_budget,
        f"{section}.retry_budget", key_hint,
    )  # fmt: skip
    return Poster(
        name, client, retrying, sleep, clock or (lambda: datetime.now(UTC)), tokens, usage_key
    )


class Connected:
    """A computer-use model's client: its Poster, closed with it, and the one observation
    it serves (the computer agent's)."""

    name: str
    _poster: Poster

    async def aclose(self) -> None:
        await self._poster.client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _computer(self, request: ModelRequest) -> ComputerObservation:
        seen = request.observation
        if not isinstance(seen, ComputerObservation):
            raise ModelError(
                f"{self.name} drives the computer agent, or the host's AppAgent, only: use "
                "--agent computer, or model_app under --agent host"
            )
        return seen
