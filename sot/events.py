"""Typed events that ``sot.stream`` yields while an answer forms."""

from __future__ import annotations

from dataclasses import dataclass

from .result import Answer


@dataclass(frozen=True)
class ModeChosen:
    """The mode the answer uses and why (router decision, or a fallback to sequential)."""

    mode: str
    reason: str


@dataclass(frozen=True)
class SkeletonDelta:
    text: str


@dataclass(frozen=True)
class SkeletonRestarted:
    """The skeleton call was retried; points parsed so far are kept, duplicates are dropped."""

    attempt: int


@dataclass(frozen=True)
class SkeletonPoint:
    index: int
    title: str


@dataclass(frozen=True)
class SkeletonDone:
    points: tuple[str, ...]


@dataclass(frozen=True)
class ExpansionStarted:
    index: int


@dataclass(frozen=True)
class ExpansionDelta:
    index: int
    text: str


@dataclass(frozen=True)
class ExpansionRestarted:
    """A retry began: discard the partial text of this point (-1: the sequential answer)."""

    index: int
    attempt: int


@dataclass(frozen=True)
class PointDone:
    index: int
    text: str
    failed: bool = False
    error: str | None = None


@dataclass(frozen=True)
class OrderedText:
    """Answer text in reading order: point `index` may stream live only once all before it are done."""

    index: int
    text: str


@dataclass(frozen=True)
class TextDelta:
    """Answer text of a sequential answer."""

    text: str


@dataclass(frozen=True)
class AnswerDone:
    answer: Answer


Event = (
    ModeChosen
    | SkeletonDelta
    | SkeletonRestarted
    | SkeletonPoint
    | SkeletonDone
    | ExpansionStarted
    | ExpansionDelta
    | ExpansionRestarted
    | PointDone
    | OrderedText
    | TextDelta
    | AnswerDone
)
