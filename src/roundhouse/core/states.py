"""Statuses, round states and the ONE transition table.

Statuses are what an agent answers; round states are what the round is in. Every
transition of every agent kind is a row of TRANSITIONS; `transition` looks one up. A
status an agent kind has no row for is refused (the answer goes back to the model), never
looked up by a raw string and silently dropped.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AgentKind(enum.StrEnum):
    HOST = "host"
    APP = "app"
    LINUX = "linux"
    COMPUTER = "computer"  # a computer-use model drives the whole round by pixels


class Status(enum.StrEnum):
    CONTINUE = "CONTINUE"
    ASSIGN = "ASSIGN"
    PENDING = "PENDING"
    SCREENSHOT = "SCREENSHOT"
    CONFIRM = "CONFIRM"
    FINISH = "FINISH"
    FAIL = "FAIL"


class RoundState(enum.StrEnum):
    START = "START"
    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    ERROR = "ERROR"


ROUND_END_STATES = frozenset({RoundState.FINISH, RoundState.FAIL, RoundState.ERROR})


@dataclass(frozen=True)
class Transition:
    agent: AgentKind
    status: Status
    next_agent: AgentKind | None  # None: no agent acts any more, the round is over
    next_state: RoundState
    subtask_end: bool
    round_end: bool


H, A, L, C = AgentKind.HOST, AgentKind.APP, AgentKind.LINUX, AgentKind.COMPUTER
S, R = Status, RoundState

# fmt: off
TRANSITIONS: tuple[Transition, ...] = (
    #          agent  status answered  next agent  next state   subtask end  round end
    Transition(H, S.CONTINUE,   H,    R.CONTINUE, False, False),
    Transition(H, S.ASSIGN,     A,    R.CONTINUE, True,  False),
    Transition(H, S.PENDING,    H,    R.CONTINUE, False, False),
    Transition(H, S.FINISH,     None, R.FINISH,   False, True),
    Transition(H, S.FAIL,       None, R.FAIL,     False, True),
    Transition(A, S.CONTINUE,   A,    R.CONTINUE, False, False),
    Transition(A, S.SCREENSHOT, A,    R.CONTINUE, False, False),
    Transition(A, S.PENDING,    A,    R.CONTINUE, False, False),
    # CONFIRM is asked BEFORE the action runs; a "no" is answered as FAIL of the subtask.
    Transition(A, S.CONFIRM,    A,    R.CONTINUE, False, False),
    Transition(A, S.FINISH,     H,    R.CONTINUE, True,  False),
    Transition(A, S.FAIL,       H,    R.CONTINUE, True,  False),
    Transition(L, S.CONTINUE,   L,    R.CONTINUE, False, False),
    Transition(L, S.PENDING,    L,    R.CONTINUE, False, False),
    Transition(L, S.CONFIRM,    L,    R.CONTINUE, False, False),
    Transition(L, S.FINISH,     None, R.FINISH,   True,  True),
    Transition(L, S.FAIL,       None, R.FAIL,     True,  True),
    # The computer agent: actions go on (CONFIRM: the vendor's safety check, asked before
    # it runs; a no is answered as FAIL); a final text is FINISH; a refusal, FAIL.
    Transition(C, S.CONTINUE,   C,    R.CONTINUE, False, False),
    Transition(C, S.CONFIRM,    C,    R.CONTINUE, False, False),
    Transition(C, S.FINISH,     None, R.FINISH,   True,  True),
    Transition(C, S.FAIL,       None, R.FAIL,     True,  True),
)
# fmt: on

TABLE: dict[tuple[AgentKind, Status], Transition] = {(t.agent, t.status): t for t in TRANSITIONS}


class InvalidTransition(ValueError):
    pass


def allowed_statuses(agent: AgentKind) -> tuple[Status, ...]:
    return tuple(t.status for t in TRANSITIONS if t.agent is agent)


def transition(agent: AgentKind, status: Status) -> Transition:
    try:
        return TABLE[(agent, status)]
    except KeyError:
        allowed = ", ".join(allowed_statuses(agent))
        raise InvalidTransition(
            f"the {agent} agent cannot answer {status}; it answers one of {allowed}"
        ) from None


def is_round_end(state: RoundState) -> bool:
    return state in ROUND_END_STATES
