"""The backend interface: one streaming chat method plus ``aclose()``, and the records on the wire.

It needs nothing of sot's core: ``sot.result`` and ``sot.templates`` re-export ``Usage`` and ``Message``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._load import LoadReading


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass
class Usage:
    """Tokens, as the server reported them (summed over calls in ``Answer.usage``; a call left early,
    ``CallRecord.left_early``, reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0  # of completion_tokens: thinking (usage.completion_tokens_details)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


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


@runtime_checkable
class LoadAware(Protocol):
    """A backend that can tell how busy its server is, for a load-aware fan-out (sot/router/load.py)."""

    @property
    def in_flight(self) -> int:
        """sot's own calls open to this backend now (every answer's)."""
        ...

    async def load(self) -> LoadReading | None:
        """The server's load where it publishes it (backends/_load.py); cheap while a reading is fresh."""
        ...
