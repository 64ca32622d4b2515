"""The one place a session is wired: around the dispatcher its agents act through, the
recorder (the one writer of the log folder), prices, models, agents, the judge and the
snapshots. run, chat and resume (cli/run.py `open_session`, and so every batch task, which
is a `roundhouse run`) and the tests make their sessions here.
"""

from __future__ import annotations

from collections.abc import Callable

from roundhouse.agents.app import AppAgent
from roundhouse.agents.base import AgentServices
from roundhouse.agents.evaluation import EvaluationAgent
from roundhouse.agents.host import HostAgent
from roundhouse.agents.linux import LinuxAgent
from roundhouse.agents.pool import AgentPool, HostAppPool, SingleAgent
from roundhouse.agents.user import UserChannel
from roundhouse.config import ConfigError, Settings
from roundhouse.core.evaluation import Evaluator, NotEvaluated
from roundhouse.core.events import EventBus
from roundhouse.core.record import SessionInfo
from roundhouse.core.states import AgentKind
from roundhouse.devices.base import Dispatcher
from roundhouse.devices.contract import WindowInfo
from roundhouse.engine.round import NoSnapshots, Snapshotter
from roundhouse.engine.session import Session
from roundhouse.logs.recorder import Recorder
from roundhouse.logs.resume import ResumePlan
from roundhouse.logs.store import LogStore
from roundhouse.models import ModelPool
from roundhouse.models.pricing import PriceTable


def compose_session(
    settings: Settings,
    *,
    kind: AgentKind,
    dispatcher: Dispatcher,
    user: UserChannel,
    store: LogStore,
    events: EventBus | None = None,
    models: ModelPool | None = None,
    snapshots: Snapshotter | None = None,
    resume: ResumePlan | None = None,
) -> Session:
    """A session around a dispatcher. A bad model spec is a ConfigError here, before any
    round runs."""
    events = events or EventBus()
    events.subscribe(Recorder(store), first=True)  # the log is written before it is shown
    models = models or ModelPool(settings)
    services = AgentServices(
        settings=settings,
        dispatcher=dispatcher,
        user=user,
        prices=PriceTable(settings.prices),  # one table for every agent and the judge
        events=events,
        log_folder=store.folder,
    )
    if snapshots is None and kind is AgentKind.HOST:
        from roundhouse.engine.snapshots import DesktopSnapshots

        snapshots = DesktopSnapshots(dispatcher, settings, store.folder)
    info = SessionInfo.describe(settings, kind)
    if resume is not None:
        info.requests = list(resume.info.requests)
    return Session(
        settings,
        agents=agent_factory(kind, models, services),
        services=services,
        models=models,
        evaluator=evaluator(settings, models, services.prices),
        snapshots=snapshots or NoSnapshots(),
        store=store,
        info=info,
        context=resume.context if resume else None,
        next_round_id=resume.next_round_id if resume else 0,
    )


def agent_factory(
    kind: AgentKind, models: ModelPool, services: AgentServices
) -> Callable[[], AgentPool]:
    """What makes each round's fresh agents. The models are made now: a bad spec fails here."""
    settings = services.settings
    if kind is AgentKind.LINUX:
        linux_model = models.get(settings.model_for("linux"))
        return lambda: SingleAgent(LinuxAgent(model=linux_model, services=services))
    if kind is AgentKind.HOST:
        host_model = models.get(settings.model_for("host"))
        app_model = models.get(settings.model_for("app"))

        def make_app(window: WindowInfo) -> AppAgent:
            name = window.application or f"window {window.xid}"
            return AppAgent(model=app_model, services=services, window=window, name=name)

        return lambda: HostAppPool(HostAgent(model=host_model, services=services), make_app)
    raise ConfigError(f"a round cannot start with the {kind} agent")


def evaluator(settings: Settings, models: ModelPool, prices: PriceTable) -> Evaluator:
    """A judge model when one can judge; the offline planner cannot, so it gives none."""
    spec = settings.model_for("eval")
    if not (settings.eva_round or settings.eva_session) or spec == "offline":
        return NotEvaluated()
    return EvaluationAgent(models.get(spec), prices, retries=settings.answer_retries)
