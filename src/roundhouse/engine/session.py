"""The Session: rounds in sequence, sharing a blackboard, with steps and cost per round
and per session, all kept on the session's one record (core/record.py), and held to its
limits (core/limits.py): max_round here, the others in each round. Every round starts with
fresh agents (UFO's Linux session reuses its agent, so its second round starts FINISHED)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from roundhouse.agents.base import AgentServices
from roundhouse.agents.pool import AgentPool
from roundhouse.config import Settings
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.events import Evaluated, SessionChanged
from roundhouse.core.judge import Evaluator
from roundhouse.core.limits import LimitReached, Limits
from roundhouse.core.record import RoundRecord, SessionRecord
from roundhouse.core.usage import Usage
from roundhouse.engine.round import Round, Snapshotter
from roundhouse.logs.store import LogStore
from roundhouse.models import ModelPool


class Session:
    """Built by compose.py, which wires what it runs with; it only runs rounds."""

    def __init__(
        self,
        settings: Settings,
        *,
        record: SessionRecord,
        agents: Callable[[], AgentPool],  # fresh agents for each round
        services: AgentServices,
        models: ModelPool,
        limits: Limits,
        evaluator: Evaluator,
        snapshots: Snapshotter,
        store: LogStore,  # where the recorder writes; read here, never written
    ) -> None:
        self.settings = settings
        self.record = record  # a resumed session brings its own
        self.new_agents = agents
        self.services = services
        self.events = services.events
        self.models = models
        self.limits = limits
        self.evaluator = evaluator
        self.snapshots = snapshots
        self.store = store
        self.outcomes: list[RoundRecord] = []  # the rounds this process ran
        self.events.emit(SessionChanged(record))

    @property
    def usage(self) -> Usage:
        return self.record.usage

    async def run_round(self, request: str) -> RoundRecord:
        """The request as a round; LimitReached (max_round) when no more may run."""
        self.limits.check_round(len(self.outcomes))
        record = RoundRecord(id=self.record.next_round_id, user_query=request)
        self.record.rounds.append(record)  # one per round, in order, re-runs included
        round_ = Round(
            record=record,
            session=self.record,
            agents=self.new_agents(),
            settings=self.settings,
            limits=self.limits,
            log_folder=self.store.folder,
            events=self.events,
            evaluator=self.evaluator,
            snapshots=self.snapshots,
        )
        outcome = await round_.run()
        self.outcomes.append(outcome)
        return outcome

    async def run(self, requests: Iterable[str]) -> list[RoundRecord]:
        for request in requests:
            try:
                await self.run_round(request)
            except LimitReached:  # max_round: a round ends its own limits inside it
                break
        if self.settings.eva_session:
            await self.evaluate()
        return self.outcomes

    async def evaluate(self) -> Evaluation:
        evaluation = await self.evaluator.evaluate_session(self.outcomes, self.store.folder)
        self.record.evaluations.append(evaluation)
        self.events.emit(Evaluated(evaluation))
        return evaluation


def cost_line(usage: Usage, scope: str = "current round") -> str:
    """UFO's print_cost line; an unknown price is said, never shown as $0.00."""
    if not usage.cost_known:
        return f"Request total cost for {scope} is unknown (no price is known for the model)"
    return f"Request total cost for {scope} is {usage.cost_text}"
