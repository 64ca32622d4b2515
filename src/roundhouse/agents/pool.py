"""Which agent acts next. A round asks its pool for the first agent and, after each step,
for the agent the transition leads to:
- SingleAgent: one agent for the whole round (the Linux agent);
- HostAppPool: the host, and one AppAgent per application it assigns, reused when the host
  comes back to that application.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from roundhouse.agents.app import AppAgent
from roundhouse.agents.base import Concluded
from roundhouse.agents.computer_app import ComputerAppAgent
from roundhouse.agents.host import HostAgent
from roundhouse.core.context import RoundContext
from roundhouse.core.states import AgentKind, Transition
from roundhouse.core.trajectory import StepRecord
from roundhouse.devices.contract import WindowInfo


class Agent(Protocol):
    kind: AgentKind
    name: str

    async def handle(self, context: RoundContext) -> Concluded: ...


class AgentPool(Protocol):
    def first(self) -> Agent: ...

    def switch(self, current: Agent, move: Transition, step: StepRecord) -> Agent: ...


@dataclass
class SingleAgent:
    agent: Agent

    def first(self) -> Agent:
        return self.agent

    def switch(self, current: Agent, move: Transition, step: StepRecord) -> Agent:
        return current


@dataclass
class HostAppPool:
    host: HostAgent
    # An AppAgent of the host's: on roundhouse's JSON, or a computer-use model's by pixels.
    make_app: Callable[[WindowInfo], AppAgent | ComputerAppAgent]
    apps: dict[str, AppAgent | ComputerAppAgent] = field(default_factory=dict)

    def first(self) -> Agent:
        return self.host

    def switch(self, current: Agent, move: Transition, step: StepRecord) -> Agent:
        if move.next_agent is None or move.next_agent is current.kind:
            return current
        if move.next_agent is AgentKind.HOST:
            return self.host
        assignment = self.host.assignment
        if assignment is None:  # the table only leads here after a successful ASSIGN
            raise RuntimeError("the host assigned no application")
        key = assignment.window.application or str(assignment.window.xid)
        app = self.apps.get(key)
        if app is None:
            app = self.apps[key] = self.make_app(assignment.window)
        app.assign(assignment.window, assignment.subtask, since=step.round_step)
        return app
