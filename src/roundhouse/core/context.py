"""What an agent's step is given: its round's record, within its session's. Both are the
records themselves (core/record.py), so nothing here can drift from them."""

from __future__ import annotations

from dataclasses import dataclass

from roundhouse.core.record import RoundRecord, SessionRecord


@dataclass(frozen=True)
class RoundContext:
    round: RoundRecord
    session: SessionRecord
