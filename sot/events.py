"""Typed events that ``sot.stream`` yields while an answer forms.

Two kinds: *progress* events (``SkeletonDelta``, ``ExpansionDelta``, ``TextDelta`` and their
``...Restarted`` companions) show raw model output as it arrives, retries included, for live views;
``AnswerText`` carries the answer itself, final and in reading order: the concatenation of every
``AnswerText`` of an answer is exactly ``Answer.text``. Print ``AnswerText`` to show the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from .result import Answer


@dataclass(frozen=True)
class ModeChosen:
    """The mode the answer uses and why (router decision, or a fallback to sequential)."""

    mode: str
    reason: str


@dataclass(frozen=True)
class FanOutChosen:
    """How wide the expansions may go, given the server's load (before the outline; see ``Answer.fan_out``)."""

    mode: str  # "sot" or "sequential"
    width: int
    reason: str


@dataclass(frozen=True)
class SkeletonDelta:
    """Raw skeleton text as it streams (progress: a retry may restart it)."""

    text: str


@dataclass(frozen=True)
class SkeletonRestarted:
    """The skeleton call was retried, or another outline asked for (the last had too few distinct
    points); points parsed so far are kept, duplicates are dropped."""

    attempt: int


@dataclass(frozen=True)
class SkeletonPoint:
    """A skeleton point became known (with pipelining, its expansion starts now)."""

    index: int
    title: str


@dataclass(frozen=True)
class SkeletonDone:
    """The skeleton is complete and has enough points for SoT."""

    points: tuple[str, ...]


@dataclass(frozen=True)
class ExpansionStarted:
    """Point `index` got a slot and its expansion call began."""

    index: int


@dataclass(frozen=True)
class ExpansionDelta:
    """Raw expansion text of point `index` as it streams (progress: a retry may restart it)."""

    index: int
    text: str


@dataclass(frozen=True)
class ExpansionRestarted:
    """A retry began: discard the partial text of this point (-1: the sequential answer)."""

    index: int
    attempt: int


@dataclass(frozen=True)
class PointDone:
    """Point `index` is final: its cleaned expansion ("" when it has none, or failed: the answer
    then shows its title alone, as a heading in a full answer)."""

    index: int
    text: str
    failed: bool = False
    error: str | None = None


@dataclass(frozen=True)
class TextDelta:
    """Raw text of a sequential answer as it streams (progress: a retry may restart it)."""

    text: str


@dataclass(frozen=True)
class AnswerText:
    """Final answer text in reading order, never taken back; together they are ``Answer.text``."""

    text: str


@dataclass(frozen=True)
class AnswerDone:
    """The answer is complete (always the last event of a successful answer)."""

    answer: Answer


Event = (
    ModeChosen
    | FanOutChosen
    | SkeletonDelta
    | SkeletonRestarted
    | SkeletonPoint
    | SkeletonDone
    | ExpansionStarted
    | ExpansionDelta
    | ExpansionRestarted
    | PointDone
    | TextDelta
    | AnswerText
    | AnswerDone
)
