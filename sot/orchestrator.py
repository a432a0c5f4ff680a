"""Skeleton-of-Thought in two phases: a skeleton call, then every point expanded concurrently.

With ``pipeline`` on, a point's expansion starts as soon as its skeleton line is complete in the
stream, so early points overlap the rest of the skeleton; off, expansions wait for the whole
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import anyio

from . import constants, events
from ._draft import Draft
from ._loops import LoopWatch, whole_sentences
from ._sanitize import sanitize
from ._shape import SkeletonShape
from .backends.base import Backend, ChatRequest, Constraint
from .calls import Caller, CallOutcome
from .errors import SotError, point_error, skeleton_error
from .options import Options
from .profiles import GENERIC, OutlineReader, PointJob, Profile, Style, profile_named
from .result import Answer, CallRecord, Usage
from .router.decision import Route
from .templates import Message, Prompts, shared_prefix_fraction

Emit = Callable[[events.Event], None]
log = logging.getLogger("sot.orchestrator")


class Router(Protocol):
    """Decides per question: SoT or sequential."""

    async def route(self, question: str, caller: Caller | None = None) -> Route: ...


def _no_emit(_: events.Event) -> None:
    return None


@dataclass
class _Run:
    """The mutable state of one SoT answer."""

    question: str
    parser: OutlineReader  # of the current skeleton attempt
    draft: Draft
    history: tuple[Message, ...] = ()  # earlier turns, sent before every prompt
    points: list[str] = field(default_factory=list)  # the outline: points kept across attempts, in order
    details: list[str] = field(default_factory=list)  # what the outline said of each point beyond its title
    expansions: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    records: list[CallRecord] = field(default_factory=list)
    prompts_sent: list[str] = field(default_factory=list)
    error: SotError | None = None
    first_expansion_token_s: float | None = None

    def other_expansions(self, index: int) -> list[str]:
        """The expansions finished so far of every point but `index`."""
        return [text for i, text in self.expansions.items() if i != index]

    def take_new_points(self) -> list[str]:
        """Points the current attempt adds to the outline.

        By position: a retried skeleton stream retells the outline from its start, and its first
        points stand for the ones already kept (their expansions may be running). Only points past
        those extend the outline, unless they repeat a kept one: one outline, never a merge of two.
        """
        known = {point.casefold() for point in self.points}
        fresh = [p for p in self.parser.points[len(self.points) :] if p.casefold() not in known]
        self.points.extend(fresh)
        self.details.extend(self.parser.detail(p) for p in fresh)
        return fresh


def _unlooped(outcome: CallOutcome, watch: LoopWatch) -> CallOutcome:
    """A stream that looped, ended at its last whole sentence before the loop (and said to have looped)."""
    if not watch.looping:
        return outcome
    log.warning("%s call looped; its text ends at the last whole sentence before the loop", outcome.record.purpose)
    return replace(outcome, text=watch.cut(outcome.text), record=replace(outcome.record, looped=True))


def _first_sot_error(group: BaseExceptionGroup[BaseException]) -> SotError | None:
    for error in group.exceptions:
        if isinstance(error, SotError):
            return error
        if isinstance(error, BaseExceptionGroup) and (found := _first_sot_error(error)) is not None:
            return found
    return None


def _used_all(outcome: CallOutcome, max_tokens: int) -> bool:
    """Whether an outline's call spent its whole token budget: its last line ends wherever that fell."""
    usage = outcome.record.usage
    return usage is not None and usage.completion_tokens >= max_tokens


async def _outline_call(
    run: _Run,
    caller: Caller,
    request: ChatRequest,
    on_delta: Callable[[str], None],
    on_restart: Callable[[int], None],
    shape: SkeletonShape,
) -> CallOutcome:
    """One outline's call. Where fewer points are kept than asked for (a profile's choice), it is
    closed once it has every point it may keep: the server stops writing what would be dropped.
    Elsewhere it is read to its end, which carries the server's token usage."""
    full = (lambda: run.parser.full) if shape.kept_points < shape.max_points else None
    return await caller.call(
        request, purpose="skeleton", on_delta=on_delta, on_restart=on_restart, require_text=False, enough=full
    )


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
    ) -> None:
        self.limiter = limiter
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
        asked = opts.max_points or constants.DEFAULT_MAX_POINTS
        kept = opts.max_points or self.profile.kept_points(asked)
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
        draft = Draft(emit)
        mode, reason, decision = await self._decide(question, caller)
        log.info("answering with %s (%s; profile %s)", mode, reason, self.profile.name)
        route = decision.to_dict() if decision is not None else None
        route_s = caller.now() if decision is not None else None
        if mode == "sot":
            answer = await self._sot(question, caller, emit, draft, reason, history)
        else:
            emit(events.ModeChosen("sequential", reason))
            answer = await self._sequential(question, caller, emit, draft, reason, [], history)
        answer.route = route
        if decision is not None and decision.calls:
            answer.calls[:0] = decision.calls
        answer.timings.route_s = route_s
        answer.requested_mode = self.options.mode
        answer.timings.total_s = caller.now()
        answer.usage = sum((c.usage for c in answer.calls if c.usage), Usage())
        answer.adaptations = list(dict.fromkeys(note for c in answer.calls for note in c.adaptations))
        answer.reasoning_s = sum(c.reasoning_s for c in answer.calls)
        answer.profile = self.profile.name
        # Only calls whose text the answer shows: a cut outline is read as far as it went.
        shown = ("sequential",) if answer.mode == "sequential" else ("expand",)
        answer.truncated = any(
            (c.finish_reason == "length" or c.looped) and c.purpose in shown for c in answer.calls
        )
        log.info("answered: %s, %d call(s), %.2f s", answer.mode, len(answer.calls), answer.timings.total_s)
        emit(events.AnswerDone(answer))
        return answer

    async def _decide(self, question: str, caller: Caller) -> tuple[str, str, Route | None]:
        if self.options.mode != "auto":
            return self.options.mode, f"mode {self.options.mode} requested", None
        if self.router is None:
            return "sot", "no router configured: SoT", None
        decision = await self.router.route(question, caller)
        return decision.mode, f"router: {decision.reason}", decision

    def _answer(self, question: str, mode: str, reason: str, calls: list[CallRecord]) -> Answer:
        return Answer(
            text="",
            mode="sot" if mode == "sot" else "sequential",
            reason=reason,
            question=question,
            calls=calls,
            model=self.backend.model,
            backend=self.backend.name,
        )

    async def _sequential(
        self,
        question: str,
        caller: Caller,
        emit: Emit,
        draft: Draft,
        reason: str,
        calls: list[CallRecord],
        history: tuple[Message, ...],
    ) -> Answer:
        request = ChatRequest(
            [*history, *self.prompts.sequential(question)],
            max_tokens=self.options.max_tokens,
            temperature=self.options.temperature,
            seed=self.options.seed,
            reasoning=self.options.reasoning,
            guard_repetition=self.profile.guards_repetition,
        )

        watch = LoopWatch()

        def on_delta(text: str) -> None:
            emit(events.TextDelta(text))
            watch.feed(text)
            draft.sequential_delta(text, held=watch.held)

        def on_restart(attempt: int) -> None:
            emit(events.ExpansionRestarted(-1, attempt))
            watch.restart()
            draft.sequential_restart()

        outcome = await caller.call(
            request, purpose="sequential", on_delta=on_delta, on_restart=on_restart, enough=lambda: watch.looping
        )
        outcome = _unlooped(outcome, watch)
        if outcome.capped and self.profile.ends_cut_answers_whole:
            outcome = replace(outcome, text=whole_sentences(outcome.text))
        draft.sequential_final(outcome.text)
        answer = self._answer(question, "sequential", reason, [*calls, outcome.record])
        answer.text = draft.text
        answer.timings.first_token_s = outcome.record.first_token_s
        answer.timings.first_content_s = outcome.record.first_token_s
        return answer

    def _parser(self, question: str) -> OutlineReader:
        return self.profile.outline_reader(self.shape, question)

    async def _sot(
        self, question: str, caller: Caller, emit: Emit, draft: Draft, reason: str, history: tuple[Message, ...]
    ) -> Answer:
        opts = self.options
        parser = self._parser(question)
        run = _Run(question, parser, draft, history)
        limiter = anyio.CapacityLimiter(opts.max_parallel)
        emit(events.ModeChosen("sot", reason))
        skeleton_done_s: float | None = None
        started: set[int] = set()

        async with anyio.create_task_group() as tg:

            def dispatch(new_points: list[str]) -> None:
                first = len(run.points) - len(new_points)
                for index, point in enumerate(new_points, start=first):
                    emit(events.SkeletonPoint(index, sanitize(point)))
                    draft.add_point(sanitize(point))
                    if opts.pipeline:
                        start(index)

            def start(index: int) -> None:
                if index not in started:
                    started.add(index)
                    tg.start_soon(self._expand, run, index, caller, limiter, emit, tg.cancel_scope)

            def on_skeleton_delta(text: str) -> None:
                emit(events.SkeletonDelta(text))
                run.parser.feed(text)
                dispatch(run.take_new_points())

            def on_skeleton_restart(attempt: int) -> None:
                # Points already kept stay (their expansions may be running); the new stream is
                # parsed afresh and continues the outline after them (see take_new_points).
                run.parser = self._parser(run.question)
                emit(events.SkeletonRestarted(attempt))

            request = ChatRequest(
                [*history, *self.prompts.skeleton(question, self.shape, self.style.outline_template)],
                max_tokens=self.style.outline_max_tokens,
                temperature=opts.temperature,
                constraint=self._constraint(),
                seed=opts.seed,
                frequency_penalty=opts.skeleton_frequency_penalty,
                reasoning=opts.reasoning,
            )
            try:
                outcome = await _outline_call(run, caller, request, on_skeleton_delta, on_skeleton_restart, self.shape)
            except SotError as exc:
                run.error = skeleton_error(exc)
                tg.cancel_scope.cancel()
            else:
                run.records.append(outcome.record)
                run.parser.finish(cut=_used_all(outcome, self.style.outline_max_tokens))
                dispatch(run.take_new_points())
                for look in range(self.profile.more_outlines):
                    if not len(run.points) < self.shape.min_points <= run.parser.items:
                        break
                    await self._another_look(run, caller, request, on_skeleton_delta, dispatch, emit, look)
                skeleton_done_s = caller.now()
                log.info("outline: %d point(s) kept of %d item(s)", len(run.points), run.parser.items)
                if len(run.points) < constants.MIN_POINTS:
                    tg.cancel_scope.cancel()
                else:
                    emit(events.SkeletonDone(tuple(run.points)))
                    draft.outline_complete()
                    for index in range(len(run.points)):
                        start(index)

        if run.error is not None:
            raise run.error
        if len(run.points) < constants.MIN_POINTS:
            why = f"the skeleton had {len(run.points)} usable point(s); answered sequentially instead"
            log.info("falling back to sequential decoding: %s", why)
            emit(events.ModeChosen("sequential", why))
            answer = await self._sequential(question, caller, emit, draft, why, run.records, history)
            answer.fell_back = True
            return answer

        points = [sanitize(point) for point in run.points]
        expansions = [run.expansions.get(i, "") for i in range(len(points))]
        answer = self._answer(question, "sot", reason, sorted(run.records, key=lambda c: c.start_s))
        answer.points = points
        answer.expansions = expansions
        answer.failed_points = sorted(run.failed)
        answer.text = draft.text
        answer.pipelined = opts.pipeline
        answer.shared_prefix_fraction = shared_prefix_fraction(run.prompts_sent)
        # By purpose, not position: with pipelining an expansion often finishes before the skeleton.
        skeleton = next(c for c in run.records if c.purpose == "skeleton")
        # Every outline asked for counts: the answer waited for the last.
        outlines_end_s = max(c.end_s for c in run.records if c.purpose == "skeleton")
        answer.timings.skeleton_s = outlines_end_s - skeleton.start_s
        if skeleton_done_s is not None:
            answer.timings.expand_s = caller.now() - skeleton_done_s
        answer.timings.first_token_s = skeleton.first_token_s
        answer.timings.first_content_s = skeleton.first_token_s
        answer.timings.first_expansion_token_s = run.first_expansion_token_s
        return answer

    async def _another_look(
        self,
        run: _Run,
        caller: Caller,
        request: ChatRequest,
        on_delta: Callable[[str], None],
        dispatch: Callable[[list[str]], None],
        emit: Emit,
        look: int,
    ) -> None:
        """One more outline, sampled, when the last had enough lines but too few distinct points (as
        many as the profile's ``more_outlines``): a model that loops on one line leaves one or two. Its new points
        extend the outline; its repeats of kept ones are dropped. A failure keeps what there is.
        `look` counts the outlines asked for again before this one: each has a seed of its own, never
        the first outline's (a user's seed at a user's temperature would only ask the same again)."""
        log.info(
            "the outline had %d usable point(s) in %d lines; asking for another", len(run.points), run.parser.items
        )

        def fresh(attempt: int = 0) -> None:
            run.parser = self._parser(run.question)
            run.parser.keep(run.points)
            emit(events.SkeletonRestarted(attempt))

        fresh()
        seed = (constants.SECOND_LOOK_SEED if request.seed is None else request.seed + 1) + look
        varied = replace(request, temperature=constants.SECOND_LOOK_TEMPERATURE, seed=seed)
        try:
            outcome = await _outline_call(run, caller, varied, on_delta, fresh, self.shape)
        except SotError as exc:
            log.info("another outline failed: %s", exc)
            return
        run.records.append(outcome.record)
        run.parser.finish(cut=_used_all(outcome, request.max_tokens))
        dispatch(run.take_new_points())

    async def _expansion_call(
        self,
        run: _Run,
        points: list[str],
        index: int,
        caller: Caller,
        on_delta: Callable[[str], None],
        on_restart: Callable[[int], None],
        lead: bool,
        sample_at: float | None,
        enough: Callable[[], bool] | None = None,
    ) -> CallOutcome:
        opts = self.options
        details = run.details[: len(points)]  # kept in step with run.points, of which points is a prefix
        template = self.style.expansion_template
        messages = [
            *run.history,
            *self.prompts.expansion(run.question, points, index, template=template, lead=lead, details=details),
        ]
        run.prompts_sent.append("\n".join(m.content for m in messages))
        sampled = sample_at is not None
        request = ChatRequest(
            messages,
            max_tokens=self.style.point_max_tokens,
            temperature=sample_at if sampled else opts.temperature,
            seed=constants.SECOND_LOOK_SEED if sampled and opts.seed is None else opts.seed,
            stop=self.profile.expansion_stop(index, lead),
            reasoning=opts.reasoning,
        )
        return await caller.call(
            request,
            purpose="expand",
            index=index,
            on_delta=on_delta,
            on_restart=on_restart,
            require_text=self.profile.requires_text,
            enough=enough,
        )

    def _job(self, run: _Run, points: list[str], index: int) -> PointJob:
        instructions = self.prompts.expansion_instructions(self.style.expansion_template)
        return PointJob(
            run.question,
            tuple(points),
            index,
            tuple(instructions),
            functools.partial(run.other_expansions, index),
            self.options.temperature,
        )

    async def _expand(
        self,
        run: _Run,
        index: int,
        caller: Caller,
        limiter: anyio.CapacityLimiter,
        emit: Emit,
        scope: anyio.CancelScope,
    ) -> None:
        # Pipelined, a point sees the outline up to its own line, whatever else the stream had delivered
        # when its task began: the same prompt however the stream was chunked (prompt caches, replays).
        points = run.points[: index + 1] if self.options.pipeline else list(run.points)
        tries = _Tries()

        watch = LoopWatch(shown_live=False)

        def on_delta(text: str) -> None:
            if run.first_expansion_token_s is None:
                run.first_expansion_token_s = caller.now()
            watch.feed(text)
            emit(events.ExpansionDelta(index, text))

        def on_restart(attempt: int) -> None:
            watch.restart()
            emit(events.ExpansionRestarted(index, attempt))

        async def call(*, lead: bool = False, sample_at: float | None = None) -> CallOutcome:
            if tries.calls:  # the profile asks again: what the last call showed is taken back
                on_restart(tries.attempts + 1)
            outcome = await self._expansion_call(
                run, points, index, caller, on_delta, on_restart, lead, sample_at, enough=lambda: watch.looping
            )
            outcome = _unlooped(outcome, watch)
            tries.calls += 1
            tries.attempts += outcome.record.attempts
            run.records.append(outcome.record)
            return outcome

        async with limiter:
            emit(events.ExpansionStarted(index))
            start_s = caller.now()
            try:
                text = sanitize(await self.profile.expand(self._job(run, points, index), call))
            except SotError as exc:
                failed = CallRecord("expand", index, 0, start_s, caller.now(), None, None, error=str(exc))
                self._point_failed(run, index, points[index], exc, failed, emit, scope)
                return
        if not text:
            log.info("point %d: no text of its own; showing its title", index + 1)
        run.expansions[index] = text
        emit(events.PointDone(index, text))
        run.draft.point_final(index, text)

    def _point_failed(
        self, run: _Run, index: int, title: str, exc: SotError, record: CallRecord, emit: Emit, scope: anyio.CancelScope
    ) -> None:
        run.failed[index] = str(exc)
        run.records.append(record)
        emit(events.PointDone(index, "", failed=True, error=str(exc)))
        if not self.options.allow_partial and run.error is None:
            run.error = point_error(index, title, exc)
            scope.cancel()
            return
        log.warning("point %d failed and is kept as its title: %s", index + 1, exc)
        run.draft.point_final(index, title)


@dataclass
class _Tries:
    """The calls made for one point so far, and their attempts (retries included)."""

    calls: int = 0
    attempts: int = 0
