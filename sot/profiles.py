"""Model profiles: the one seam where what suits one model lives, apart from the generic core.

The orchestrator asks its profile how to read an outline, how many points to keep, which expansion
prompt to send and how to settle a point's text; it knows no model. ``GenericProfile`` is the
identity: an outline read as written (sot/outline.py) and an expansion kept as the model wrote it,
less the point's number and title where the model echoed them. Other profiles are found by name
(``Options.profile``; a backend may recommend one, as the embedded server does for its bundled
model) and imported only when used.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from . import constants
from ._shape import SkeletonShape
from .calls import CallOutcome
from .errors import ConfigurationError
from .templates import EXPAND, EXPAND_BRIEF, SKELETON, SKELETON_BRIEF

GENERIC, SMALL = constants.PROFILES
# name -> "module:attribute", imported on first use: a profile's rules cost nothing to other models.
_REGISTRY = {
    GENERIC: "sot.profiles:GenericProfile",
    SMALL: "sot.backends.small_model:SmallModelProfile",
}


class OutlineReader(Protocol):
    """Reads one outline as it streams (see sot.outline.SkeletonParser)."""

    points: list[str]
    items: int

    @property
    def full(self) -> bool: ...

    def feed(self, text: str) -> list[str]: ...

    def finish(self, *, cut: bool = False) -> list[str]: ...

    def keep(self, points: list[str]) -> None: ...

    def detail(self, point: str) -> str: ...

    def upcoming(self) -> str | None:
        """The title of the point being streamed, once no more text can change it (else None)."""
        ...


class ExpandCall(Protocol):
    """One expansion call for the point at hand. `lead`: end the prompt with the point's start as the
    assistant's turn; `sample_at`: a temperature of its own (with a seed of its own), for a retry."""

    def __call__(self, *, lead: bool = False, sample_at: float | None = None) -> Awaitable[CallOutcome]: ...


@dataclass(frozen=True)
class PointJob:
    """What a profile sees of the point it expands."""

    question: str
    points: tuple[str, ...]  # the outline as far as it is known
    index: int
    instructions: tuple[str, ...]  # the expansion prompt's own sentences: what an echo repeats
    others: Callable[[], list[str]]  # the finished expansions of the other points, as of now
    temperature: float | None  # the answer's (None: the server's default)

    @property
    def title(self) -> str:
        return self.points[self.index]


@dataclass(frozen=True)
class Style:
    """The prompts an answer is written with, and the token budgets they need."""

    outline_template: str
    expansion_template: str
    outline_max_tokens: int
    point_max_tokens: int
    max_points: int  # asked of the outline where the caller sets no max_points
    # A pipelined point waits for the next point's heading and is shown it: it knows where its part ends.
    sees_next_heading: bool = False
    # Every section under its own heading. The alternative, a point's text after its title on one line
    # (and under a heading only where it has several lines), suits short points; with sections of a
    # normal answer's length it mixes the two forms within one answer.
    headed_sections: bool = False


# The plan names each section's content and length (9 sections of a heading, a sentence and a length fit
# well within 1024 tokens); a section of a normal answer's length, code or a table included, in 1024.
FULL = Style(
    SKELETON,
    EXPAND,
    constants.PLAN_MAX_TOKENS,
    constants.SECTION_MAX_TOKENS,
    constants.PLAN_MAX_SECTIONS,
    sees_next_heading=True,
    headed_sections=True,
)
BRIEF = Style(
    SKELETON_BRIEF,
    EXPAND_BRIEF,
    constants.SKELETON_MAX_TOKENS,
    constants.DEFAULT_POINT_MAX_TOKENS,
    constants.DEFAULT_MAX_POINTS,
)


class Profile(Protocol):
    """What suits one model: how its outline is read, its expansion prompt, how a point's text is settled."""

    name: str
    # Send the outline's grammar / regex (sot/_shape.py) where the server takes one.
    constrains_outline: bool
    # Outlines asked for again, sampled, while fewer than the minimum of distinct points stand.
    more_outlines: int
    # Whether an empty expansion is a failed call (retried as such) rather than the profile's to settle.
    requires_text: bool
    # Ask the server's guard against loops for plain (sequential) answers (ChatRequest.guard_repetition).
    guards_repetition: bool
    # A plain answer stopped by its token limit ends at its last whole sentence (still said to be cut).
    ends_cut_answers_whole: bool

    def kept_points(self, asked: int) -> int: ...

    def style(self, brief: bool) -> Style:
        """The prompts and budgets for a full answer, or a brief one (the SoT paper's short points)."""
        ...

    def outline_reader(self, shape: SkeletonShape, question: str) -> OutlineReader: ...

    def expansion_stop(self, index: int, lead: bool) -> tuple[str, ...]: ...

    async def expand(self, job: PointJob, call: ExpandCall) -> str: ...


def _echo(index: int, core: str) -> re.Pattern[str]:
    """The point's number and title at the start of a text: "2. Title:", "**Title**", "### 2. Title"."""
    return re.compile(
        rf"(?:\#{{1,6}}[ \t]*)?(?P<open>\*\*|__)?[ \t]*(?:{index + 1}[ \t]*[.):][ \t]*)?(?P<inner>\*\*|__)?[ \t]*"
        # The title's own stop must end a word ("Node.js" is no echo of "Node"), and emphasis closes only
        # what it opened ("Direct answer: **Yes**" keeps its bold).
        rf"{re.escape(core)}(?P<end>[.:;!?：]*(?=\s|$|\*\*|__))[ \t]*"
        rf"(?:(?(open)(?P<close>\*\*|__)|(?(inner)(?P<close2>\*\*|__))))?[ \t]*(?P<sep>[:.\-–—：](?=\s|$))?",
        re.IGNORECASE,
    )


def strip_echo(text: str, index: int, title: str) -> str:
    """`text` as the model wrote it, less the point's number and title echoed as a heading at its start
    (what sot put in the prompt) and the whitespace around it. A sentence that merely begins with the
    title's words ("Exercise regularly to ...") is the model's own and stays whole."""
    body, core = text.lstrip(), title.strip().rstrip(".:;!? ")
    found = _echo(index, core).match(body) if core else None
    if found is None:
        return text.strip()
    rest = body[found.end() :]
    closed = found["close"] or found["close2"]
    heading = bool(found["open"] or found["inner"]) == bool(closed) and (
        (closed is not None and not rest.lstrip(" \t")[:1].islower())
        or found["sep"] is not None
        or any(mark in found["end"] for mark in ".:")
        or (found["end"][-1:] in ("?", "!") and title.rstrip().endswith(found["end"][-1:]))
        or not rest.strip(" \t")
        or rest.startswith(("\n", " \n"))
    )
    return rest.strip() if heading else text.strip()


class GenericProfile:
    """Every model's default: the outline and the expansions as the model wrote them."""

    name = GENERIC
    constrains_outline = False
    more_outlines = 0
    requires_text = True
    guards_repetition = False  # a strong model rarely loops; sot/_loops.py still ends one that does
    ends_cut_answers_whole = False  # the model's text as written, its cut stated

    def kept_points(self, asked: int) -> int:
        return asked

    def style(self, brief: bool) -> Style:
        return BRIEF if brief else FULL

    def outline_reader(self, shape: SkeletonShape, question: str) -> OutlineReader:
        from .outline import SkeletonParser  # compiles the outline's patterns: only for SoT answers

        return SkeletonParser(shape=shape)

    def expansion_stop(self, index: int, lead: bool) -> tuple[str, ...]:
        return ()

    async def expand(self, job: PointJob, call: ExpandCall) -> str:
        outcome = await call()
        return strip_echo(outcome.text, job.index, job.title)


def profile_named(name: str) -> Profile:
    """The profile called `name` (``Options.profile``)."""
    target = _REGISTRY.get(name)
    if target is None:
        raise ConfigurationError(f"profile must be one of {', '.join(sorted(_REGISTRY))}, not {name!r}")
    module, _, attribute = target.partition(":")
    made: Profile = getattr(importlib.import_module(module), attribute)()
    return made
