"""The real llama.cpp server with the bundled model, end to end (pinned flags, temperature 0)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests_support import QUESTION, require_binary

import sot
from sot.backends.local import LocalBackend, LocalConfig

pytestmark = [pytest.mark.local, pytest.mark.anyio]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def local() -> AsyncIterator[LocalBackend]:
    require_binary()
    backend = await LocalBackend.start(LocalConfig(slots=4))
    yield backend
    await backend.aclose()


async def test_sot_answer_from_the_real_model(local: LocalBackend) -> None:
    # The options `sot.Client()` sets for the bundled model when it starts the server itself.
    client = sot.Client(
        backend=local.backend,
        mode="sot",
        temperature=0,
        seed=1,
        max_parallel=4,
        profile="small",
    )
    async with client:
        answer = await client.ask(QUESTION)
    assert answer.mode == "sot"
    assert 3 <= len(answer.points) <= 10  # the skeleton grammar allows 3-10 lines (sot/_shape.py)
    assert len({p.casefold() for p in answer.points}) == len(answer.points)
    assert answer.failed_points == []
    # Most points have text of their own; one with none shows its title alone (a 135M model may say
    # nothing once its echo is cleaned away).
    assert sum(bool(e.strip()) for e in answer.expansions) >= len(answer.points) / 2
    lines = answer.text.splitlines()
    for n, (line, point, body) in enumerate(zip(lines, answer.points, answer.expansions, strict=True), 1):
        title = point.rstrip(".:; ")
        if body:  # "N. Title: text" ("N. Title? text" after a title that asks)
            assert (
                line.startswith(f"{n}. {title}") and line.endswith(body) and len(line) <= len(f"{n}. {title}: {body}")
            )
        else:
            assert line == f"{n}. {title}"
    assert answer.backend == "llama.cpp" and answer.usage.completion_tokens > 0


async def test_greedy_answers_are_reproducible(local: LocalBackend) -> None:
    # The bundled model's own profile, as in the test above. The generic plan prompt is written for strong
    # models: on this 135M one its greedy plan meets near-ties, and llama.cpp's logits shift slightly with
    # prompt-cache reuse across slots, so two greedy runs of it may part (eval/results/quality_outside.md).
    client = sot.Client(backend=local.backend, mode="sot", temperature=0, seed=1, max_parallel=4, profile="small")
    async with client:
        first = await client.ask("What are the most effective ways to deal with stress?")
        second = await client.ask("What are the most effective ways to deal with stress?")
    assert first.points == second.points


async def test_sequential_answer_from_the_real_model(local: LocalBackend) -> None:
    async with sot.Client(backend=local.backend, mode="sequential", temperature=0, max_tokens=64) as client:
        answer = await client.ask("What is the capital of France?")
    assert answer.mode == "sequential" and answer.text.strip()
    assert [c.purpose for c in answer.calls] == ["sequential"]


async def test_the_bundled_server_publishes_its_load(local: LocalBackend) -> None:
    """llama.cpp's /slots, as the embedded server serves it: one entry per slot, none busy when idle."""
    reading = await local.backend.load()
    assert reading is not None
    assert (reading.source, reading.capacity, reading.running, reading.waiting) == ("llama.cpp-slots", 4, 0, 0)
    async with sot.Client(backend=local.backend, mode="sot", temperature=0, seed=1, max_parallel=4) as client:
        answer = await client.ask("What are the most effective ways to deal with stress?")
    assert answer.fan_out is not None and answer.fan_out["mode"] == "sot"
    assert answer.fan_out["load"]["capacity"] == 4
