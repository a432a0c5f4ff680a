"""The embedded model's own ways: more outlines while the last repeats itself, and an expansion its
lead left empty asked for once more, unled. Driven in-process with MockBackend."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from _fakes import sot_script
from tests_support import request_kind

import sot
from sot import constants
from sot.backends import small_model
from sot.backends.base import ChatChunk, ChatRequest
from sot.backends.mock import MockBackend
from sot.errors import ServerError
from sot.result import Usage

pytestmark = pytest.mark.anyio


def is_skeleton(request: ChatRequest) -> bool:
    return request_kind(request) == "skeleton"


async def test_an_outline_of_repeats_is_asked_for_once_more_and_extended() -> None:
    outlines = iter(["1. Sleep well\n2. Sleep well\n3. Sleep well.\n", "1. Sleep well\n2. Eat greens\n3. Walk daily\n"])

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield next(outlines) if is_skeleton(request) else "Some text."

    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot", temperature=0, profile="small").ask("How do I stay healthy?")
    skeletons = [r for r in backend.requests if is_skeleton(r)]
    assert answer.mode == "sot" and answer.points == ["Sleep well", "Eat greens", "Walk daily"]
    assert [r.temperature for r in skeletons] == [0, constants.SECOND_LOOK_TEMPERATURE]
    assert skeletons[1].seed == constants.SECOND_LOOK_SEED
    assert len([c for c in answer.calls if c.purpose == "skeleton"]) == 2


REPEATS = "1. Sleep well\n2. Sleep well\n3. Sleep well.\n"


def outline_requests(backend: MockBackend) -> list[tuple[float | None, int | None]]:
    return [(r.temperature, r.seed) for r in backend.requests if is_skeleton(r)]


async def test_an_outline_still_short_of_points_is_asked_for_again_with_the_next_seed() -> None:
    outlines = iter([REPEATS, "1. Sleep well\n2. Sleep well.\n3. Sleep well!\n", "1. Eat greens\n2. Walk daily\n"])

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield next(outlines) if is_skeleton(request) else "Some text."

    backend = MockBackend(handler)
    client = sot.Client(backend=backend, mode="sot", temperature=0, profile="small")
    answer = await client.ask("How do I stay healthy?")
    assert answer.mode == "sot" and answer.points == ["Sleep well", "Eat greens", "Walk daily"]
    assert outline_requests(backend) == [(0, None), (0.8, 1), (0.8, 2)]
    assert len([c for c in answer.calls if c.purpose == "skeleton"]) == 3
    outlines_s = [c for c in answer.calls if c.purpose == "skeleton"]
    assert answer.timings.skeleton_s == outlines_s[-1].end_s - outlines_s[0].start_s  # every outline waited for


async def test_outlines_are_asked_for_again_a_bounded_number_of_times() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield REPEATS if is_skeleton(request) else "Some text."

    small = MockBackend(handler)
    answer = await sot.Client(backend=small, mode="sot", temperature=0, profile="small").ask("How to stay healthy?")
    assert len(outline_requests(small)) == 3
    assert answer.mode == "sequential"  # one usable point: a plain answer
    # The generic profile makes exactly one outline call per answer.
    remote = MockBackend(handler)
    await sot.Client(backend=remote, mode="sot", temperature=0).ask("How to stay healthy?")
    assert len(outline_requests(remote)) == 1


TEN = "".join(
    f"{n}. {title}\n"
    for n, title in enumerate(
        [
            "Sleep well",
            "Eat greens",
            "Walk daily",
            "Drink water",
            "See friends",
            "Read books",
            "Cook at home",
            "Stretch daily",
            "Limit screens",
            "Keep a diary",
        ],
        start=1,
    )
)


@pytest.mark.parametrize(
    ("small", "max_points", "kept"),
    # (a strong model asked for at most 6 sections that plans 10 keeps all 10: its plan is its answer)
    [(True, None, small_model.KEPT_POINTS), (True, 8, 8), (False, None, constants.DEFAULT_MAX_POINTS)],
)
async def test_the_embedded_model_keeps_the_first_points_of_the_outline_it_is_asked_for(
    small: bool, max_points: int | None, kept: int
) -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield TEN if is_skeleton(request) else "Some text."

    backend = MockBackend(handler)
    client = sot.Client(
        backend=backend, mode="sot", temperature=0, profile="small" if small else "generic", max_points=max_points
    )
    answer = await client.ask("How do I stay healthy?")
    assert answer.points == [line.split(". ", 1)[1] for line in TEN.splitlines()][:kept]
    assert len(answer.expansions) == kept and len(outline_requests(backend)) == 1
    # The outline asked for is the usual one (or the user's): only what is kept differs.
    asked = max_points or (constants.DEFAULT_MAX_POINTS if small else constants.PLAN_MAX_SECTIONS)
    skeleton = next(r for r in backend.requests if is_skeleton(r))
    # (a strong model is asked for a plan of sections; the small profile for short points)
    assert f"of 3 to {asked} points" in str(skeleton.messages[-1].content) or f"as 3 to {asked} sections" in str(
        skeleton.messages[-1].content
    )
    grammar = skeleton.constraint.gbnf if skeleton.constraint else None
    if not small:  # the grammar is the small profile's: a strong model's outline is read as written
        assert grammar is None
        return
    assert grammar is not None and f'"{asked}. " point' in grammar and f'"{asked + 1}. "' not in grammar


async def test_an_outline_is_left_once_every_point_it_may_keep_is_read() -> None:
    pulled: list[str] = []

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        for line in TEN.splitlines(keepends=True) if is_skeleton(request) else ["Some text."]:
            pulled.append(line)
            yield line

    client = sot.Client(backend=MockBackend(handler), mode="sot", temperature=0, profile="small")
    answer = await client.ask("How do I stay healthy?")
    kept = small_model.KEPT_POINTS
    assert len(answer.points) == kept
    # The stream is closed after the line that filled the outline: the server stops writing it.
    assert [line for line in pulled if line[0].isdigit()] == TEN.splitlines(keepends=True)[:kept]
    skeleton = next(c for c in answer.calls if c.purpose == "skeleton")
    assert skeleton.left_early and not any(c.left_early for c in answer.calls if c.purpose != "skeleton")


async def test_an_outline_whose_points_are_all_kept_is_read_to_its_end_and_its_usage() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str | ChatChunk]:
        if is_skeleton(request):
            for line in TEN.splitlines(keepends=True):
                yield line
            yield ChatChunk(finish_reason="stop", usage=Usage(prompt_tokens=50, completion_tokens=40))
        else:
            yield "Some text."

    answer = await sot.Client(backend=MockBackend(handler), mode="sot", temperature=0).ask("How do I stay healthy?")
    skeleton = next(c for c in answer.calls if c.purpose == "skeleton")
    assert len(answer.points) == constants.DEFAULT_MAX_POINTS and not skeleton.left_early
    assert skeleton.usage is not None and skeleton.usage.completion_tokens == 40


async def test_another_outline_never_repeats_the_users_own_request() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield REPEATS if is_skeleton(request) else "Some text."

    backend = MockBackend(handler)
    await sot.Client(backend=backend, mode="sot", temperature=0.8, seed=7, profile="small").ask("How to stay healthy?")
    assert outline_requests(backend) == [(0.8, 7), (0.8, 8), (0.8, 9)]


async def test_an_outline_of_two_points_on_purpose_is_not_asked_again() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield "1. Pros\n2. Cons\n" if is_skeleton(request) else "Some text."

    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot").ask("Pros and cons of tea?")
    assert answer.points == ["Pros", "Cons"]
    assert len([r for r in backend.requests if is_skeleton(r)]) == 1


@pytest.mark.parametrize("unled", ["Greens feed you.", "", "error"])
async def test_an_expansion_its_lead_left_empty_is_asked_once_more_unled(unled: str) -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if is_skeleton(request):
            yield "1. Sleep well\n2. Eat greens\n3. Walk daily\n"
        elif request.messages[-1].role == "assistant":  # led: "2. Eat greens:"
            yield "Sleep more." if request.messages[-1].content.startswith("1.") else ""
        elif unled == "error":
            raise ServerError("the server failed", status_code=500)
        elif unled and "Walk daily" in request.messages[-1].content:
            yield "Walking helps."  # (the same text as point 2's would be asked for once more)
        else:
            yield unled

    backend = MockBackend(handler)
    client = sot.Client(backend=backend, mode="sot", profile="small", max_retries=0, temperature=0)
    answer = await client.ask("How do I stay healthy?")
    # The unled answer where there is one; else the title, as before: the second try never fails the answer.
    expected = "Greens feed you." if unled == "Greens feed you." else ""
    assert answer.expansions[0] == "Sleep more." and answer.failed_points == []
    assert answer.expansions[1] == expected  # empty where the point has no text of its own
    assert answer.text.splitlines()[1] == ("2. Eat greens: Greens feed you." if expected else "2. Eat greens")
    unled_calls = [r for r in backend.requests if not is_skeleton(r) and r.messages[-1].role != "assistant"]
    # Points 2 and 3 were empty when led; where greedy unled said nothing too, each is asked once more,
    # sampled; a failure ends the tries.
    greedy = [r for r in unled_calls if r.temperature != small_model.SAMPLED_POINT_TEMPERATURE]
    sampled = [r for r in unled_calls if r.temperature == small_model.SAMPLED_POINT_TEMPERATURE]
    assert len(greedy) == 2 and len(sampled) == (2 if unled == "" else 0)
    if unled == "":
        assert [r.seed for r in sampled] == [constants.SECOND_LOOK_SEED] * 2


# Outside checks AM-AP: two points of one answer expanded word for word alike.
# Where the greedy try without the lead says it again too, a sampled one follows.
@pytest.mark.parametrize(
    ("said", "again"),
    [
        ("Rest and eat well every day.", False),
        ("Rest and eat well every day.", True),
    ],
)
async def test_an_expansion_that_says_what_another_point_said_is_asked_once_more(said: str, again: bool) -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if is_skeleton(request):
            yield "1. Sleep well\n2. Eat greens\n3. Walk daily\n"
            return
        title = next(t for t in ("Sleep well", "Eat greens", "Walk daily") if t in request.messages[-1].content)
        led = request.messages[-1].role == "assistant"
        sampled = request.temperature == small_model.SAMPLED_POINT_TEMPERATURE
        yield said.format(title=title) if led or (again and not sampled) else f"Only this on {title}."

    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot", profile="small", temperature=0).ask("How to stay healthy?")
    kept = [e for e, t in zip(answer.expansions, answer.points, strict=True) if e == said.format(title=t)]
    retold = [e for e, t in zip(answer.expansions, answer.points, strict=True) if e == f"Only this on {t}."]
    # The first to finish keeps its text; each of the others is asked once more, unled, and says its own.
    assert len(kept) == 1 and len(retold) == 2
    unled = [r for r in backend.requests if not is_skeleton(r) and r.messages[-1].role != "assistant"]
    assert len(unled) == (4 if again else 2)
    assert len([r for r in unled if r.temperature == small_model.SAMPLED_POINT_TEMPERATURE]) == (2 if again else 0)
    assert [line.split(": ", 1)[1] for line in answer.text.splitlines()] == answer.expansions


async def test_expansions_of_their_own_are_not_asked_again() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if is_skeleton(request):
            yield "1. Sleep well\n2. Eat greens\n3. Walk daily\n"
        else:  # a small model opens many distinct expansions alike, restating the question
            title = next(t for t in ("Sleep well", "Eat greens", "Walk daily") if t in request.messages[-1].content)
            yield f"To stay healthy and fit, it is important to {title.lower()} every day."

    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot", profile="small", temperature=0).ask("How to stay healthy?")
    assert len(set(answer.expansions)) == 3 and all(answer.expansions)
    assert len([r for r in backend.requests if not is_skeleton(r)]) == 3


async def test_the_small_model_prompts_reach_a_real_server_and_its_answer_reads_right(fake) -> None:
    # Over HTTP, as the embedded server is driven: each expansion names its own point only and
    # leads with "N. Title:", which the server's reply (here, as llama.cpp's does) continues.
    server = fake(sot_script(["Sleep well", "Eat greens", "Walk daily"]))
    async with sot.Client(base_url=server.url, model="m", mode="sot", profile="small", pipeline=False) as client:
        answer = await client.ask("How do I stay healthy?")
    expands = server.of_kind("expand")
    assert sorted(r.point or 0 for r in expands) == [1, 2, 3]
    for request in expands:
        prompt = request.prompt
        others = {"Sleep well", "Eat greens", "Walk daily"} - {request.title}
        assert f"The point to write: {request.title}" in prompt and not any(o in prompt for o in others)
        assert request.body["messages"][-1] == {"role": "assistant", "content": f"{request.point}. {request.title}:"}
    assert answer.text.splitlines()[1] == "2. Eat greens: Details on Eat greens for point 2."


# Outside check Q: greedy, the embedded model answered "The answer is: <title>" led and unled alike;
# check S: sampled, it once wrote "Referring to an answer, the point is: ...", which is not taken.
@pytest.mark.parametrize(
    ("title", "sampled", "shown"),
    [
        ("Eat greens", "Greens feed you.", "Greens feed you."),
        ("Eat greens", "As a point for the answer, greens matter.", ""),
        # Its title's words are no talk about the task.
        (
            "Answer the question",
            "Answer the question you were asked, then stop.",
            "Answer the question you were asked, then stop.",
        ),
    ],
)
async def test_a_point_greedy_decoding_only_recites_is_written_sampled(title: str, sampled: str, shown: str) -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if is_skeleton(request):
            yield f"1. Sleep well\n2. {title}\n3. Walk daily\n"
        elif request.temperature == small_model.SAMPLED_POINT_TEMPERATURE:
            yield sampled
        else:
            content = request.messages[-1].content
            yield f"The answer is: {title}" if title in content else ("Do it." if "Sleep" in content else "Walk.")

    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot", profile="small", temperature=0).ask("How to stay healthy?")
    assert answer.expansions == ["Do it.", shown, "Walk."]
    assert answer.text.splitlines()[1] == (f"2. {title}: {shown}" if shown else f"2. {title}")
    # Where the calls were sampled already (no temperature: the server's own), no cooler sample follows.
    backend = MockBackend(handler)
    answer = await sot.Client(backend=backend, mode="sot", profile="small").ask("How to stay healthy?")
    assert answer.expansions[1] == ""
    assert not [r for r in backend.requests if r.temperature == small_model.SAMPLED_POINT_TEMPERATURE]
