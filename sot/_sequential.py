"""A sequential answer: one call, the model's own answer, shown as it streams."""

from __future__ import annotations

from dataclasses import replace

from . import events
from ._loops import LoopWatch, whole_sentences
from ._turn import Setup, Turn, unlooped
from .backends.base import ChatRequest
from .result import Answer, CallRecord


async def answer_sequentially(setup: Setup, turn: Turn, reason: str, calls: list[CallRecord]) -> Answer:
    """The answer as one call; `calls` are those made before it (an outline that gave too few points)."""
    opts = setup.options
    request = ChatRequest(
        [*turn.history, *setup.prompts.sequential(turn.question)],
        max_tokens=opts.max_tokens,
        temperature=opts.temperature,
        seed=opts.seed,
        reasoning=opts.reasoning,
        guard_repetition=setup.profile.guards_repetition,
    )
    watch = LoopWatch(hold_sentences=setup.profile.ends_cut_answers_whole)

    def on_delta(text: str) -> None:
        turn.emit(events.TextDelta(text))
        watch.feed(text)
        turn.draft.sequential_delta(text, held=watch.held)

    def on_restart(attempt: int) -> None:
        turn.emit(events.ExpansionRestarted(-1, attempt))
        watch.restart()
        turn.draft.sequential_restart()

    outcome = await turn.caller.call(
        request, purpose="sequential", on_delta=on_delta, on_restart=on_restart, enough=lambda: watch.looping
    )
    outcome = unlooped(outcome, watch)
    if outcome.capped and setup.profile.ends_cut_answers_whole:
        outcome = replace(outcome, text=whole_sentences(outcome.text))
    turn.draft.sequential_final(outcome.text)
    answer = setup.answer(turn.question, "sequential", reason, [*calls, outcome.record])
    answer.text = turn.draft.text
    answer.timings.first_token_s = outcome.record.first_token_s
    answer.timings.first_content_s = outcome.record.first_token_s
    return answer
