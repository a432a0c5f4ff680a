"""A Skeleton-of-Thought answer: the outline, every point's expansion started as its line completes
(pipelined; or, in a style that looks ahead, as the next point's heading does) or once the outline is
done, and the answer assembled in the outline's order."""

from __future__ import annotations

import functools
from dataclasses import replace

import anyio

from . import constants, events
from ._expansion import Shown, expand
from ._sanitize import sanitize
from ._sequential import answer_sequentially
from ._turn import Setup, SotRun, Turn, log
from .backends.base import ChatRequest
from .calls import CallOutcome
from .errors import SotError, skeleton_error
from .profiles import OutlineReader
from .result import Answer
from .templates import shared_prefix_fraction


async def answer_with_sot(setup: Setup, turn: Turn, reason: str, width: int) -> Answer:
    """The SoT answer, at most `width` expansions at once, or the sequential one where the outline has
    too few points."""
    run = SotRun(_reader(setup, turn.question))
    turn.emit(events.ModeChosen("sot", reason))
    async with anyio.create_task_group() as tg:
        await _outline(_FanOut(setup, turn, run, tg, width))
    if run.error is not None:
        raise run.error
    if len(run.points) < constants.MIN_POINTS:
        why = f"the skeleton had {len(run.points)} usable point(s); answered sequentially instead"
        log.info("falling back to sequential decoding: %s", why)
        turn.emit(events.ModeChosen("sequential", why))
        answer = await answer_sequentially(setup, turn, why, run.records)
        answer.fell_back = True
        return answer
    return _assembled(setup, turn, run, reason)


def _reader(setup: Setup, question: str) -> OutlineReader:
    return setup.profile.outline_reader(setup.shape, question)


class _FanOut:
    """The outline stream's listener: it keeps the points each line completes, shows them, and starts
    each point's expansion once: when pipelined, as its line completes, or in a style that looks ahead,
    as the next point's heading streams (or its line completes); else, and for the last point, when the
    outline is done."""

    def __init__(self, setup: Setup, turn: Turn, run: SotRun, tg: anyio.abc.TaskGroup, width: int) -> None:
        self.setup, self.turn, self.run, self.tg = setup, turn, run, tg
        self.limiter = anyio.CapacityLimiter(width)
        self.started: set[int] = set()
        self.ahead = setup.options.pipeline and setup.style.sees_next_heading
        self.told: dict[int, str] = {}  # a point's heading, as shown to the section before it

    def dispatch(self, new_points: list[str]) -> None:
        first = len(self.run.points) - len(new_points)
        for index, point in enumerate(new_points, start=first):
            title = sanitize(point)
            if self.told.get(index, point) != point:  # a retried outline went another way
                log.info("section %d was shown %r next; the outline has %r", index, self.told[index], point)
            self.turn.emit(events.SkeletonPoint(index, title))
            self.turn.draft.add_point(title)
            if self.setup.options.pipeline:
                self.start(index - 1 if self.ahead else index)

    def start(self, index: int, heading: str | None = None) -> None:
        if index >= 0 and index not in self.started:
            self.started.add(index)
            shown = self.shown(index, heading)
            if heading is not None:
                self.told[index + 1] = heading
            scope = self.tg.cancel_scope
            self.tg.start_soon(expand, self.setup, self.turn, self.run, index, shown, self.limiter, scope)

    def shown(self, index: int, heading: str | None) -> Shown:
        """The outline point `index` is shown: two-phase, all of it; pipelined, up to its own line and,
        looking ahead, the next point's heading alone (`heading`, where its line is not complete yet).
        Whatever else the stream has delivered by then: the same prompt however it was chunked."""
        run = self.run
        if not self.setup.options.pipeline:
            return Shown(list(run.points), list(run.details))
        points, details = run.points[: index + 1], run.details[: index + 1]
        following = (heading or next(iter(run.points[index + 1 : index + 2]), None)) if self.ahead else None
        return Shown([*points, following], [*details, ""]) if following else Shown(points, details)

    def start_all(self) -> None:
        for index in range(len(self.run.points)):
            self.start(index)

    def on_delta(self, text: str) -> None:
        self.turn.emit(events.SkeletonDelta(text))
        self.run.parser.feed(text)
        self.dispatch(self.run.take_new_points())
        if not self.ahead or len(self.run.points) - 1 in self.started:
            return  # the section the next heading would start runs already: no need to read it again
        heading = self.run.upcoming()
        if heading is not None or self.run.parser.full:  # at the cap, no point follows the last kept one
            self.start(len(self.run.points) - 1, heading)

    def on_restart(self, attempt: int, *, another: bool = False) -> None:
        """A new outline stream, parsed afresh; points already kept stay (their expansions may be running,
        the last one's with the next heading it was shown, which the new stream may not repeat: logged).
        A retried stream retells the outline and continues after them (see SotRun.take_new_points);
        `another` outline must extend them, not retell them."""
        self.run.parser = _reader(self.setup, self.turn.question)
        if another:
            self.run.parser.keep(self.run.points)
        self.turn.emit(events.SkeletonRestarted(attempt))

    def stop(self) -> None:
        self.tg.cancel_scope.cancel()


async def _outline(fan: _FanOut) -> None:
    """The outline phase; where it has enough points, every expansion is started by its end."""
    setup, run, caller = fan.setup, fan.run, fan.turn.caller
    request = _outline_request(setup, fan.turn)
    try:
        outcome = await _outline_call(fan, request)
    except SotError as exc:
        run.error = skeleton_error(exc)
        fan.stop()
        return
    _settle_outline(fan, outcome, request.max_tokens)
    for look in range(setup.profile.more_outlines):
        if not len(run.points) < setup.shape.min_points <= run.parser.items:
            break
        await _another_look(fan, request, look)
    run.outline_done_s = caller.now()
    log.info("outline: %d point(s) kept of %d item(s)", len(run.points), run.parser.items)
    if len(run.points) < constants.MIN_POINTS:
        fan.stop()
        return
    fan.turn.emit(events.SkeletonDone(tuple(run.points)))
    fan.turn.draft.outline_complete()
    fan.start_all()


def _outline_request(setup: Setup, turn: Turn) -> ChatRequest:
    opts = setup.options
    return ChatRequest(
        [
            *turn.history,
            *setup.prompts.skeleton(turn.question, setup.shape, setup.style.outline_template, pipelined=opts.pipeline),
        ],
        max_tokens=setup.style.outline_max_tokens,
        temperature=opts.temperature,
        constraint=setup.constraint,
        seed=opts.seed,
        frequency_penalty=opts.skeleton_frequency_penalty,
        reasoning=opts.reasoning,
    )


async def _outline_call(fan: _FanOut, request: ChatRequest, *, another: bool = False) -> CallOutcome:
    """One outline's call. Where fewer points are kept than asked for (a profile's choice), it is
    closed once it has every point it may keep: the server stops writing what would be dropped.
    Elsewhere it is read to its end, which carries the server's token usage."""
    shape, run = fan.setup.shape, fan.run
    full = (lambda: run.parser.full) if shape.kept_points < shape.max_points else None
    return await fan.turn.caller.call(
        request,
        purpose="skeleton",
        on_delta=fan.on_delta,
        on_restart=functools.partial(fan.on_restart, another=another),
        require_text=False,
        enough=full,
    )


def _settle_outline(fan: _FanOut, outcome: CallOutcome, max_tokens: int | None) -> None:
    """An outline's stream ended: its last item is final (unless the token budget cut it there)."""
    fan.run.records.append(outcome.record)
    usage = outcome.record.usage
    cut = usage is not None and max_tokens is not None and usage.completion_tokens >= max_tokens
    fan.run.parser.finish(cut=cut)
    fan.dispatch(fan.run.take_new_points())


async def _another_look(fan: _FanOut, request: ChatRequest, look: int) -> None:
    """One more outline, sampled, when the last had enough lines but too few distinct points (as many
    as the profile's ``more_outlines``): a model that loops on one line leaves one or two. Its new
    points extend the outline; its repeats of kept ones are dropped. A failure keeps what there is.
    `look` counts the outlines asked for again before this one: each has a seed of its own, never the
    first outline's (a user's seed at a user's temperature would only ask the same again)."""
    run = fan.run
    log.info("the outline had %d usable point(s) in %d lines; asking for another", len(run.points), run.parser.items)
    fan.on_restart(0, another=True)
    seed = (constants.SECOND_LOOK_SEED if request.seed is None else request.seed + 1) + look
    varied = replace(request, temperature=constants.SECOND_LOOK_TEMPERATURE, seed=seed)
    try:
        outcome = await _outline_call(fan, varied, another=True)
    except SotError as exc:
        log.info("another outline failed: %s", exc)
        return
    _settle_outline(fan, outcome, request.max_tokens)


def _assembled(setup: Setup, turn: Turn, run: SotRun, reason: str) -> Answer:
    points = [sanitize(point) for point in run.points]
    answer = setup.answer(turn.question, "sot", reason, sorted(run.records, key=lambda c: c.start_s))
    answer.points = points
    answer.expansions = [run.expansions.get(i, "") for i in range(len(points))]
    answer.failed_points = sorted(run.failed)
    answer.text = turn.draft.text
    answer.pipelined = setup.options.pipeline
    answer.shared_prefix_fraction = shared_prefix_fraction(run.prompts_sent)
    # By purpose, not position: with pipelining an expansion often finishes before the skeleton.
    skeleton = next(c for c in run.records if c.purpose == "skeleton")
    # Every outline asked for counts: the answer waited for the last.
    outlines_end_s = max(c.end_s for c in run.records if c.purpose == "skeleton")
    answer.timings.skeleton_s = outlines_end_s - skeleton.start_s
    if run.outline_done_s is not None:
        answer.timings.expand_s = turn.caller.now() - run.outline_done_s
    answer.timings.first_token_s = skeleton.first_token_s
    answer.timings.first_content_s = skeleton.first_token_s
    answer.timings.first_expansion_token_s = run.first_expansion_token_s
    return answer
