"""The backend interface: one streaming chat method plus ``aclose()``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from sot.result import Usage
from sot.templates import Message


@dataclass(frozen=True)
class Constraint:
    """A shape the output must take; each backend sends the form its server understands."""

    gbnf: str | None = None
    regex: str | None = None


Reasoning = Literal["off", "low", "default"]


@dataclass(frozen=True)
class ChatRequest:
    messages: Sequence[Message]
    max_tokens: int
    temperature: float | None = None
    constraint: Constraint | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    frequency_penalty: float | None = None
    reasoning: Reasoning = "default"  # how much a reasoning model may think, where the server has a knob
    # Seconds without a data event after which a backend calls the stream stalled (set by sot.calls).
    stall_timeout: float | None = None
    # Ask the server's own guard against repeating itself, where it has one (llama.cpp's DRY sampler,
    # vLLM's repetition penalty); an OpenAI API has none that leaves the text as the model means it.
    guard_repetition: bool = False


@dataclass(frozen=True)
class ChatChunk:
    text: str = ""  # answer text only: a reasoning model's thinking never comes here
    finish_reason: str | None = None
    usage: Usage | None = None
    reasoning: str = ""  # thinking text (reasoning_content / reasoning deltas, <think> blocks)
    adaptations: tuple[str, ...] = ()  # how the request was adapted to what the server accepts


class Backend(Protocol):
    name: str
    model: str

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """Stream one completion; raise only ``sot.errors.BackendError`` subclasses."""
        ...

    async def aclose(self) -> None: ...
