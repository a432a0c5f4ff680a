"""Keeps a reasoning model's thinking apart from its answer, as the stream arrives.

Thinking comes two ways: a ``<think> ... </think>`` block at the start of ``content`` (Qwen3,
DeepSeek-R1 and others served without a reasoning parser), or separate ``reasoning_content`` /
``reasoning`` delta fields (vLLM, SGLang, llama.cpp, DeepSeek, OpenRouter, Ollama). The splitter
sees every delta once and returns the answer text and the reasoning text apart: tags split across
chunks and whitespace before the block are handled, and a block never closed stays reasoning. It
counts reasoning characters and the seconds from the first reasoning text to the last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

from ._negotiate import ClientStop
from .base import ChatChunk

OPEN = "<think>"
CLOSE = "</think>"
_State = Literal["start", "inside", "after", "answer"]


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that is a proper start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class ReasoningSplitter:
    """Feed each delta's ``content`` and reasoning field; get ``(answer, reasoning)`` text back."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._state: _State = "start"
        self._held = ""
        self.reasoning_chars = 0
        self._first: float | None = None
        self._last: float | None = None

    @property
    def seconds(self) -> float:
        """Seconds from the first reasoning text to the last (0 with none)."""
        return (self._last - self._first) if self._first is not None and self._last is not None else 0.0

    def _thought(self, text: str) -> str:
        if text:
            now = self._clock()
            self._first = now if self._first is None else self._first
            self._last = now
            self.reasoning_chars += len(text)
        return text

    def feed(self, content: str = "", reasoning: str = "") -> tuple[str, str]:
        """The answer text and reasoning text in this delta (either may be empty)."""
        thought = self._thought(reasoning)
        if not content:
            return "", thought
        answer, more = self._content(content)
        return answer, thought + self._thought(more)

    def _content(self, content: str) -> tuple[str, str]:
        text = self._held + content
        self._held = ""
        if self._state == "start":
            stripped = text.lstrip()
            if not stripped or OPEN.startswith(stripped):
                self._held = text  # whitespace, or maybe the start of a split <think>
                return "", ""
            if not stripped.startswith(OPEN):
                self._state = "answer"
                return text, ""
            self._state = "inside"
            text = stripped[len(OPEN) :]
        if self._state == "inside":
            end = text.find(CLOSE)
            if end < 0:
                keep = _partial_suffix(text, CLOSE)
                self._held = text[len(text) - keep :] if keep else ""
                return "", text[: len(text) - keep]
            self._state = "after"
            thought, text = text[:end], text[end + len(CLOSE) :]
            answer, _ = self._content(text) if text else ("", "")
            return answer, thought
        if self._state == "after":  # the blank lines between the block and the answer
            stripped = text.lstrip()
            if not stripped:
                return "", ""
            self._state = "answer"
            return stripped, ""
        return text, ""

    def finish(self) -> tuple[str, str]:
        """What was held back at the end of the stream: a partial tag is answer, an open block thought."""
        held, self._held = self._held, ""
        if self._state == "inside":
            return "", self._thought(held)
        return (held if held.strip() else ""), ""


class ChunkFilter:
    """One stream's chunks as the caller sees them: thinking apart from answer text, a refused stop applied.

    ``client_stop`` holds the stop strings the server refused (backends/_negotiate.py): the answer is
    cut at the first one and ``stopped`` turns true, so the reader closes the stream there.
    """

    def __init__(self, client_stop: Sequence[str] = ()) -> None:
        self.splitter = ReasoningSplitter()
        self._stop = ClientStop(client_stop)

    @property
    def stopped(self) -> bool:
        return self._stop.stopped

    def __call__(self, chunk: ChatChunk) -> ChatChunk | None:
        """`chunk` with raw content and reasoning, filtered; None when nothing is left to pass on."""
        answer, thought = self.splitter.feed(chunk.text, chunk.reasoning)
        finish = chunk.finish_reason
        if finish is not None:
            rest, more = self.splitter.finish()
            answer, thought = answer + rest, thought + more
        text = self._stop.feed(answer)
        if self._stop.stopped:
            finish = "stop"
        elif finish is not None:
            text += self._stop.flush()
        if not (text or thought or finish is not None or chunk.usage is not None):
            return None
        return ChatChunk(text, finish, chunk.usage, thought)

    def end(self) -> ChatChunk | None:
        """What was held back when a stream ends without a finish_reason ([DONE] alone)."""
        chunk = None if self.stopped else self(ChatChunk(finish_reason="stop"))
        return chunk if chunk is not None and (chunk.text or chunk.reasoning) else None
