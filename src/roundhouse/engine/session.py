"""The Session: rounds in sequence, sharing a blackboard, with steps and cost per round
and per session. Every round starts with fresh agents (UFO's Linux session reuses its
agent, so its second round starts FINISHED)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from roundhouse.agents.base import AgentServices
from roundhouse.agents.pool import AgentPool
from roundhouse.config import Settings
from roundhouse.core.context import SessionContext
from roundhouse.core.evaluation import Evaluation, Evaluator
from roundhouse.core.events import Evaluated, SessionDescribed
from roundhouse.core.record import SessionInfo
from roundhouse.core.trajectory import RoundTrajectory
from roundhouse.core.usage import Usage
from roundhouse.engine.round import Round, RoundOutcome, Snapshotter
from roundhouse.logs.store import LogStore
from roundhouse.models import ModelPool


class SessionLimit(RuntimeError):
    pass


class Session:
    """Built by compose.py, which wires what it runs with; it only runs rounds."""

    def __init__(
        self,
        settings: Settings,
        *,
        agents: Callable[[], AgentPool],  # fresh agents for each round
        services: AgentServices,
        models: ModelPool,
        evaluator: Evaluator,
        snapshots: Snapshotter,
        store: LogStore,  # where the recorder writes; read here, never written
        info: SessionInfo,
        context: SessionContext | None = None,
        next_round_id: int = 0,
    ) -> None:
        self.settings = settings
        self.new_agents = agents
        self.services = services
        self.events = services.events
        self.models = models
        self.evaluator = evaluator
        self.snapshots = snapshots
        self.store = store
        self.info = info
        self.context = context or SessionContext()  # a resumed session brings its own
        self.next_round_id = next_round_id
        self.outcomes: list[RoundOutcome] = []
        self.trajectories: list[RoundTrajectory] = []
        self.events.emit(SessionDescribed(self.info))

    @property
    def usage(self) -> Usage:
        return self.context.usage

    async def run_round(self, request: str) -> RoundOutcome:
        if len(self.outcomes) >= self.settings.max_round:
            raise SessionLimit(f"max_round ({self.settings.max_round}) rounds already ran")
        self.info.requests.append(request)  # one per round, in order, re-runs included
        self.events.emit(SessionDescribed(self.info))
        round_id, self.next_round_id = self.next_round_id, self.next_round_id + 1
        round_ = Round(
            round_id=round_id,
            request=request,
            session=self.context,
            agents=self.new_agents(),
            settings=self.settings,
            log_folder=self.store.folder,
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
        self.events.emit(Evaluated(evaluation))
        self.context.add_usage(evaluation.usage)
        return evaluation


def cost_line(usage: Usage, scope: str = "current round") -> str:
    """UFO's print_cost line; an unknown price is said, never shown as $0.00."""
    if not usage.cost_known:
        return f"Request total cost for {scope} is unknown (no price is known for the model)"
    return f"Request total cost for {scope} is {usage.cost_text}"
