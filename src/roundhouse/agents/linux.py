"""The single-tier Linux agent: it acts through the shell tools.

Its step is the common one (agents/base.py) with nothing added: it observes its request and
its steps so far, and acts as the model answered. Destructive commands go through the shell
policy and, when it says so, need a yes from the user BEFORE they run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from roundhouse.agents.base import AgentCore, Seen
from roundhouse.agents.prompting import blackboard_text, linux_messages
from roundhouse.agents.responses import LinuxAnswer
from roundhouse.core.context import RoundContext
from roundhouse.core.messages import Message
from roundhouse.core.states import AgentKind
from roundhouse.devices.contract import ToolName
from roundhouse.devices.describing import ToolSpec
from roundhouse.models.observation import ShellObservation


@dataclass(kw_only=True)
class LinuxAgent(AgentCore[ShellObservation, LinuxAnswer]):
    kind: AgentKind = AgentKind.LINUX
    name: str = "linux"
    answer_type: ClassVar = LinuxAnswer
    functions: ClassVar = (ToolName.RUN_SHELL, ToolName.GET_SYSTEM_INFO)

    async def observe(self, context: RoundContext, specs: list[ToolSpec]) -> Seen[ShellObservation]:
        return Seen(
            ShellObservation(
                request=context.round.request,
                history=self.history(context),
                blackboard=blackboard_text(context),
                tools=tuple(spec.name for spec in specs if spec.name in self.functions),
                workdir=str(self.services.settings.workdir or "."),
                max_actions=self.services.settings.max_actions,
            )
        )

    def render(self, seen: Seen[ShellObservation], offered: list[ToolSpec]) -> tuple[Message, ...]:
        return linux_messages(seen.observation, offered)
