from __future__ import annotations

import pytest

from roundhouse.core.states import (
    TRANSITIONS,
    AgentKind,
    InvalidTransition,
    RoundState,
    Status,
    allowed_statuses,
    is_round_end,
    transition,
)

H, A, L, C = AgentKind.HOST, AgentKind.APP, AgentKind.LINUX, AgentKind.COMPUTER
S, R = Status, RoundState

# The table of docs/design.md, written out again by hand: (agent, status) →
# (next agent, next state, subtask end, round end).
EXPECTED = {
    (H, S.CONTINUE): (H, R.CONTINUE, False, False),
    (H, S.ASSIGN): (A, R.CONTINUE, True, False),
    (H, S.PENDING): (H, R.CONTINUE, False, False),
    (H, S.FINISH): (None, R.FINISH, False, True),
    (H, S.FAIL): (None, R.FAIL, False, True),
    (A, S.CONTINUE): (A, R.CONTINUE, False, False),
    (A, S.SCREENSHOT): (A, R.CONTINUE, False, False),
    (A, S.PENDING): (A, R.CONTINUE, False, False),
    (A, S.CONFIRM): (A, R.CONTINUE, False, False),
    (A, S.FINISH): (H, R.CONTINUE, True, False),
    (A, S.FAIL): (H, R.CONTINUE, True, False),
    (L, S.CONTINUE): (L, R.CONTINUE, False, False),
    (L, S.PENDING): (L, R.CONTINUE, False, False),
    (L, S.CONFIRM): (L, R.CONTINUE, False, False),
    (L, S.FINISH): (None, R.FINISH, True, True),
    (L, S.FAIL): (None, R.FAIL, True, True),
    (C, S.CONTINUE): (C, R.CONTINUE, False, False),
    (C, S.CONFIRM): (C, R.CONTINUE, False, False),
    (C, S.FINISH): (None, R.FINISH, True, True),
    (C, S.FAIL): (None, R.FAIL, True, True),
}


@pytest.mark.parametrize(("agent", "status"), list(EXPECTED))
def test_every_row_of_the_table(agent: AgentKind, status: Status) -> None:
    agent_after, state, subtask_end, round_end = EXPECTED[(agent, status)]
    move = transition(agent, status)
    assert move.next_agent == agent_after
    assert move.next_state is state
    assert move.subtask_end is subtask_end
    assert move.round_end is round_end
    assert is_round_end(state) is round_end


def test_the_table_has_no_row_the_design_does_not_have() -> None:
    assert {(t.agent, t.status) for t in TRANSITIONS} == set(EXPECTED)


@pytest.mark.parametrize(
    ("agent", "status"),
    [
        (L, S.ASSIGN),
        (L, S.SCREENSHOT),
        (H, S.SCREENSHOT),
        (H, S.CONFIRM),
        (A, S.ASSIGN),
        (C, S.PENDING),
        (C, S.ASSIGN),
    ],
)
def test_a_status_an_agent_cannot_answer_is_refused_with_the_allowed_ones(
    agent: AgentKind, status: Status
) -> None:
    with pytest.raises(InvalidTransition) as caught:
        transition(agent, status)
    for allowed in allowed_statuses(agent):
        assert allowed.value in str(caught.value)


def test_round_end_states() -> None:
    assert {s for s in RoundState if is_round_end(s)} == {R.FINISH, R.FAIL, R.ERROR}
