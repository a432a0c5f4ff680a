"""What an answer carries: text, points, timings and token usage."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .backends.base import Usage as Usage  # defined with the backends, which report it

Mode = Literal["sot", "sequential"]


@dataclass
class CallRecord:
    """One logical call (its retries included)."""

    purpose: str  # "skeleton", "expand", "sequential", "route"
    index: int | None
    attempts: int
    start_s: float
    end_s: float
    first_token_s: float | None
    usage: Usage | None
    error: str | None = None
    adaptations: list[str] = field(default_factory=list)  # request fields adapted to the server
    reasoning_chars: int = 0
    reasoning_s: float = 0.0  # first to last thinking text
    reasoning: str | None = None  # the thinking text, kept only with keep_reasoning
    # Closed once it had what was wanted (an outline with every point it may keep): the server stops
    # writing, and reports no usage (servers report it at a stream's end).
    left_early: bool = False
    # Why the server ended the last attempt's stream ("stop", "length": its token limit, ...), as it said.
    finish_reason: str | None = None
    # It wrote one piece of text again and again (sot/_loops.py): ended there, its text cut before the loop.
    looped: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["usage"] = self.usage.to_dict() if self.usage else None
        return data


@dataclass
class Timings:
    """Seconds, measured from the start of the answer."""

    total_s: float = 0.0
    skeleton_s: float | None = None
    expand_s: float | None = None
    first_token_s: float | None = None
    first_content_s: float | None = None
    first_expansion_token_s: float | None = None
    route_s: float | None = None


@dataclass(frozen=True)
class ExtraTokens:
    """What an answer cost beyond a sequential answer to the same question.

    A SoT answer's are estimated (no sequential answer was written): its prompts beyond the smallest
    one (the question sent again with the outline to every point) and its completions beyond the
    points' text (the outline, outlines asked for again, retries). A sequential answer's are exact:
    the calls it made besides the answer (an LLM router, an outline that gave too few points).
    """

    prompt_tokens: int
    completion_tokens: int
    estimated: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Answer:
    """One answer: its text (what every view prints), how it was made, and what it cost.

    ``text`` is the stitched SoT answer (``N. Title: expansion`` per point, in skeleton order; a
    point of several lines, and every section of a full answer, as ``**N. Title**`` with its text
    below, as ``sot._draft.point_line`` writes it) or the sequential answer; ``points`` and
    ``expansions`` are its parts, ``calls`` every model call made.
    A point with no text of its own (its call failed, listed in ``failed_points``, or it said nothing
    once cleaned) has an empty expansion, and its line in ``text`` is its title alone (its heading alone
    in a full answer).
    """

    text: str
    mode: Mode
    reason: str
    question: str
    points: list[str] = field(default_factory=list)
    expansions: list[str] = field(default_factory=list)
    failed_points: list[int] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    usage: Usage = field(default_factory=Usage)
    calls: list[CallRecord] = field(default_factory=list)
    model: str = ""
    backend: str = ""
    requested_mode: str = "auto"
    route: dict[str, Any] | None = None
    shared_prefix_fraction: float | None = None
    pipelined: bool = False
    # How requests were adapted to what the server accepts ("max_tokens->max_completion_tokens" ...).
    adaptations: list[str] = field(default_factory=list)
    reasoning_s: float = 0.0  # seconds of thinking text over every call (tokens: usage.reasoning_tokens)
    profile: str = ""  # the model profile that read the outline and settled the expansions (sot/profiles.py)
    # Text of the answer stopped at a token limit, or cut before a loop (a point's or the sequential answer's).
    truncated: bool = False
    # SoT was asked for but the outline had too few points: answered sequentially instead (``reason`` says why).
    fell_back: bool = False
    # The load-aware fan-out decision (sot/router/load.py: mode, width, reason, the server's load), or None
    # where none was made (load_aware off, a sequential answer by choice, a backend that cannot tell).
    fan_out: dict[str, Any] | None = None
    # Tokens beyond what a sequential answer would have cost (``ExtraTokens``), None where usage was not reported.
    extra_tokens: ExtraTokens | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "mode": self.mode,
            "requested_mode": self.requested_mode,
            "reason": self.reason,
            "question": self.question,
            "points": self.points,
            "expansions": self.expansions,
            "failed_points": self.failed_points,
            "timings": asdict(self.timings),
            "usage": self.usage.to_dict(),
            "calls": [call.to_dict() for call in self.calls],
            "model": self.model,
            "backend": self.backend,
            "route": self.route,
            "shared_prefix_fraction": self.shared_prefix_fraction,
            "pipelined": self.pipelined,
            "adaptations": self.adaptations,
            "reasoning_s": self.reasoning_s,
            "profile": self.profile,
            "truncated": self.truncated,
            "fell_back": self.fell_back,
            "fan_out": self.fan_out,
            "extra_tokens": None if self.extra_tokens is None else self.extra_tokens.to_dict(),
        }
