"""A looping stream ends where the loop began, the same text in every view, and says so."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import anyio
import pytest
from _fakes import FakeServer, Handler, Reply, SeenRequest
from tests_support import SOT

import sot
from sot._loops import LoopWatch

POEM = "Soft rain falls on the roof. It sings: " + "rain, " * 120
LINES = "Compare the two ends.\n\n" + "**Loose End**\n" * 40
TABLE = "| a | b |\n|---|---|\n" + "".join(f"| {i} | {i * i} |\n" for i in range(60))


def watched(text: str, step: int = 7) -> LoopWatch:
    watch = LoopWatch()
    for i in range(0, len(text), step):
        watch.feed(text[i : i + step])
    return watch


# Text streams as it comes: the first copies, before they can be told from ordinary text, may have been
# shown; the cut keeps them, up to the end of the copy that was showing.
@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (POEM, "Soft rain falls on the roof. It sings: rain, rain,"),
        (LINES, "Compare the two ends.\n\n**Loose End**\n**Loose End**"),
    ],
)
def test_a_loop_is_seen_and_cut_where_it_began_or_after_the_copy_shown(text: str, kept: str) -> None:
    watch = watched(text)
    assert watch.looping
    assert watch.cut(text) == kept


# Holding unfinished sentences (the small profile's), nothing of the loop was shown: it is cut at its sentence.
@pytest.mark.parametrize(
    ("text", "kept"), [(POEM, "Soft rain falls on the roof."), (LINES, "Compare the two ends.\n\n**Loose End**")]
)
def test_holding_sentences_cuts_at_the_last_whole_sentence_before_a_loop(text: str, kept: str) -> None:
    watch = LoopWatch(hold_sentences=True)
    for i in range(0, len(text), 7):
        watch.feed(text[i : i + 7])
    assert watch.looping
    assert watch.cut(text) == kept


@pytest.mark.parametrize(
    "text",
    [
        TABLE,
        "Repeat after me: " + "ha " * 10 + "and that is it.",
        "def f():\n    return 0\n\n\ndef g():\n    return 0\n",
        "Step one. Step two. Step three. Step four. Step five.",
        # What a strong model writes on purpose (a cold review's cases):
        "```python\n" + "x = layers.Conv2D(64, (3, 3), padding='same', activation='relu')(x)\n" * 12 + "```\nDone.",
        "| Date | Task | Done |\n|---|---|---|\n" + "|  |  |  |\n" * 10 + "Print it.",
        "Title\n" + "=" * 240 + "\nText.",
        ("Chorus: we sing all night, we sing till the morning light.\n" * 4) + "The end.",
        "int m[8][8] = {\n" + "    {0, 0, 0, 0, 0, 0, 0, 0},\n" * 8 + "};",
    ],
)
def test_parallel_text_tables_and_short_repeats_are_no_loop(text: str) -> None:
    watch = watched(text + "\n")
    assert not watch.looping and watch.cut(text) == text and watch.held <= 1


def test_a_forming_repetition_is_held_back_from_the_start_of_its_sentence() -> None:
    watch = watched("One whole sentence. It sings: " + "rain, " * 5)
    assert watch.text[: len(watch.text) - watch.held] == "One whole sentence."
    watch.feed("and then it stops. And")
    assert watch.held == 0  # the repetition stopped: everything streams as it comes
    holding = LoopWatch(hold_sentences=True)
    holding.feed("One whole sentence. And")
    assert holding.held == len(" And")  # the small profile's: a sentence still being written waits


def test_a_looping_answer_is_the_same_cut_text_in_every_view(fake: Callable[[Handler], FakeServer]) -> None:
    def handler(request: SeenRequest) -> Reply:
        return Reply(POEM, finish_reason="length")

    server = fake(handler)
    shown: list[str] = []

    async def ask() -> sot.Answer:
        client = sot.Client(base_url=server.url, model="m", mode="sequential")
        async with client, client.stream("Write a short poem about rain.") as answer_events:
            async for event in answer_events:
                if isinstance(event, sot.events.AnswerText):
                    shown.append(event.text)
                elif isinstance(event, sot.events.AnswerDone):
                    return event.answer
        raise AssertionError("no answer")

    answer = anyio.run(ask)
    assert answer.text == "".join(shown)
    assert answer.text.startswith("Soft rain falls on the roof.") and answer.text.count("rain,") <= 3
    assert answer.truncated and answer.calls[-1].looped
    # The stream was closed once it looped, long before the server would have finished it.
    assert answer.calls[-1].left_early
    result = subprocess.run(
        [SOT, "ask", "--mode", "sequential", "--json", "--base-url", server.url, "--model", "m", "Poem?"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(result.stdout)["text"] == answer.text
    assert "the model looped; the answer ends where the loop began" in result.stderr


def test_the_servers_own_loop_guard_is_asked_where_it_has_one() -> None:
    from sot.backends.base import ChatRequest
    from sot.backends.openai_compat import build_body
    from sot.templates import Message

    guarded = ChatRequest([Message("user", "q")], max_tokens=8, guard_repetition=True)
    assert build_body(guarded, "m", "llama.cpp")["dry_multiplier"] > 0
    assert build_body(guarded, "m", "vllm")["repetition_penalty"] > 1
    plain = build_body(guarded, "m", "openai")
    assert not {"dry_multiplier", "repetition_penalty", "frequency_penalty"} & set(plain)


@pytest.mark.parametrize(("profile", "guarded"), [("small", True), ("generic", False)])
def test_the_small_profile_guards_its_plain_answers_against_loops(profile: str, guarded: bool) -> None:
    from sot.backends.mock import MockBackend

    seen = []

    async def handler(request):  # type: ignore[no-untyped-def]
        seen.append(request)
        yield "A plain answer."

    async def ask() -> None:
        await sot.Client(backend=MockBackend(handler), mode="sequential", profile=profile).ask("q")

    anyio.run(ask)
    assert [r.guard_repetition for r in seen] == [guarded]


@pytest.mark.parametrize(
    ("profile", "text"), [("small", "One whole sentence."), ("generic", "One whole sentence. And a")]
)
def test_a_capped_plain_answer_ends_whole_on_the_small_profile_only(
    fake: Callable[[Handler], FakeServer], profile: str, text: str
) -> None:
    server = fake(lambda request: Reply("One whole sentence. And a", finish_reason="length"))

    async def ask() -> sot.Answer:
        async with sot.Client(base_url=server.url, model="m", mode="sequential", profile=profile) as client:
            return await client.ask("q")

    answer = anyio.run(ask)
    assert answer.text == text and answer.truncated


def test_a_loop_with_a_repeated_phrase_inside_is_still_held_and_cut_whole() -> None:
    # The looping sentence repeats a phrase of its own: the nearest repeat is that phrase, not the loop.
    text = "A first sentence. " + "It rains and rains and rains all day long. " * 30
    for step in (3, 7, 11):
        watch = watched(text, step)
        assert watch.looping
        kept = watch.cut(watch.text)
        assert kept.startswith("A first sentence.") and kept.count("all day long") <= 2, (step, kept)


def test_a_code_block_streams_as_it_comes() -> None:
    watch = watched("Here:\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(60)))
    assert watch.held == 0 and not watch.looping
