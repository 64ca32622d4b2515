"""`RecordingModel`: passes requests through and writes every answer to a replay file, so
that a run can be replayed later (`--model replay:FILE`) step for step."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from roundhouse.models.base import Completion, LanguageModel, ModelRequest


class RecordingModel:
    def __init__(self, inner: LanguageModel, path: Path) -> None:
        self.inner = inner
        self.path = path
        self.name = inner.name
        self.recorded: list[dict[str, Any]] = []

    async def complete(self, request: ModelRequest) -> Completion:
        completion = await self.inner.complete(request)
        self.recorded.append(
            {
                "answer": completion.text,
                "usage": {
                    "input_tokens": completion.usage.input_tokens,
                    "output_tokens": completion.usage.output_tokens,
                },
                "model": completion.model,
            }
        )
        # The whole list each time, replaced at once: a killed run leaves a valid file.
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(json.dumps(self.recorded, indent=1, ensure_ascii=False) + "\n")
        os.replace(temporary, self.path)
        return completion

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
