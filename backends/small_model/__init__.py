"""The profile of small local models such as the bundled SmolLM2-135M (``profile="small"``).

A 135M model writes fragments and repeats for titles, echoes its prompt, loops, and at times takes
the start of its point for the whole of it. Its profile carries the repairs measured on it: an
outline read with English word rules and constrained by the skeleton grammar, its first five distinct
points kept and the outline asked for again where too few stand, an expansion prompt that shows the
point alone and leads with its start, the echo cleaned out of each expansion, and a point left empty
or said twice asked for again. The embedded server picks this profile for its bundled model; any
other model gets it only by asking (``--profile small``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Final

from sot._sanitize import sanitize
from sot._shape import SkeletonShape
from sot.calls import CallOutcome
from sot.errors import SotError
from sot.profiles import BRIEF, ExpandCall, OutlineReader, PointJob, Style
from sot.templates import EXPAND_SMALL

from ._outline import SkeletonParser
from ._tidy import says_again, talks_about_task, tidy_expansion

log = logging.getLogger("sot.orchestrator")

# Of the points asked for, the first this many distinct ones are kept: past the fifth, its points mostly
# restate earlier ones: about half of its answers with a clear repeat had it only in a point after the
# fifth. Asking for 3 to 5 instead is no way out: asked for so few, it at times writes an outline of only
# 2 distinct points (asked for 10, it does not).
KEPT_POINTS: Final = 5
# Outlines asked for after the first while too few distinct points stand (each with the next seed).
MORE_LOOKS: Final = 2
# Warm enough to leave a recitation; cooler than 0.8, where about a third of such texts talk about the
# request (0.4 still does at times: such a text is not taken).
SAMPLED_POINT_TEMPERATURE: Final = 0.4
# A small model's expansion is one paragraph: past a blank line it loops.
POINT_STOP: Final = ("\n\n",)


class SmallModelProfile:
    name = "small"
    constrains_outline = True
    more_outlines = MORE_LOOKS
    # No text is no fault: its lead may be the whole point (then it is asked once more, unled).
    requires_text = False
    # Its plain answers loop ("rain, rain, rain ...") until the token limit: the server's DRY sampler is asked.
    guards_repetition = True
    # ... and a story of its runs on to the limit mid-sentence: what it wrote ends at its last whole one.
    ends_cut_answers_whole = True

    def kept_points(self, asked: int) -> int:
        return min(KEPT_POINTS, asked)

    def style(self, brief: bool) -> Style:
        # Always brief: a 135M model asked for sections of a normal answer's length loops through them.
        return replace(BRIEF, expansion_template=EXPAND_SMALL)

    def outline_reader(self, shape: SkeletonShape, question: str) -> OutlineReader:
        return SkeletonParser(shape=shape, strict=True, question=question)

    def expansion_stop(self, index: int, lead: bool) -> tuple[str, ...]:
        # Led by "2. Title:", a small model goes on to "3. ..." unless stopped there.
        return (*POINT_STOP, f"\n{index + 2}.") if lead else POINT_STOP

    async def expand(self, job: PointJob, call: ExpandCall) -> str:
        text = _tidy(await call(lead=True), job)
        if text and says_again(text, job.others()):
            # Two points expanded alike read as one point said twice: the one that finished later is
            # asked once more, as an empty one is. (No await may come between the last such check and
            # the orchestrator's write of the text, or both points could keep it.)
            log.info("point %d: its expansion says what another point's did; asking once more", job.index + 1)
            text = ""
        return text or await _unled(job, call)


def _tidy(outcome: CallOutcome, job: PointJob) -> str:
    """An expansion that was only a lead-in ("Sure, here is ...:") or an echo of the prompt is dropped:
    the point shows its title."""
    instructions = list(job.instructions)
    text = tidy_expansion(
        outcome.text, job.title, job.index, list(job.points), instructions, job.question, outcome.capped
    )
    return sanitize(text)


async def _unled(job: PointJob, call: ExpandCall) -> str:
    """Led, a small model may take its lead for the whole point and stop, recite, or say what another
    point said: asked once more without the lead, it writes something of its own; where greedy decoding
    only recites the title again ("The answer is: <title>"), once more sampled, and a sampled text that
    talks about points, answers or the request at all is not taken (it wanders there). Optional: if those
    calls fail, say nothing or say again what another point said, the point shows its title."""
    # Sampled once more only after greedy tries: where the calls were sampled already, a cooler sample
    # is no way out of a recitation.
    for sample_at in (None, SAMPLED_POINT_TEMPERATURE) if job.temperature == 0 else (None,):
        try:
            outcome = await call(sample_at=sample_at)
        except SotError as exc:
            log.info("point %d: a try without the lead failed (%s); showing its title", job.index + 1, exc)
            return ""
        text = _tidy(outcome, job)
        sampled = sample_at is not None
        if (
            text
            and not (sampled and talks_about_task(text, job.title, job.question))
            and not says_again(text, job.others())
        ):
            return text
    return ""


__all__ = ["KEPT_POINTS", "SmallModelProfile"]
