"""Skeleton-of-Thought in two phases: a skeleton call, then every point expanded concurrently.

With ``pipeline`` on, a point's expansion starts as soon as its skeleton line is complete in the
stream (a full answer's section, as soon as the next line's heading is, and is shown it), so early
points overlap the rest of the skeleton; off, expansions wait for the whole
skeleton (the paper's SoT). Either way expansions are bounded by a ``CapacityLimiter``, each has
its own retries and deadline, and the answer is stitched in skeleton order.

A failing point does not cancel its siblings by itself: it is caught per point, then either sinks
the answer with a ``PointError`` naming it (the default) or is kept as its title (allow_partial).

The answer's text is owned by a ``Draft`` (sot/_draft.py): the orchestrator tells it when a point is
final or the outline complete, and every view reads the text it commits.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, TypeAlias

import anyio

from . import constants, events
from ._cost import extra_tokens
from ._draft import Draft
from ._sequential import answer_sequentially
from ._shape import SkeletonShape
from ._turn import Emit, Setup, Turn
from .backends.base import Backend, Constraint, LoadAware
from .calls import Caller
from .errors import SotError
from .options import Options
from .profiles import GENERIC, Profile, Style, profile_named
from .result import Answer, Usage
from .router.load import FanOut, Grants, decide_fan_out
from .templates import Message, Prompts

if TYPE_CHECKING:
    from .backends._load import LoadReading
    from .router.decision import Route

log = logging.getLogger("sot.orchestrator")
_Reading: TypeAlias = "LoadReading | None"


class Router(Protocol):
    """Decides per question: SoT or sequential."""

    async def route(self, question: str, caller: Caller | None = None) -> Route: ...


def _no_emit(_: events.Event) -> None:
    return None


def _first_sot_error(group: BaseExceptionGroup[BaseException]) -> SotError | None:
    for error in group.exceptions:
        if isinstance(error, SotError):
            return error
        if isinstance(error, BaseExceptionGroup) and (found := _first_sot_error(error)) is not None:
            return found
    return None


class Orchestrator:
    """Answers one question at a time against `backend`: routing, skeleton, expansions, stitching."""

    def __init__(
        self,
        backend: Backend,
        options: Options,
        prompts: Prompts | None = None,
        router: Router | None = None,
        limiter: anyio.CapacityLimiter | None = None,
        profile: Profile | None = None,
        grants: Grants | None = None,
    ) -> None:
        self.limiter = limiter
        # Shared by the orchestrators of one client (one backend): fan-outs given and not yet ended.
        self.grants = grants if grants is not None else Grants()
        self.backend = backend
        self.options = options
        self.prompts = prompts or Prompts(options.prompts_dir)
        self.router = router
        self.profile = profile or profile_named(options.profile or GENERIC)

    @functools.cached_property
    def shape(self) -> SkeletonShape:
        """The skeleton's shape for these options: the one source of its grammar, regex, prompt and limits.
        (Worked out once: an orchestrator's options never change.)"""
        opts = self.options
        asked = opts.max_points or self.style.max_points
        # A plan of more sections than asked is the model's answer: kept whole, up to the brief outline's cap.
        kept = opts.max_points or self.profile.kept_points(max(asked, constants.DEFAULT_MAX_POINTS))
        return SkeletonShape(max_points=asked, kept_points=kept, point_chars=opts.max_point_chars)

    @functools.cached_property
    def style(self) -> Style:
        """The prompts and budgets of this orchestrator's answers, the user's token caps first."""
        style = self.profile.style(self.options.brief)
        return replace(
            style,
            outline_max_tokens=self.options.skeleton_max_tokens or style.outline_max_tokens,
            point_max_tokens=self.options.point_max_tokens or style.point_max_tokens,
        )

    @functools.cached_property
    def setup(self) -> Setup:
        return Setup(self.backend, self.options, self.prompts, self.profile, self.shape, self.style, self._constraint())

    def _constraint(self) -> Constraint | None:
        if not (self.options.constrain_skeleton and self.profile.constrains_outline):
            return None
        return Constraint(gbnf=self.prompts.skeleton_grammar(self.shape), regex=self.shape.regex())

    async def run(self, question: str, emit: Emit = _no_emit, history: Sequence[Message] = ()) -> Answer:
        """The answer to `question`; `emit` sees its events as it forms. Raises only ``SotError``.

        `history`: the conversation's earlier turns (system prompt, questions, final answers), sent
        before every prompt of this answer.
        """
        try:
            return await self._run(question, emit, tuple(history))
        except BaseExceptionGroup as group:
            # Task groups wrap what their tasks raise; the caller is promised a SotError. Anything
            # else in the group is a bug and stays visible.
            sot_errors, others = group.split(SotError)
            if others is not None or sot_errors is None:
                raise
            found = _first_sot_error(sot_errors)
            assert found is not None
            raise found from None

    async def _run(self, question: str, emit: Emit, history: tuple[Message, ...]) -> Answer:
        caller = Caller(
            self.backend, self.options.retry_policy, limiter=self.limiter, keep_reasoning=self.options.keep_reasoning
        )
        turn = Turn(question, history, caller, emit, Draft(emit, headed=self.style.headed_sections))
        mode, reason, decision, reading = await self._decide_and_read(question, caller)
        log.info("answering with %s (%s; profile %s)", mode, reason, self.profile.name)
        route_s = caller.now() if decision is not None else None
        fan = self._fan_out(reading) if mode == "sot" else None
        if fan is not None:
            emit(events.FanOutChosen(fan.mode, fan.width, fan.reason))
        if fan is not None and fan.mode == "sequential" and self.options.mode == "auto":
            mode, reason = "sequential", f"load: {fan.reason}"
        if mode == "sot":
            from ._sot import answer_with_sot  # the outline and expansion machinery: not for sequential answers

            width = fan.width if fan is not None else self.options.max_parallel
            grant = self.grants.give(width, time.monotonic())
            try:
                answer = await answer_with_sot(self.setup, turn, reason, width)
            finally:
                self.grants.end(grant)
        else:
            emit(events.ModeChosen("sequential", reason))
            answer = await answer_sequentially(self.setup, turn, reason, [])
        answer.fan_out = fan.to_dict() if fan is not None else None
        answer.route = decision.to_dict() if decision is not None else None
        if decision is not None and decision.calls:
            answer.calls[:0] = decision.calls
        answer.timings.route_s = route_s
        self._account(answer, caller)
        log.info("answered: %s, %d call(s), %.2f s", answer.mode, len(answer.calls), answer.timings.total_s)
        emit(events.AnswerDone(answer))
        return answer

    def _account(self, answer: Answer, caller: Caller) -> None:
        """What the answer cost and how it ended, from its calls."""
        answer.requested_mode = self.options.mode
        answer.timings.total_s = caller.now()
        answer.usage = sum((c.usage for c in answer.calls if c.usage), Usage())
        answer.adaptations = list(dict.fromkeys(note for c in answer.calls for note in c.adaptations))
        answer.reasoning_s = sum(c.reasoning_s for c in answer.calls)
        answer.profile = self.profile.name
        # Only calls whose text the answer shows: a cut outline is read as far as it went.
        shown = ("sequential",) if answer.mode == "sequential" else ("expand",)
        answer.truncated = any((c.finish_reason == "length" or c.looped) and c.purpose in shown for c in answer.calls)
        answer.extra_tokens = extra_tokens(answer)

    @property
    def _reads_load(self) -> bool:
        return self.options.load_aware and isinstance(self.backend, LoadAware)

    async def _decide_and_read(self, question: str, caller: Caller) -> tuple[str, str, Route | None, _Reading]:
        """The route, and the server's load read at the same time (it costs a round trip when stale)."""
        if not self._reads_load or self.options.mode == "sequential":
            return (*await self._decide(question, caller), None)
        found: dict[str, _Reading] = {}

        async def read() -> None:
            assert isinstance(self.backend, LoadAware)
            found["load"] = await self.backend.load()

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            mode, reason, decision = await self._decide(question, caller)
        return mode, reason, decision, found.get("load")

    def _fan_out(self, reading: _Reading) -> FanOut | None:
        """How wide this answer's expansions may go, from the server's load and sot's own calls; None
        where load-awareness is off or the backend cannot tell. An explicit mode sot is only narrowed,
        never turned sequential (only mode auto's choice is the load's to change)."""
        if not self._reads_load:
            return None
        assert isinstance(self.backend, LoadAware)
        fan = decide_fan_out(
            reading,
            own_in_flight=self.backend.in_flight,
            points=self.shape.kept_points,  # as many as may be expanded
            max_parallel=self.options.max_parallel,
            own_limit=int(self.limiter.total_tokens) if self.limiter is not None else None,
            granted=self.grants.since(reading.read_at) if reading is not None else 0,
        )
        log.info("fan-out: %s, width %d (%s)", fan.mode, fan.width, fan.reason)
        return fan

    async def _decide(self, question: str, caller: Caller) -> tuple[str, str, Route | None]:
        if self.options.mode != "auto":
            return self.options.mode, f"mode {self.options.mode} requested", None
        if self.router is None:
            return "sot", "no router configured: SoT", None
        decision = await self.router.route(question, caller)
        return decision.mode, f"router: {decision.reason}", decision
