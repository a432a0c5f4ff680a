"""What one answer is made with: the orchestrator's fixed setup, and one turn's inputs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from . import events
from ._draft import Draft
from ._loops import LoopWatch
from ._shape import SkeletonShape
from .backends.base import Backend, Constraint
from .calls import Caller, CallOutcome
from .errors import SotError
from .options import Options
from .profiles import OutlineReader, Profile, Style
from .result import Answer, CallRecord
from .templates import Message, Prompts

Emit = Callable[[events.Event], None]
log = logging.getLogger("sot.orchestrator")


@dataclass(frozen=True)
class Setup:
    """What every answer of one orchestrator shares (its options never change once made)."""

    backend: Backend
    options: Options
    prompts: Prompts
    profile: Profile
    shape: SkeletonShape  # the one source of the outline's grammar, regex, prompt and limits
    style: Style  # prompts and budgets, the user's token caps first
    constraint: Constraint | None

    def answer(self, question: str, mode: str, reason: str, calls: list[CallRecord]) -> Answer:
        return Answer(
            text="",
            mode="sot" if mode == "sot" else "sequential",
            reason=reason,
            question=question,
            calls=calls,
            model=self.backend.model,
            backend=self.backend.name,
        )


@dataclass(frozen=True)
class Turn:
    """One question being answered: its conversation, its calls, where its events and text go."""

    question: str
    history: tuple[Message, ...]
    caller: Caller
    emit: Emit
    draft: Draft


def unlooped(outcome: CallOutcome, watch: LoopWatch) -> CallOutcome:
    """A stream that looped, ended where the loop began (and said to have looped)."""
    if not watch.looping:
        return outcome
    log.warning("%s call looped; its text ends where the loop began", outcome.record.purpose)
    return replace(outcome, text=watch.cut(outcome.text), record=replace(outcome.record, looped=True))


@dataclass
class SotRun:
    """The mutable state of one SoT answer (its question, history and draft are its Turn's)."""

    parser: OutlineReader  # of the current skeleton attempt
    points: list[str] = field(default_factory=list)  # the outline: points kept across attempts, in order
    details: list[str] = field(default_factory=list)  # what the outline said of each point beyond its title
    expansions: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    records: list[CallRecord] = field(default_factory=list)
    prompts_sent: list[str] = field(default_factory=list)
    error: SotError | None = None
    first_expansion_token_s: float | None = None
    outline_done_s: float | None = None

    def other_expansions(self, index: int) -> list[str]:
        """The expansions finished so far of every point but `index`."""
        return [text for i, text in self.expansions.items() if i != index]

    def take_new_points(self) -> list[str]:
        """Points the current attempt adds to the outline.

        By position: a retried skeleton stream retells the outline from its start, and its first
        points stand for the ones already kept (their expansions may be running). Only points past
        those extend the outline, unless they repeat a kept one: one outline, never a merge of two.
        """
        fresh = [p for p in self.parser.points[len(self.points) :] if not self._known(p)]
        self.points.extend(fresh)
        self.details.extend(self.parser.detail(p) for p in fresh)
        return fresh

    def upcoming(self) -> str | None:
        """The heading of the point the current attempt is writing, once settled, where it will extend
        the outline (not while a retried stream retells the points already kept)."""
        heading = self.parser.upcoming() if len(self.parser.points) >= len(self.points) else None
        return heading if heading is not None and not self._known(heading) else None

    def _known(self, point: str) -> bool:
        return point.casefold() in {kept.casefold() for kept in self.points}
