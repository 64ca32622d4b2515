"""A computer-use model as the HostAgent's AppAgent (`model_app: anthropic:NAME`, or any
computer-use spec, under `--agent host`): the host, on its own model, picks the
application and writes the subtask; this agent carries the subtask out by pixels and keys
inside that application, as the computer agent does a whole round, then hands the outcome
back to the host (FINISH or FAIL of the subtask), which decides what follows.

What differs from the computer agent (agents/computer.py), and why:
- its kind is APP: the transition table sends its FINISH and FAIL back to the host, and
  its steps are the round's subtask steps, under the application's name;
- the model is asked the subtask, with the host's board (the request and the plan) as
  what the session knows: the subtask is its task, the request the context;
- each assignment is a conversation of its own with the vendor (a new transcript), so a
  subtask given again after the host decided anew starts from the screen as it is;
- its tools act inside the application: the pixel tools, and the chosen window's controls
  (get_controls, click_control, set_text); no launching, no window switching and no shell,
  which are the host's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from roundhouse.agents.action_list import Acted
from roundhouse.agents.base import Conclusion, Seen
from roundhouse.agents.computer import IN_A_WINDOW, ComputerAgent, ComputerAnswer
from roundhouse.core.context import RoundContext
from roundhouse.core.states import AgentKind, Status
from roundhouse.devices.contract import WindowInfo
from roundhouse.models.computer.observation import PIXEL_ACTIONS


@dataclass(kw_only=True)
class ComputerAppAgent(ComputerAgent):
    window: WindowInfo
    subtask: str = ""
    kind: AgentKind = AgentKind.APP
    # The computer agent's, but for what picks or starts an application: the host's part.
    functions: ClassVar[tuple[str, ...]] = (*PIXEL_ACTIONS, *IN_A_WINDOW)

    def assign(self, window: WindowInfo, subtask: str, since: int) -> None:
        """A (new) subtask from the host at round step `since`: its history, and its
        conversation with the vendor, start there."""
        self.window, self.subtask, self.since = window, subtask, since

    def conversation(self, context: RoundContext) -> str:
        return f"round-{context.round.id}-{self.name}-{self.since}"

    def request(self, context: RoundContext) -> str:
        """The subtask in its window, and the host's board (the person's request, the plan)
        beneath it: the context, not the task."""
        title = self.window.title or self.name
        asked = f"In the {self.name} window ({title!r}), which is in front: {self.subtask}"
        board = context.round.read_board("host") or f"Request: {context.round.request}"
        return f"{asked}\n\nThe host agent gave you this subtask of:\n{board}"

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: ComputerAnswer, acted: Acted
    ) -> Conclusion[ComputerAnswer]:
        """The computer agent's status, as the subtask's: its end goes to the host."""
        concluded = super().conclude(context, seen, answer, acted)
        ended = concluded.status in (Status.FINISH, Status.FAIL)
        send_to = "host" if ended else self.name
        return Conclusion(concluded.status, send_to, concluded.answer, self.subtask)
