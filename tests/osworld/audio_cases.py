"""Sounds of our own making (WAV, written with the standard library) for compare_audios
(test_metrics_agree_apps.py holds it to OSWorld's)."""

from __future__ import annotations

import math
import struct
import wave
from pathlib import Path
from typing import Any

Case = tuple[str, list[Any], dict[str, Any]]
RATE = 8000


def tone(folder: Path, name: str, notes: list[tuple[float, float]], noise: int = 0) -> str:
    """Each (frequency, seconds) in turn; `noise` adds a deterministic hiss."""
    samples = []
    for frequency, seconds in notes:
        for i in range(int(RATE * seconds)):
            value = 0.5 * math.sin(2 * math.pi * frequency * i / RATE)
            value += noise * 0.05 * math.sin(i * 12.9898) * math.sin(i * 78.233)
            samples.append(int(max(-1.0, min(1.0, value)) * 32767))
    path = folder / name
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return str(path)


def audio_cases(tmp: Path) -> list[Case]:
    melody = [(440.0, 0.3), (660.0, 0.3), (550.0, 0.3)]
    base = tone(tmp, "a.wav", melody)
    empty = tone(tmp, "empty.wav", [])
    broken = tmp / "broken.wav"
    broken.write_text("not a sound")
    cases: list[Case] = []
    for other in [tone(tmp, "same.wav", melody), tone(tmp, "noisy.wav", melody, noise=2),
                  tone(tmp, "slow.wav", [(f, s * 1.5) for f, s in melody]),
                  tone(tmp, "other.wav", [(200.0, 0.9)]),
                  tone(tmp, "reversed.wav", melody[::-1]), empty, str(broken), None]:  # fmt: skip
        cases.append(("compare_audios", [base, other], {}))
    cases.append(("compare_audios", [empty, str(broken)], {}))
    cases.append(("compare_audios", [empty, base], {}))
    cases.append(("compare_audios", [None, None], {}))
    return cases
