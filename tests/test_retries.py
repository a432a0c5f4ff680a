"""Each retry rule against real HTTP faults; gaps are measured on the server's clock."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from _fakes import Fault, Reply, SeenRequest, sot_script

import sot

pytestmark = pytest.mark.anyio

POINTS = ["Alpha point", "Beta point", "Gamma point"]


def faulty_point(
    point: int, faults: list[Reply], full: str = "The full text of the second point."
) -> Callable[[SeenRequest], Reply]:
    """Expansion `point` answers with `faults` first (one per attempt), then with `full`."""
    base = sot_script(POINTS)
    remaining = list(faults)

    def handler(request: SeenRequest) -> Reply:
        if request.kind == "expand" and request.point == point:
            return remaining.pop(0) if remaining else Reply(full)
        return base(request)

    return handler


def attempts(server, point: int) -> list[SeenRequest]:
    return [r for r in server.of_kind("expand") if r.point == point]


async def ask(server, **options) -> sot.Answer:
    return await sot.ask("q", base_url=server.url, model="m", mode="sot", **options)


async def test_429_retry_after_is_honoured(fake) -> None:
    server = fake(faulty_point(2, [Reply(status=429, headers={"Retry-After": "1"})]))
    answer = await ask(server)
    first, second = attempts(server, 2)
    assert second.received_at - (first.finished_at or 0) >= 1.0
    assert answer.expansions[1] == "The full text of the second point."
    assert [c.attempts for c in answer.calls if c.index == 1] == [2]


async def test_retry_after_ms_is_honoured(fake) -> None:
    server = fake(faulty_point(2, [Reply(status=503, headers={"retry-after-ms": "700"})]))
    await ask(server)
    first, second = attempts(server, 2)
    assert second.received_at - (first.finished_at or 0) >= 0.7


async def test_retry_after_beyond_the_cap_fails_fast(fake) -> None:
    server = fake(faulty_point(2, [Reply(status=429, headers={"Retry-After": "3600"})]))
    started = time.monotonic()
    with pytest.raises(sot.PointError) as info:
        await ask(server)
    assert isinstance(info.value.cause, sot.RateLimitError)
    assert len(attempts(server, 2)) == 1 and time.monotonic() - started < 5


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
async def test_retryable_statuses_are_retried(fake, status: int) -> None:
    server = fake(faulty_point(2, [Reply(status=status)]))
    answer = await ask(server)
    assert len(attempts(server, 2)) == 2
    assert answer.expansions[1] == "The full text of the second point."


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_never_retried(fake, status: int) -> None:
    server = fake(faulty_point(2, [Reply(status=status)] * 3))
    with pytest.raises(sot.PointError) as info:
        await ask(server)
    assert len(attempts(server, 2)) == 1
    assert isinstance(info.value.cause, sot.AuthenticationError if status in (401, 403) else sot.BadRequestError)
    assert info.value.index == 1 and "Beta point" in str(info.value)


@pytest.mark.parametrize("fault", ["reset", "malformed", "cut"])
async def test_broken_streams_are_retried_without_duplicated_text(fake, fault: Fault) -> None:
    server = fake(faulty_point(2, [Reply("The full text of the second point.", fault=fault, fault_after=3)]))
    answer = await ask(server)
    assert len(attempts(server, 2)) == 2
    assert answer.expansions[1] == "The full text of the second point."
    assert answer.text.count("The full text") == 1


async def test_reset_before_any_response_is_retried(fake) -> None:
    server = fake(faulty_point(2, [Reply(fault="reset")]))
    answer = await ask(server)
    assert len(attempts(server, 2)) == 2 and answer.failed_points == []


async def test_a_stalled_stream_is_retried_on_the_stall_deadline(fake) -> None:
    stall = Reply("slow words keep", fault="stall", fault_after=2)
    server = fake(faulty_point(2, [stall, stall, stall]))
    started = time.monotonic()
    with pytest.raises(sot.PointError) as info:
        await ask(server, timeout=30, stall_timeout=0.4, max_retries=1)
    elapsed = time.monotonic() - started
    assert isinstance(info.value.cause, sot.BackendTimeoutError)
    assert "stalled" in str(info.value)
    assert len(attempts(server, 2)) == 2
    assert 0.8 <= elapsed < 10.0


async def test_a_slow_but_steady_stream_hits_the_total_deadline_and_is_not_restarted(fake) -> None:
    # Chunks every 0.1 s would reset a read timeout forever; the total deadline still ends it, and a
    # stream that was producing is not started again from scratch.
    slow = Reply("w " * 100, token_delay=0.1)
    server = fake(faulty_point(2, [slow, slow]))
    with pytest.raises(sot.PointError) as info:
        await ask(server, timeout=0.6, max_retries=1)
    assert isinstance(info.value.cause, sot.BackendTimeoutError)
    assert "'timeout'" in str(info.value) and "timeout" in info.value.options
    assert len(attempts(server, 2)) == 1


async def test_allow_partial_keeps_the_text_written_before_the_total_deadline(fake) -> None:
    slow = Reply("word " * 100, token_delay=0.05)
    server = fake(faulty_point(2, [slow]))
    answer = await ask(server, timeout=0.8, max_retries=1, allow_partial=True)
    assert len(attempts(server, 2)) == 1
    assert answer.expansions[1].startswith("word word") and answer.expansions[1].count("word") < 100


async def test_retries_give_up_after_max_retries(fake) -> None:
    server = fake(faulty_point(2, [Reply(status=500)] * 10))
    with pytest.raises(sot.PointError):
        await ask(server, max_retries=2)
    assert len(attempts(server, 2)) == 3


async def test_partial_policy_keeps_the_title_and_lists_the_point(fake) -> None:
    server = fake(faulty_point(2, [Reply(status=400)]))
    answer = await ask(server, allow_partial=True)
    assert answer.mode == "sot"
    assert answer.failed_points == [1]
    assert answer.expansions[1] == ""  # no text of its own: the JSON does not pass its title off as one
    assert answer.expansions[0] == "Details on Alpha point for point 1."
    assert answer.text.split("\n\n")[2] == "**2. Beta point**"  # under its heading as the other sections are


async def test_a_failing_point_cancels_its_siblings_by_default(fake) -> None:
    base = sot_script(POINTS, expansion_delay=lambda n: 30.0)

    def handler(request: SeenRequest) -> Reply:
        if request.kind == "expand" and request.point == 1:
            return Reply(status=401)
        return base(request)

    server = fake(handler)
    started = time.monotonic()
    with pytest.raises(sot.PointError):
        await ask(server)
    assert time.monotonic() - started < 5
    assert server.wait_for(lambda s: s.in_flight == 0, 2)


async def test_skeleton_failure_is_a_skeleton_error(fake) -> None:
    server = fake(lambda r: Reply(status=404))
    with pytest.raises(sot.SkeletonError):
        await ask(server)
    assert len(server.requests) == 1


async def test_a_cut_skeleton_is_retried_and_points_are_not_duplicated(fake) -> None:
    skeleton = "1. Alpha point\n2. Beta point\n3. Gamma point\n"
    calls = {"n": 0}
    base = sot_script(POINTS)

    def handler(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            calls["n"] += 1
            return Reply(skeleton, fault="reset", fault_after=5) if calls["n"] == 1 else Reply(skeleton)
        return base(request)

    server = fake(handler)
    answer = await ask(server)
    assert answer.points == POINTS
    assert len(server.of_kind("expand")) == 3


@pytest.mark.parametrize("reply", [Reply("Plain text.", finish_reason=None), Reply("Plain text.", stream=False)])
async def test_servers_without_finish_reason_or_streaming_are_understood(fake, reply: Reply) -> None:
    server = fake(lambda request: reply)
    answer = await sot.ask("q", base_url=server.url, model="m", mode="sequential")
    assert answer.text == "Plain text." and len(server.requests) == 1


async def test_a_retried_answer_that_took_another_way_follows_what_was_shown_whole(fake) -> None:
    # Sampling (the server's default temperature) makes a retry write other words: what was already
    # shown stays, and the retried answer follows it whole, never spliced in at the same character.
    first, second = "Boil the water first, then lower the egg.", "Put the egg in cold water and heat it."
    replies = [Reply(first, fault="reset", fault_after=4), Reply(second)]
    server = fake(lambda request: replies.pop(0))
    shown: list[str] = []
    async with sot.stream("q", base_url=server.url, model="m", mode="sequential") as answer_events:
        async for event in answer_events:
            if isinstance(event, sot.events.AnswerText):
                shown.append(event.text)
            elif isinstance(event, sot.events.AnswerDone):
                answer = event.answer
    assert len(server.requests) == 2
    assert answer.text.startswith("Boil the water first,") and answer.text.endswith("\n\n" + second)
    assert answer.text.count("Boil") == 1
    assert "".join(shown) == answer.text
