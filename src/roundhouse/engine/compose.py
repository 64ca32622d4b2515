"""The one place a session is wired, from settings alone, as httpx's client builds its own
transport:

    async with compose_session(settings) as session:
        outcome = await session.run_round("how much disk is free?")

It opens what the agents act through (the dispatcher: the shell here, a desktop here, or a
desktop served over MCP, by HTTP or stdio), the log folder (a new one, or the resumed
one), the event bus with the recorder subscribed first (the one writer of the folder),
the models (priced, held to the limits), the agents, the judge and the snapshots; and closes
them on the way out. run, chat, resume (and so every batch task, which is a `roundhouse
run`) and the tests make their sessions here. A test swaps the device with `dispatcher=`
(devices/base.py FunctionDispatcher is the fake that ships), and the models with `models=`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from roundhouse.agents.app import AppAgent
from roundhouse.agents.base import AgentServices
from roundhouse.agents.computer import ComputerAgent
from roundhouse.agents.computer_app import ComputerAppAgent
from roundhouse.agents.evaluation import EvaluationAgent
from roundhouse.agents.host import HostAgent
from roundhouse.agents.linux import LinuxAgent
from roundhouse.agents.pool import AgentPool, HostAppPool, SingleAgent
from roundhouse.config import ConfigError, Settings
from roundhouse.core.events import EventBus, Observer
from roundhouse.core.judge import Evaluator, NotEvaluated
from roundhouse.core.limits import Limits
from roundhouse.core.person import HandBack
from roundhouse.core.record import SessionRecord
from roundhouse.core.states import AgentKind
from roundhouse.core.user import NonInteractiveUser, UserChannel
from roundhouse.devices.base import Dispatcher, LocalDispatcher, ToolRegistry
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.system.presence import has_display
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.person import AtTheDesk, PersonHandBack
from roundhouse.engine.round import NoSnapshots, Snapshotter
from roundhouse.engine.session import Session
from roundhouse.logs.recorder import Recorder
from roundhouse.logs.resume import ResumePlan
from roundhouse.logs.store import LogStore
from roundhouse.models import ModelPool, acts_by_pixels
from roundhouse.models.base import LanguageModel

if TYPE_CHECKING:
    from roundhouse.devices.linux.desktops.desktop import Desktop


@asynccontextmanager
async def compose_session(
    settings: Settings,
    *,
    resume: ResumePlan | None = None,
    user: UserChannel | None = None,
    observers: Sequence[Observer] = (),
    dispatcher: Dispatcher | None = None,
    models: Mapping[str, LanguageModel] | None = None,
    snapshots: Snapshotter | None = None,
    hand_back: HandBack | None = None,
    desktop: Desktop | None = None,
) -> AsyncIterator[Session]:
    """A session from `settings`, or carrying on `resume`'s. `user` answers questions and
    confirmations (default: nobody, so --yes decides); `observers` see every event after
    the recorder has written it. A bad model spec is a ConfigError here, before any round
    runs."""
    kind = resume.record.agent if resume else agent_kind(settings)
    store = LogStore(resume.folder) if resume else LogStore.create(settings.logs, settings.task)
    record = resume.record if resume else SessionRecord.describe(settings, kind)
    events = EventBus()
    events.subscribe(Recorder(store, record))  # the log is written before it is shown
    for observer in observers:
        events.subscribe(observer)
    user = user or NonInteractiveUser(settings.assume_yes)
    async with AsyncExitStack() as opened:
        if dispatcher is None:
            device = open_dispatcher(settings, kind, user, desktop)
            dispatcher = await opened.enter_async_context(device)
        if kind in DESKTOP_AGENTS:  # a desktop: a person may take it over (engine/person.py)
            idle = settings.desktop.hand_back_after is not None
            dispatcher = AtTheDesk(
                dispatcher, events, record, hand_back or PersonHandBack(), idle=idle
            )
        limits = Limits.of(settings)  # the one value: the pool's requests, the rounds' steps
        pool = ModelPool(settings, models, limits=limits, spent=lambda: record.usage)
        opened.push_async_callback(pool.close)
        services = AgentServices(
            settings=settings,
            dispatcher=dispatcher,
            user=user,
            events=events,
            log_folder=store.folder,
        )
        if snapshots is None and kind in DESKTOP_AGENTS:
            from roundhouse.engine.snapshots import DesktopSnapshots

            snapshots = DesktopSnapshots(dispatcher, settings, store.folder)
        yield Session(
            settings,
            record=record,
            agents=agent_factory(kind, pool, services),
            services=services,
            models=pool,
            limits=limits,
            evaluator=evaluator(settings, pool, events),
            snapshots=snapshots or NoSnapshots(),
            store=store,
        )


# The agents that act on a desktop: its takeover and its snapshots are theirs.
DESKTOP_AGENTS = frozenset({AgentKind.HOST, AgentKind.COMPUTER})


def agent_kind(settings: Settings) -> AgentKind:
    """linux or host as asked; "auto" means the GUI agents when there is a desktop to use:
    one asked for (a virtual one, a started one, or over MCP) or a display here."""
    if settings.agent == "linux":
        return AgentKind.LINUX
    if settings.agent == "computer":
        return AgentKind.COMPUTER
    if settings.agent == "host" or settings.mcp is not None or settings.desktop.mode != "auto":
        return AgentKind.HOST
    return AgentKind.HOST if has_display(os.environ) else AgentKind.LINUX


@asynccontextmanager
async def open_dispatcher(
    settings: Settings, kind: AgentKind, user: UserChannel, desktop: Desktop | None = None
) -> AsyncIterator[Dispatcher]:
    """What the agents act through, as the settings say: the shell alone (the Linux agent),
    a desktop served over MCP (settings.mcp: a URL, or a command serving MCP on stdio), or
    a desktop here (settings.desktop.mode, or `desktop`, opened already: `run --watch`
    watches it), with the shell tools beside its own. `user` is asked before a destructive
    command runs here; a server asks its own."""
    shell = ShellTools(settings, user).tools()
    if kind is AgentKind.LINUX:
        yield LocalDispatcher(ToolRegistry(shell))
        return
    if settings.mcp is not None:
        from roundhouse.devices.mcp.client import MCPDispatcher  # the MCP SDK is slow to import

        async with MCPDispatcher.connect_to(settings.mcp) as remote:
            yield remote
        return
    from roundhouse.devices.linux.desktops.opening import open_desktop
    from roundhouse.devices.linux.tools import DesktopTools, desktop_registry, person_tools

    with contextlib.ExitStack() as opened:
        if desktop is None:
            desktop = opened.enter_context(open_desktop(settings.desktop))
        async with await DesktopTools.open(desktop, settings) as tools:
            yield LocalDispatcher(desktop_registry(tools, extra=[*person_tools(tools), *shell]))


def agent_factory(
    kind: AgentKind, models: ModelPool, services: AgentServices
) -> Callable[[], AgentPool]:
    """What makes each round's fresh agents. The models are made now: a bad spec fails here."""
    settings = services.settings
    if kind is AgentKind.LINUX:
        linux_model = models.get(settings.model_for("linux"))
        return lambda: SingleAgent(LinuxAgent(model=linux_model, services=services))
    if kind is AgentKind.COMPUTER:
        spec = settings.model_for("computer")
        if spec == "offline":
            raise ConfigError(
                "--agent computer needs a computer-use model: --model anthropic:NAME, "
                "openai-computer:NAME, gemini:NAME, uitars:NAME, qwen-vl:NAME or opencua:NAME "
                "(or replay:FILE of their answers)"
            )
        computer_model = models.get(spec)
        return lambda: SingleAgent(ComputerAgent(model=computer_model, services=services))
    if kind is AgentKind.HOST:
        host_spec = settings.model_for("host")
        if acts_by_pixels(host_spec):
            # The host answers roundhouse's JSON (which window, which subtask): a
            # computer-use model cannot, and would fail at its first request.
            raise ConfigError(
                f"{host_spec} is a computer-use model: it drives --agent computer, or is the "
                "host's AppAgent (model_app); the HostAgent needs offline, replay:FILE or "
                "openai:NAME (--model, or model_host)"
            )
        host_model = models.get(host_spec)
        app_spec = settings.model_for("app")
        app_model = models.get(app_spec)
        by_pixels = acts_by_pixels(app_spec)  # a computer-use model: the AppAgent by pixels

        def make_app(window: WindowInfo) -> AppAgent | ComputerAppAgent:
            name = window.application or f"window {window.xid}"
            if by_pixels:
                return ComputerAppAgent(
                    model=app_model, services=services, window=window, name=name
                )
            return AppAgent(model=app_model, services=services, window=window, name=name)

        return lambda: HostAppPool(HostAgent(model=host_model, services=services), make_app)
    raise ConfigError(f"a round cannot start with the {kind} agent")


def evaluator(settings: Settings, models: ModelPool, events: EventBus) -> Evaluator:
    """A judge model when one can judge; the offline planner cannot, so it gives none."""
    spec = settings.model_for("eval")
    if not (settings.eva_round or settings.eva_session) or spec == "offline":
        return NotEvaluated()
    return EvaluationAgent(models.get(spec), events, retries=settings.answer_retries)
