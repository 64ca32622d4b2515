"""The Session: rounds in sequence, sharing a blackboard, with steps and cost per round
and per session. Every round starts with fresh agents (UFO's Linux session reuses its
agent, so its second round starts FINISHED)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from roundhouse.agents.app import AppAgent
from roundhouse.agents.base import AgentServices
from roundhouse.agents.evaluation import EvaluationAgent
from roundhouse.agents.host import HostAgent
from roundhouse.agents.linux import LinuxAgent
from roundhouse.agents.pool import AgentPool, HostAppPool, SingleAgent
from roundhouse.agents.user import UserChannel
from roundhouse.config import ConfigError, Settings
from roundhouse.context import SessionContext
from roundhouse.devices.base import Dispatcher
from roundhouse.devices.linux.types import WindowInfo
from roundhouse.evaluation import Evaluation, Evaluator, NotEvaluated
from roundhouse.events import Event, EventBus, PromptSent
from roundhouse.models import ModelPool
from roundhouse.models.base import Usage
from roundhouse.models.pricing import PriceTable
from roundhouse.round import NoSnapshots, Round, RoundOutcome, Snapshotter
from roundhouse.states import AgentKind
from roundhouse.store import LogStore
from roundhouse.trajectory import RoundTrajectory


class SessionLimit(RuntimeError):
    pass


SESSION_FILE = "session.json"


class SessionInfo(BaseModel):
    """What `roundhouse resume` needs to carry a session on: written when it starts and
    each time a request arrives. Secrets (the API key) are never written."""

    agent: AgentKind
    settings: dict[str, Any]
    requests: list[str] = Field(default_factory=list)

    @classmethod
    def describe(cls, settings: Settings, agent: AgentKind) -> SessionInfo:
        dumped = settings.model_dump(mode="json", exclude={"openai": {"api_key"}})
        return cls(agent=agent, settings=dumped)


class Session:
    def __init__(
        self,
        settings: Settings,
        *,
        store: LogStore,
        dispatcher: Dispatcher,
        user: UserChannel,
        events: EventBus | None = None,
        models: ModelPool | None = None,
        evaluator: Evaluator | None = None,
        snapshots: Snapshotter | None = None,
        agent_kind: AgentKind = AgentKind.LINUX,
        context: SessionContext | None = None,
        next_round_id: int = 0,
    ) -> None:
        self.settings = settings
        self.store = store
        self.events = events or EventBus()
        self.models = models or ModelPool(settings)
        self.snapshots = snapshots or NoSnapshots()
        self.agent_kind = agent_kind
        self.services = AgentServices(
            settings=settings,
            dispatcher=dispatcher,
            user=user,
            prices=PriceTable(settings.prices),  # one table for every agent and the judge
            events=self.events,
            log_folder=store.folder,
        )
        self.evaluator = evaluator or self._evaluator()
        self.context = context or SessionContext()  # a resumed session brings its own
        self.next_round_id = next_round_id
        self.info = SessionInfo.describe(settings, agent_kind)
        if store.folder.joinpath(SESSION_FILE).exists():  # resumed: keep its request list
            known = SessionInfo.model_validate_json(store.folder.joinpath(SESSION_FILE).read_text())
            self.info.requests = known.requests
        store.write_json(SESSION_FILE, self.info)
        self.outcomes: list[RoundOutcome] = []
        self.trajectories: list[RoundTrajectory] = []
        self.events.subscribe(self._log_prompts)

    def _evaluator(self) -> Evaluator:
        """A judge model when one can judge; the offline planner cannot, so it gives none."""
        spec = self.settings.model_for("eval")
        if not (self.settings.eva_round or self.settings.eva_session) or spec == "offline":
            return NotEvaluated()
        return EvaluationAgent(
            self.models.get(spec),
            self.services.prices,
            retries=self.settings.answer_retries,
        )

    @property
    def usage(self) -> Usage:
        return self.context.usage

    def new_agents(self) -> AgentPool:
        if self.agent_kind is AgentKind.LINUX:
            model = self.models.get(self.settings.model_for("linux"))
            return SingleAgent(LinuxAgent(model=model, services=self.services))
        if self.agent_kind is AgentKind.HOST:
            host = HostAgent(
                model=self.models.get(self.settings.model_for("host")), services=self.services
            )
            app_model = self.models.get(self.settings.model_for("app"))

            def make_app(window: WindowInfo) -> AppAgent:
                name = window.application or f"window {window.xid}"
                return AppAgent(model=app_model, services=self.services, window=window, name=name)

            return HostAppPool(host, make_app)
        raise ConfigError(f"a round cannot start with the {self.agent_kind} agent")

    async def run_round(self, request: str) -> RoundOutcome:
        if len(self.outcomes) >= self.settings.max_round:
            raise SessionLimit(f"max_round ({self.settings.max_round}) rounds already ran")
        self.info.requests.append(request)  # one per round, in order, re-runs included
        self.store.write_json(SESSION_FILE, self.info)
        round_id, self.next_round_id = self.next_round_id, self.next_round_id + 1
        round_ = Round(
            round_id=round_id,
            request=request,
            session=self.context,
            agents=self.new_agents(),
            settings=self.settings,
            store=self.store,
            events=self.events,
            evaluator=self.evaluator,
            snapshots=self.snapshots,
        )
        outcome = await round_.run()
        self.outcomes.append(outcome)
        self.trajectories.append(round_.trajectory())
        return outcome

    async def run(self, requests: Iterable[str]) -> list[RoundOutcome]:
        for request in requests:
            if len(self.outcomes) >= self.settings.max_round:
                break
            await self.run_round(request)
        if self.settings.eva_session:
            await self.evaluate()
        return self.outcomes

    async def evaluate(self) -> Evaluation:
        evaluation = await self.evaluator.evaluate_session(self.trajectories)
        self.store.write_evaluation(evaluation)
        self.context.add_usage(evaluation.usage)
        return evaluation

    def _log_prompts(self, event: Event) -> None:
        if isinstance(event, PromptSent):
            self.store.write_prompt(event.round_id, event.agent, event.attempt, event.messages)


def cost_line(usage: Usage, scope: str = "current round") -> str:
    """UFO's print_cost line; an unknown price is said, never shown as $0.00."""
    if not usage.cost_known:
        return f"Request total cost for {scope} is unknown (no price is known for the model)"
    return f"Request total cost for {scope} is {usage.cost_text}"
