"""Races forced deterministically with the in-process MockBackend: events, not sleeps, order the calls."""

from __future__ import annotations

import pickle
import re
from collections.abc import AsyncIterator, Callable

import anyio
import pytest
from _fakes import FakeServer, Handler, sot_script
from tests_support import request_kind

import sot
from sot import events
from sot.backends.base import ChatRequest
from sot.backends.mock import MockBackend
from sot.errors import AuthenticationError, ProtocolError, RateLimitError, point_error

pytestmark = pytest.mark.anyio

TITLES = ["Alpha", "Beta", "Gamma"]
OUTLINE = "".join(f"{i}. {t}\n" for i, t in enumerate(TITLES, 1))


def kind(request: ChatRequest) -> str:
    return request_kind(request)


def point_of(request: ChatRequest) -> int:
    """The point an expansion is for (0-based): the number its prompt asks to write."""
    asked = re.search(r"^Write point (\d+) only", request.messages[-1].content, re.MULTILINE)
    assert asked is not None
    return int(asked.group(1)) - 1


async def collect(client: sot.Client) -> list[events.Event]:
    seen: list[events.Event] = []
    async with client.stream("q") as answer_events:
        async for event in answer_events:
            seen.append(event)
    return seen


def committed(seen: list[events.Event]) -> str:
    return "".join(e.text for e in seen if isinstance(e, events.AnswerText))


async def test_points_finishing_in_reverse_are_committed_in_order() -> None:
    done = {i: anyio.Event() for i in range(3)}

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield OUTLINE
            return
        i = point_of(request)
        if i < 2:
            await done[i + 1].wait()  # point 3 first, then 2, then 1
        yield f"text {i + 1}."
        done[i].set()

    async with sot.Client(backend=MockBackend(handler), mode="sot") as client:
        seen = await collect(client)
    finished = [e.index for e in seen if isinstance(e, events.PointDone)]
    assert finished == [2, 1, 0]
    pieces = [e.text for e in seen if isinstance(e, events.AnswerText)]
    assert pieces == ["**1. Alpha**\n\ntext 1.", "\n\n**2. Beta**\n\ntext 2.", "\n\n**3. Gamma**\n\ntext 3."]
    assert committed(seen) == seen[-1].answer.text  # type: ignore[union-attr]


async def test_a_retry_of_point_1_while_point_2_is_done_shows_point_1_once() -> None:
    point_2_done = anyio.Event()
    attempts = {0: 0}

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield OUTLINE
            return
        i = point_of(request)
        if i == 0:
            attempts[0] += 1
            await point_2_done.wait()
            yield "half of the first "
            if attempts[0] == 1:
                raise ProtocolError("the stream was cut")
            yield "answer."
            return
        yield f"text {i + 1}."
        if i == 1:
            point_2_done.set()

    async with sot.Client(backend=MockBackend(handler), mode="sot", max_retries=2) as client:
        seen = await collect(client)
    assert attempts[0] == 2
    assert any(isinstance(e, events.ExpansionRestarted) and e.index == 0 for e in seen)
    text = committed(seen)
    assert text.count("half of the first") == 1
    assert text.split("\n\n")[:2] == ["**1. Alpha**", "half of the first answer."]


async def test_a_section_starts_once_the_next_heading_is_settled_and_is_shown_that_heading_alone() -> None:
    first_asked = anyio.Event()
    prompts: dict[int, str] = {}

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield "1. Alpha: the first part\n2. Be"
            yield "ta: the sec"  # the heading can no longer change: point 1 starts before line 2 ends
            await first_asked.wait()
            yield "ond part\n3. Gamma: the third part\n"
            return
        i = point_of(request)
        prompts[i] = request.messages[-1].content
        if i == 0:
            first_asked.set()
        yield f"text {i + 1}."

    with anyio.fail_after(10):  # a section that waited for its next line would never be asked
        async with sot.Client(backend=MockBackend(handler), mode="sot") as client:
            answer = await client.ask("q")
    assert answer.expansions == ["text 1.", "text 2.", "text 3."]
    assert "1. Alpha: the first part\n2. Beta\n" in prompts[0] and "3." not in prompts[0]
    assert "2. Beta: the second part\n3. Gamma\n" in prompts[1]
    assert "3. Gamma: the third part\n" in prompts[2]


async def test_at_the_cap_the_last_kept_section_starts_before_the_outline_ends() -> None:
    last_asked = anyio.Event()

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield "1. Alpha: a\n2. Beta: b\n3. Gamma: c\n4. Delta: d"
            await last_asked.wait()  # the model writes on past the points kept
            yield "\n5. Epsilon: e\n"
            return
        if point_of(request) == 2:
            last_asked.set()
        yield f"text {point_of(request) + 1}."

    with anyio.fail_after(10):
        async with sot.Client(backend=MockBackend(handler), mode="sot", max_points=3) as client:
            answer = await client.ask("q")
    assert answer.points == ["Alpha", "Beta", "Gamma"] and answer.expansions[2] == "text 3."


async def test_a_retried_outline_that_goes_another_way_after_a_heading_was_shown_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outlines = ["1. Alpha: a\n2. Beta: b\n3. Gamma: c", "1. Alpha: a\n2. Beta: b\n3. Delta: d\n"]
    shown: dict[int, str] = {}

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield outlines.pop(0)
            if outlines:
                raise ProtocolError("the stream was cut")
            return
        shown.setdefault(point_of(request), request.messages[-1].content)
        yield f"text {point_of(request) + 1}."

    caplog.set_level("INFO", logger="sot")
    async with sot.Client(backend=MockBackend(handler), mode="sot", max_retries=2) as client:
        answer = await client.ask("q")
    assert answer.points == ["Alpha", "Beta", "Delta"]
    assert "3. Gamma\n" in shown[1]  # section 2 keeps the prompt it was sent
    assert "section 2 was shown 'Gamma' next; the outline has 'Delta'" in caplog.text


async def test_a_pipelined_point_then_a_fallback_leaves_only_the_sequential_answer() -> None:
    expanded = anyio.Event()

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield "1. Lonely point\n2."  # the next item's marker completes point 1
            await expanded.wait()  # the expansion is final before the skeleton ends
            yield "\nNothing else."
            return
        if kind(request) == "expand":
            yield "An expansion that must not show."
            expanded.set()
            return
        yield "The sequential answer."

    # Brief points start as their line completes (full sections wait for the next one's heading).
    async with sot.Client(backend=MockBackend(handler), mode="sot", brief=True) as client:
        seen = await collect(client)
    answer = seen[-1].answer  # type: ignore[union-attr]
    assert answer.mode == "sequential"
    assert committed(seen) == answer.text == "The sequential answer."


async def test_leaving_stream_after_its_first_event_cancels_the_calls_in_flight() -> None:
    started = anyio.Event()
    closed: list[str] = []

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        try:
            started.set()
            yield "1. One\n"
            await anyio.sleep_forever()
            yield ""
        finally:
            closed.append(kind(request))

    async with sot.Client(backend=MockBackend(handler), mode="sot") as client:
        async with client.stream("q") as answer_events:
            async for _ in answer_events:
                break
        assert started.is_set()
    assert closed and all(k in ("skeleton", "expand") for k in closed)
    assert len(closed) == len(client_requests(client))


def client_requests(client: sot.Client) -> list[ChatRequest]:
    backend = client._backend
    assert isinstance(backend, MockBackend)
    return backend.requests


async def test_leaving_stream_early_closes_every_connection_to_a_real_server(
    fake: Callable[[Handler], FakeServer],
) -> None:
    server = fake(sot_script(expansion_delay=lambda n: 30.0))
    async with sot.Client(base_url=server.url, model="m", mode="sot") as client:
        async with client.stream("q") as answer_events:
            async for event in answer_events:
                if isinstance(event, events.ExpansionStarted):
                    break
        assert await anyio.to_thread.run_sync(lambda: server.wait_for(lambda s: s.in_flight == 0, timeout=5.0))


async def test_iterating_a_stream_without_entering_it_says_how() -> None:
    client = sot.Client(backend=MockBackend(lambda request: _empty()))
    with pytest.raises(TypeError, match="async with"):
        async for _ in client.stream("q"):
            pass


async def _empty() -> AsyncIterator[str]:
    yield ""


async def test_a_rate_limited_expansion_is_a_rate_limit_error_and_a_point_error() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            yield OUTLINE
            return
        if point_of(request) == 1:
            raise RateLimitError("rate limited (429)", retry_after=120.0)
        yield "fine."

    async with sot.Client(backend=MockBackend(handler), mode="sot", max_retries=0) as client:
        with pytest.raises(RateLimitError) as caught:
            await client.ask("q")
    error = caught.value
    assert isinstance(error, sot.PointError) and error.index == 1 and error.title == "Beta"
    assert error.exit_code == RateLimitError.exit_code and error.retry_after == 120.0
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, RateLimitError) and isinstance(again, sot.PointError)
    assert (again.index, again.retry_after, str(again)) == (1, 120.0, str(error))


@pytest.mark.parametrize("failing", ["skeleton", "expand", "sequential"])
async def test_one_bad_key_exits_the_same_whichever_call_meets_it(failing: str) -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == failing:
            raise AuthenticationError("the server refused the API key (401)", status_code=401)
        yield OUTLINE if kind(request) == "skeleton" else "fine."

    mode = "sequential" if failing == "sequential" else "sot"
    async with sot.Client(backend=MockBackend(handler), mode=mode) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.ask("q")
    assert caught.value.exit_code == AuthenticationError.exit_code


def test_staged_errors_pickle_without_their_class_existing_yet() -> None:
    error = point_error(0, "t", RateLimitError("slow down", retry_after=2.0))
    data = pickle.dumps(error)
    assert pickle.loads(data).retry_after == 2.0
    assert pickle.loads(pickle.dumps(sot.PointError(2, "x", ValueError("y")))).index == 2


async def test_an_error_in_the_consumers_block_comes_out_as_it_is() -> None:
    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        yield OUTLINE if kind(request) == "skeleton" else "fine."

    async with sot.Client(backend=MockBackend(handler), mode="sot") as client:
        with pytest.raises(KeyError):
            async with client.stream("q") as answer_events:
                async for _ in answer_events:
                    raise KeyError("mine")


async def test_a_skeleton_retry_continues_the_outline_by_position_without_repeats() -> None:
    attempts: list[int] = []

    async def handler(request: ChatRequest) -> AsyncIterator[str]:
        if kind(request) == "skeleton":
            attempts.append(1)
            if len(attempts) == 1:
                yield "1. Alpha\n2. Beta\n3. Gam"
                raise ProtocolError("the stream was cut")
            yield "1. Other first\n2. Beta\n3. Gamma\n4. Alpha\n5. Delta\n"
            return
        yield "text."

    async with sot.Client(backend=MockBackend(handler), mode="sot", max_retries=1) as client:
        answer = await client.ask("q")
    assert len(attempts) == 2
    # The kept points stand; the retry's first two retell them; past them, only what is new.
    assert answer.points == ["Alpha", "Beta", "Gamma", "Delta"]
