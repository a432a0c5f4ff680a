"""The skeleton's shape is defined once: grammar, regex, prompt and parser agree for every count."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import re

import pytest
from _fakes import Reply, SeenRequest

import sot
from sot import constants
from sot._shape import SkeletonShape
from sot.backends.openai_compat import Dialect
from sot.outline import SkeletonParser
from sot.templates import SKELETON_BRIEF, Prompts

# Distinct topics, so that no title reads as a repeat of another.
TITLES = [
    "Sleep",
    "Diet",
    "Exercise",
    "Friends",
    "Work",
    "Money",
    "Travel",
    "Books",
    "Music",
    "Garden",
    "Cooking",
    "Chess",
    "Poetry",
    "Rivers",
    "Stars",
    "Trains",
    "Clocks",
    "Bridges",
    "Deserts",
    "Islands",
]

MAX_POINTS = range(constants.MIN_POINTS, constants.DEFAULT_MAX_POINTS + 1)


def outline(n: int) -> str:
    return "".join(f"{i}. {TITLES[i - 1]}\n" for i in range(1, n + 1))


def gbnf_lines(grammar: str) -> list[int]:
    """The line numbers a GBNF skeleton grammar writes, in order."""
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    return [int(n) for n in re.findall(r'"(\d+)\. "', root)]


def gbnf_required(grammar: str) -> int:
    """How many numbered lines the grammar's root requires (those before the first optional group)."""
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    return len(re.findall(r'"\d+\. "', root.split("(", 1)[0]))


@pytest.mark.parametrize("max_points", MAX_POINTS)
def test_regex_accepts_exactly_the_counts_the_shape_allows(max_points: int) -> None:
    shape = SkeletonShape(max_points=max_points)
    regex = re.compile(shape.regex())  # an inverted range such as {3,2} would not compile
    allowed = range(shape.min_points, max_points + 1)
    assert shape.min_points == min(constants.SKELETON_MIN_POINTS, max_points)
    for n in range(1, constants.DEFAULT_MAX_POINTS + 2):
        assert bool(regex.fullmatch(outline(n))) == (n in allowed), n
    # Numbered 1..n in order, nothing else: a skipped or repeated number does not match.
    assert not regex.fullmatch(outline(max_points).replace("2. ", "3. ", 1))


@pytest.mark.parametrize("max_points", MAX_POINTS)
def test_grammar_writes_lines_numbered_1_to_max_and_requires_the_minimum(max_points: int) -> None:
    shape = SkeletonShape(max_points=max_points)
    grammar = shape.gbnf()
    assert gbnf_lines(grammar) == list(range(1, max_points + 1))
    assert gbnf_required(grammar) == shape.min_points
    # The line length in the grammar is the shape's, in the same form as the regex.
    assert f"{{1,{shape.line_chars - 1}}}" in grammar and f"{{1,{shape.line_chars - 1}}}" in shape.regex()


@pytest.mark.parametrize("max_points", MAX_POINTS)
def test_parser_reads_every_outline_the_constraint_allows(max_points: int) -> None:
    shape = SkeletonShape(max_points=max_points)
    for n in range(shape.min_points, max_points + 1):
        parser = SkeletonParser(shape=shape)
        parser.feed(outline(n))
        parser.finish()
        assert parser.points == TITLES[:n]
    # More lines than the shape allows (an unconstrained server) are capped at its maximum.
    parser = SkeletonParser(shape=shape)
    parser.feed(outline(max_points + 3))
    assert len(parser.points) == max_points


@pytest.mark.parametrize(("kept", "expected"), [(0, 6), (5, 5), (10, 10)])
def test_a_shape_keeps_the_points_it_is_told_to_keep_more_or_fewer_than_it_asks_for(kept: int, expected: int) -> None:
    shape = SkeletonShape(max_points=6, kept_points=kept)
    assert shape.kept_points == expected
    parser = SkeletonParser(shape=shape)
    parser.feed(outline(10))
    parser.finish()
    assert parser.points == TITLES[:expected]


@pytest.mark.parametrize(
    ("max_points", "asked", "planned"),
    [(2, "a numbered list of 2 points", "as 2 sections"), (5, "of 3 to 5 points", "as 3 to 5 sections")],
)
def test_prompt_asks_for_the_shape(max_points: int, asked: str, planned: str) -> None:
    shape = SkeletonShape(max_points=max_points)
    brief = Prompts().skeleton("How do I sleep better?", shape, SKELETON_BRIEF)[0].content
    assert asked in brief and f"at most {shape.point_words} words" in brief
    assert planned in Prompts().skeleton("How do I sleep better?", shape)[0].content


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["vllm", "llama.cpp"])
async def test_max_points_2_sends_a_valid_two_line_constraint(fake, dialect: Dialect) -> None:
    def handler(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            return Reply("1. Sleep on a schedule\n2. Keep the room dark\n")
        return Reply("Some detail.")

    server = fake(handler)
    answer = await sot.ask(
        "q", base_url=server.url, model="m", mode="sot", max_points=2, dialect=dialect, profile="small"
    )
    assert answer.points == ["Sleep on a schedule", "Keep the room dark"]
    body = server.of_kind("skeleton")[0].body
    if dialect == "vllm":
        regex = body["structured_outputs"]["regex"]
        assert "{3,2}" not in regex
        assert re.fullmatch(regex, outline(2)) and not re.fullmatch(regex, outline(3))
    else:
        assert gbnf_lines(body["grammar"]) == [1, 2] and gbnf_required(body["grammar"]) == 2
    assert "a numbered list of 2 points" in str(body["messages"])


@pytest.mark.local
@pytest.mark.anyio
@pytest.mark.parametrize("max_points", [2, constants.DEFAULT_MAX_POINTS])
async def test_the_real_llama_server_follows_the_generated_grammar(max_points: int) -> None:
    from tests_support import require_binary

    from sot.backends.base import ChatRequest, Constraint
    from sot.backends.local import LocalBackend, LocalConfig

    require_binary()
    shape = SkeletonShape(max_points=max_points)
    local = await LocalBackend.start(LocalConfig(slots=1))
    try:
        messages = Prompts().skeleton("How can I improve my time management skills?", shape)
        constraint = Constraint(gbnf=shape.gbnf())
        request = ChatRequest(messages, constraint=constraint, max_tokens=constants.SKELETON_MAX_TOKENS, temperature=0)
        text = "".join([chunk.text async for chunk in local.backend.stream_chat(request)])
    finally:
        await local.aclose()
    assert re.fullmatch(shape.regex(), text), text
    numbers = [int(line.split(".")[0]) for line in text.splitlines()]
    assert numbers == list(range(1, len(numbers) + 1)) and shape.min_points <= len(numbers) <= max_points


@pytest.mark.anyio
@pytest.mark.parametrize(("pipeline", "told"), [(True, "sees the plan only up to its own line"), (False, "work apart")])
async def test_the_plan_prompt_tells_the_planner_what_each_writer_will_see(fake, pipeline: bool, told: str) -> None:
    def handler(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            return Reply("1. Schedule: a fixed wake time (about 80 words)\n2. Light: a dark room (about 80 words)\n")
        return Reply("Some detail.")

    server = fake(handler)
    await sot.ask("How do I sleep better?", base_url=server.url, model="m", mode="sot", pipeline=pipeline)
    plan_prompt = server.of_kind("skeleton")[0].body["messages"][-1]["content"]
    assert "whatever two lines name is written twice" in plan_prompt
    assert told in plan_prompt
    assert ("sees the plan only up to its own line" in plan_prompt) is pipeline  # never untrue of the other mode
