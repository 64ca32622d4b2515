"""A transcript sent with only its newest screenshots: each older one becomes a line that
says it was left out, so that a long round's requests stay small (a model's context, its
price) while the model still reads what it did. Pure: new lists, the transcript unchanged.

The messages are JSON as the vendor takes them (Anthropic's blocks, chat completions'
parts); which block is an image is the caller's to say. A block's own `content` list (an
Anthropic tool_result holding the screen) is looked into too, newest last as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LEFT_OUT = "(an earlier screenshot, left out)"

Block = dict[str, Any]


def newest_images(
    messages: list[Block], keep: int, is_image: Callable[[Block], bool]
) -> list[Block]:
    """The messages with only their newest `keep` images (`is_image`) left in."""
    seen = 0

    def kept(blocks: list[Block]) -> list[Block]:
        nonlocal seen
        out: list[Block] = []
        for block in reversed(blocks):
            inner = block.get("content")
            if is_image(block):
                seen += 1
                block = block if seen <= keep else {"type": "text", "text": LEFT_OUT}
            elif isinstance(inner, list):
                block = {**block, "content": kept(inner)}
            out.append(block)
        return list(reversed(out))

    sent = []
    for message in reversed(messages):
        content = message["content"]
        sent.append({**message, "content": kept(content) if isinstance(content, list) else content})
    sent.reverse()
    return sent
