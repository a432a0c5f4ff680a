"""One point's expansion: its prompt, its calls (as many as the profile asks for), its end."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import anyio

from . import constants, events
from ._loops import LoopWatch
from ._sanitize import sanitize
from ._turn import Setup, SotRun, Turn, log, unlooped
from .backends.base import ChatRequest
from .calls import CallOutcome
from .errors import SotError, point_error
from .profiles import PointJob
from .result import CallRecord


@dataclass
class _Tries:
    """The calls made for one point so far, and their attempts (retries included)."""

    calls: int = 0
    attempts: int = 0


@dataclass(frozen=True)
class Expansion:
    """Where one point's expansion runs: its answer, the point, the outline it sees, its bounds."""

    setup: Setup
    turn: Turn
    run: SotRun
    index: int
    shown: Shown
    scope: anyio.CancelScope  # cancelled where a failed point sinks the answer

    @property
    def points(self) -> list[str]:
        return self.shown.points


@dataclass(frozen=True)
class Shown:
    """The outline as one point's prompt shows it: its titles, and what it said of each beyond them."""

    points: list[str]
    details: list[str]


async def expand(
    setup: Setup,
    turn: Turn,
    run: SotRun,
    index: int,
    shown: Shown,
    limiter: anyio.CapacityLimiter,
    scope: anyio.CancelScope,
) -> None:
    """Expand point `index`, then settle it in the draft (or fail it: see ``_point_failed``)."""
    job = Expansion(setup, turn, run, index, shown, scope)
    call = _Caller(job)
    async with limiter:
        turn.emit(events.ExpansionStarted(index))
        start_s = turn.caller.now()
        try:
            text = sanitize(await setup.profile.expand(_point_job(job), call))
        except SotError as exc:
            failed = CallRecord("expand", index, 0, start_s, turn.caller.now(), None, None, error=str(exc))
            _point_failed(job, exc, failed)
            return
    if not text:
        log.info("point %d: no text of its own; showing its title", index + 1)
    run.expansions[index] = text
    turn.emit(events.PointDone(index, text))
    turn.draft.point_final(index, text)


class _Caller:
    """The profile's way to call the model for one point: every call streams, is watched for loops and
    recorded; a call after the first takes back what the last one showed."""

    def __init__(self, job: Expansion) -> None:
        self.job = job
        self.tries = _Tries()
        self.watch = LoopWatch(shown_live=False)

    def on_delta(self, text: str) -> None:
        run = self.job.run
        if run.first_expansion_token_s is None:
            run.first_expansion_token_s = self.job.turn.caller.now()
        self.watch.feed(text)
        self.job.turn.emit(events.ExpansionDelta(self.job.index, text))

    def on_restart(self, attempt: int) -> None:
        self.watch.restart()
        self.job.turn.emit(events.ExpansionRestarted(self.job.index, attempt))

    async def __call__(self, *, lead: bool = False, sample_at: float | None = None) -> CallOutcome:
        job = self.job
        if self.tries.calls:  # the profile asks again: what the last call showed is taken back
            self.on_restart(self.tries.attempts + 1)
        outcome = await job.turn.caller.call(
            _request(job, lead, sample_at),
            purpose="expand",
            index=job.index,
            on_delta=self.on_delta,
            on_restart=self.on_restart,
            require_text=job.setup.profile.requires_text,
            enough=lambda: self.watch.looping,
        )
        outcome = unlooped(outcome, self.watch)
        self.tries.calls += 1
        self.tries.attempts += outcome.record.attempts
        self.job.run.records.append(outcome.record)
        return outcome


def _request(job: Expansion, lead: bool, sample_at: float | None) -> ChatRequest:
    """The point's request (its prompt recorded as sent); sampled at `sample_at` where the profile asks so."""
    setup, run, opts = job.setup, job.run, job.setup.options
    prompt = setup.prompts.expansion(
        job.turn.question,
        job.points,
        job.index,
        template=setup.style.expansion_template,
        lead=lead,
        details=job.shown.details,
        so_far=opts.pipeline,
    )
    messages = [*job.turn.history, *prompt]
    run.prompts_sent.append("\n".join(m.content for m in messages))
    sampled = sample_at is not None
    return ChatRequest(
        messages,
        max_tokens=setup.style.point_max_tokens,
        temperature=sample_at if sampled else opts.temperature,
        seed=constants.SECOND_LOOK_SEED if sampled and opts.seed is None else opts.seed,
        stop=setup.profile.expansion_stop(job.index, lead),
        reasoning=opts.reasoning,
    )


def _point_job(job: Expansion) -> PointJob:
    instructions = job.setup.prompts.expansion_instructions(job.setup.style.expansion_template)
    return PointJob(
        job.turn.question,
        tuple(job.points),
        job.index,
        tuple(instructions),
        functools.partial(job.run.other_expansions, job.index),
        job.setup.options.temperature,
    )


def _point_failed(job: Expansion, exc: SotError, record: CallRecord) -> None:
    """A point that failed after its retries sinks the answer, or, with allow_partial, shows its title."""
    run, index = job.run, job.index
    run.failed[index] = str(exc)
    run.records.append(record)
    job.turn.emit(events.PointDone(index, "", failed=True, error=str(exc)))
    if not job.setup.options.allow_partial and run.error is None:
        run.error = point_error(index, job.points[index], exc)
        job.scope.cancel()
        return
    log.warning("point %d failed and is kept as its title: %s", index + 1, exc)
    job.turn.draft.point_final(index, job.points[index])
