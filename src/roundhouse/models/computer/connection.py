"""What every computer-use model's client does before its protocol begins: find its endpoint
(a setting, else the vendor's variables, else its default; only loopback under
RH_LOOPBACK_ONLY), find its key (a setting, else the vendor's variables: never logged), open
one HTTP client with the vendor's headers behind a Poster, and close it with the model; and
keep one transcript per conversation (the round), started afresh when it changes.

    ANTHROPIC = Vendor("anthropic", ("ANTHROPIC_BASE_URL",), DEFAULT, ("ANTHROPIC_API_KEY",),
                       lambda key: {"x-api-key": key}, missing_key="no API key ...", ...)

    class AnthropicModel(Connected[_Conversation]):
        def __init__(self, model, settings, ...):
            self._connect(f"anthropic:{model}", ANTHROPIC, settings, tokens_of, ...)

        async def complete(self, request):
            chat = self._chat_for(self._computer(request), _Conversation)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypedDict, TypeVar

import httpx

from roundhouse.core.usage import Usage
from roundhouse.endpoints import LOOPBACK_ENV, is_loopback_url
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.computer.observation import ComputerObservation
from roundhouse.models.computer.posting import Poster, Retrying
from roundhouse.models.retrying import Clock, Sleep

if TYPE_CHECKING:  # the annotations only: no import when running
    from typing_extensions import Unpack


class ClientSettings(Protocol):
    """What each vendor's settings section holds for its HTTP client."""

    timeout: float
    max_retries: int
    retry_budget: float


class VendorSettings(ClientSettings, Protocol):
    """A vendor's settings section: its client's, and where and with what key to connect."""

    base_url: str | None
    api_key: str | None


@dataclass(frozen=True)
class Vendor:
    """How one vendor's API is reached: its settings section (named in what is said), the
    variables that may name its endpoint and key, in the order its own client reads them,
    and the headers that carry the key.

    default_url None: there is none, and `missing_url` says what to set. placeholder_key: a
    server that takes any key (vLLM) is sent this one when none is set; without one, a key
    is needed and `missing_key` says so."""

    section: str
    url_variables: tuple[str, ...]
    default_url: str | None
    key_variables: tuple[str, ...]
    headers: Callable[[str], dict[str, str]]
    key_hint: str  # said when the key is refused (401, 403)
    missing_key: str = ""
    missing_url: str = ""  # "{name}" is the model's spec
    placeholder_key: str | None = None
    usage_key: str = "usage"  # where the answer's usage is


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


class Wiring(TypedDict, total=False):
    """What a test (or a caller) may put in place of the defaults: the HTTP transport, the
    environment read for the endpoint and key, the retries' sleep and clock."""

    transport: httpx.AsyncBaseTransport | None
    env: Mapping[str, str] | None
    sleep: Sleep
    clock: Clock | None


class Keyed(Protocol):
    key: str  # the conversation a transcript belongs to


ChatT = TypeVar("ChatT", bound=Keyed)


class Connected(Generic[ChatT]):
    """A computer-use model's client: its Poster, closed with it, the one observation it
    serves (the computer agent's), and the transcript of the conversation under way."""

    name: str
    base_url: str
    _poster: Poster
    _chat: ChatT | None = None

    def _connect(
        self,
        name: str,
        vendor: Vendor,
        settings: VendorSettings,
        tokens: Callable[[Any], Usage],
        **wiring: Unpack[Wiring],
    ) -> None:
        """Find the endpoint and the key as `vendor` says, and open the Poster."""
        given = wiring.get("env")
        env = os.environ if given is None else given  # {}: no variable is set
        self.name = name
        self.base_url = endpoint(settings.base_url, vendor.url_variables, vendor.default_url, env)
        if not self.base_url:
            raise ModelError(vendor.missing_url.format(name=name))
        if vendor.placeholder_key is not None:
            found = next((env[n] for n in vendor.key_variables if env.get(n)), None)
            key = settings.api_key or found or vendor.placeholder_key
        else:
            key = api_key(settings.api_key, vendor.key_variables, env, vendor.missing_key)
        self._poster = connect(
            name,
            self.base_url,
            vendor.headers(key),
            settings,
            vendor.section,
            vendor.key_hint,
            tokens,
            transport=wiring.get("transport"),
            sleep=wiring.get("sleep", asyncio.sleep),
            clock=wiring.get("clock"),
            usage_key=vendor.usage_key,
        )

    def _chat_for(self, seen: ComputerObservation, new: Callable[[str], ChatT]) -> ChatT:
        """The transcript of the observation's conversation: a new one (`new(key)`) when
        the conversation changed (a new round, or one resumed)."""
        if self._chat is None or self._chat.key != seen.conversation:
            self._chat = new(seen.conversation)
        return self._chat

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
