"""sot against emulated providers (tests/_fakes/providers.py): the CLI and the API, real HTTP on loopback.

Every profile validates requests as its provider documents; an answer must come back complete, in
skeleton order, free of thinking text, and what a server refused must be right on the next call.
"""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _fakes import FakeServer, SeenRequest
from _fakes.profile import THINKING, Profile
from _fakes.providers import PROFILES, provider_handler
from tests_support import SOT

import sot
from sot.backends._negotiate import ClientStop, Negotiator, find_refusals, forget
from sot.backends._reasoning import ReasoningSplitter

POINTS = ["First idea", "Second idea", "Third idea"]
QUESTION = "What are good ways to learn a language?"


@pytest.fixture(autouse=True)
def _fresh_memory() -> Iterator[None]:
    forget()  # what the API tests learn stays in this process: start each test from nothing
    yield
    forget()


def serve(profile: Profile) -> FakeServer:
    return FakeServer(provider_handler(profile), model=profile.model)


def refused(server: FakeServer) -> list[SeenRequest]:
    return [r for r in server.requests if r.status in (400, 422)]


def refused_fields(profile: Profile, server: FakeServer) -> Counter[str]:
    """Per field, how many requests the profile refused for it (read from its own error body)."""
    counts: Counter[str] = Counter()
    for request in refused(server):
        reply = profile.validate(request.body)
        assert reply is not None
        body: Any = reply.error_body
        error = body[0]["error"] if isinstance(body, list) else body.get("error", body)
        counts[str(error.get("param"))] += 1
    return counts


def assert_complete(data: dict[str, Any]) -> None:
    assert data["mode"] == "sot"
    assert data["points"] == POINTS
    # Paragraphs and all: the generic profile sends no stop and keeps the model's text as written.
    assert data["expansions"] == [f"Details on {p} for point {n}.\n\nAnd more." for n, p in enumerate(POINTS, 1)]
    text = data["text"]
    positions = [text.index(point) for point in POINTS]
    assert positions == sorted(positions)
    assert "think" not in text.lower() and THINKING not in text


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SOT, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_cli_answers_completely_against_every_provider(name: str) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        result = run_cli("ask", "--mode", "sot", "--json", "--base-url", server.url, "--model", profile.model, QUESTION)
        assert result.returncode == 0, result.stdout + result.stderr
        data = json.loads(result.stdout)
        assert_complete(data)
        # Learned from the skeleton call: no expansion is refused for a field the skeleton was refused for.
        skeleton_refusals = {json.dumps(sorted(r.body)) for r in refused(server) if r.kind == "skeleton"}
        assert all(json.dumps(sorted(r.body)) not in skeleton_refusals for r in refused(server) if r.kind == "expand")
        if profile.reasoning is not None:
            assert sum(call["reasoning_chars"] for call in data["calls"]) > 0
            assert all(call["reasoning"] is None for call in data["calls"])  # not kept unless asked
        if profile.report_reasoning_tokens:
            assert data["usage"]["reasoning_tokens"] > 0


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(PROFILES))
async def test_api_learns_once_and_the_next_answer_is_right_first_time(name: str) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        async with sot.Client(server.url, profile.model, mode="sot", keep_reasoning=True) as client:
            first = await client.ask(QUESTION)
            refusals_after_first = len(refused(server))
            second = await client.ask(QUESTION)
        assert_complete(first.to_dict())
        assert_complete(second.to_dict())
        assert len(refused(server)) == refusals_after_first  # nothing refused on the second answer
        assert second.adaptations == first.adaptations
        assert bool(first.adaptations) == (refusals_after_first > 0 or profile.model in ("o3-mini", "gpt-5-mini"))
        if profile.reasoning is not None:
            kept = [call.reasoning for call in second.calls]
            assert all(THINKING in (text or "") for text in kept)
            assert all(THINKING not in e for e in second.expansions)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai-o3-mini", {"max_tokens->max_completion_tokens"}),
        ("openai-unknown-reasoning", {"max_tokens->max_completion_tokens"}),
        ("mistral", {"drop stream_options"}),
    ],
)
async def test_adaptations_are_named_in_the_answer(name: str, expected: set[str]) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        answer = await sot.ask(QUESTION, base_url=server.url, model=profile.model, mode="sot")
        # Known names start right: no refusal at all; an unknown name is learned from its refusals.
        assert (len(refused(server)) == 0) == (profile.model == "o3-mini")
    assert expected <= set(answer.adaptations)


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai-o3-mini", "openai-unknown-reasoning"])
async def test_a_stop_a_reasoning_model_refuses_is_applied_on_the_client(name: str) -> None:
    # The small profile's expansions stop at a blank line; o-series models take no stop.
    profile = PROFILES[name]
    with serve(profile) as server:
        answer = await sot.ask(QUESTION, base_url=server.url, model=profile.model, mode="sot", profile="small")
    assert "drop stop (emulated on the client)" in answer.adaptations
    assert answer.expansions and all("And more" not in e for e in answer.expansions)


@pytest.mark.anyio
async def test_seed_becomes_random_seed_on_mistral_and_temperature_is_dropped_on_o_series() -> None:
    mistral = PROFILES["mistral"]
    with serve(mistral) as server:
        answer = await sot.ask(QUESTION, base_url=server.url, model=mistral.model, mode="sequential", seed=7)
        assert server.requests[-1].body["random_seed"] == 7 and "seed" not in server.requests[-1].body
    assert "seed->random_seed" in answer.adaptations
    unknown = PROFILES["openai-unknown-reasoning"]
    with serve(unknown) as server:
        answer = await sot.ask(QUESTION, base_url=server.url, model=unknown.model, mode="sequential", temperature=0.3)
        assert "temperature" not in server.requests[-1].body
        assert refused_fields(unknown, server) == Counter({"max_tokens": 1, "temperature": 1})
    assert answer.text == "A plain answer written in one go."


def test_batch_against_reasoning_models_refuses_each_field_at_most_twice(tmp_path: Path) -> None:
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Tips number {i}?"}) + "\n" for i in range(10)))
    for name in ("openai-unknown-reasoning", "openai-o3-mini"):
        profile = PROFILES[name]
        out = tmp_path / f"{name}.jsonl"
        with serve(profile) as server:
            args = ["batch", str(prompts), "--out", str(out), "--modes", "sot", "--concurrency", "2", "--no-progress"]
            result = run_cli(*args, "--base-url", server.url, "--model", profile.model)
            assert result.returncode == 0, result.stderr
            counts = refused_fields(profile, server)
        assert all(count <= 2 for count in counts.values()), counts
        if name == "openai-unknown-reasoning":
            assert set(counts) == {"max_tokens"}
        else:
            assert not counts  # the known name starts right
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(records) == 10
        assert all(not r["error"] and r["points"] == POINTS and not r["failed_points"] for r in records), records[0]


@pytest.mark.parametrize("name", ["openai-o3-mini", "mistral", "gemini", "vllm", "tgi", "anthropic"])
def test_a_real_400_unknown_model_is_one_line_tried_once(name: str) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        result = run_cli("ask", "--mode", "sequential", "--base-url", server.url, "--model", "no-such-model", "Hi?")
        assert result.returncode != 0
        assert len(server.requests) == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sot: error:"), result.stderr


def test_mid_stream_error_chunk_is_retried_and_its_partial_text_dropped() -> None:
    profile = PROFILES["openrouter"]
    with serve(profile) as server:
        result = run_cli("ask", "--mode", "sot", "--json", "--base-url", server.url, "--model", profile.model, QUESTION)
        assert result.returncode == 0, result.stderr
        assert len([r for r in server.requests if r.kind == "expand" and r.point == 2]) == 2
    data = json.loads(result.stdout)
    assert_complete(data)
    assert data["text"].count("Details on Second idea") == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "dialect", "knob"),
    [
        ("vllm", "vllm", ("chat_template_kwargs", {"enable_thinking": False})),
        ("vllm", "openai", ("chat_template_kwargs", {"enable_thinking": False})),  # and reasoning_effort learned
        ("sglang", "openai", ("chat_template_kwargs", {"enable_thinking": False})),
        ("think-model", "openai", ("chat_template_kwargs", {"enable_thinking": False})),
        ("ollama", "openai", ("reasoning_effort", "none")),
    ],
)
async def test_reasoning_off_uses_the_documented_knob(name: str, dialect: Any, knob: tuple[str, Any]) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        answer = await sot.ask(
            QUESTION, base_url=server.url, model=profile.model, mode="sot", reasoning="off", dialect=dialect
        )
        assert all(r.body[knob[0]] == knob[1] for r in server.requests)
        if name == "vllm" and dialect == "openai":  # vLLM takes low|medium|high only: stepped down, then kept
            assert [r.body["reasoning_effort"] for r in refused(server)] == ["none", "minimal"]
            assert "reasoning_effort none->low" in answer.adaptations
    assert sum(call.reasoning_chars for call in answer.calls) == 0
    assert_complete(answer.to_dict())


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "effort"), [("openai-o3-mini", "low"), ("openai-gpt-5-mini", "minimal")])
async def test_reasoning_off_steps_reasoning_effort_down_to_what_the_model_takes(name: str, effort: str) -> None:
    profile = PROFILES[name]
    with serve(profile) as server:
        async with sot.Client(server.url, profile.model, mode="sot", reasoning="off") as client:
            first = await client.ask(QUESTION)
            before = len(refused(server))
            await client.ask(QUESTION)
        assert len(refused(server)) == before
        assert {r.body.get("reasoning_effort") for r in server.requests if r.status == 200} == {effort}
    assert_complete(first.to_dict())


@pytest.mark.anyio
async def test_reasoning_knobs_a_chat_model_refuses_are_dropped() -> None:
    profile = PROFILES["openai"]
    with serve(profile) as server:
        answer = await sot.ask(QUESTION, base_url=server.url, model=profile.model, mode="sot", reasoning="off")
    assert {"drop reasoning_effort", "drop chat_template_kwargs"} <= set(answer.adaptations)
    assert_complete(answer.to_dict())


# The pieces on their own


def test_refusals_name_only_fields_that_were_sent_and_refused() -> None:
    sent = {"model": "m", "messages": [], "max_tokens": 5, "stream_options": {"include_usage": True}}
    too_big = {"message": "max_tokens is too large: 5. This model supports at most 4", "param": "max_tokens"}
    assert find_refusals(400, {"error": {**too_big, "code": "invalid_value"}}, sent) == []
    context = {"object": "error", "message": "This model's maximum context length is 4096 tokens.", "code": 400}
    assert find_refusals(400, context, sent) == []
    assert find_refusals(404, {"error": {"message": "Unsupported parameter: 'max_tokens'"}}, sent) == []
    missing = {"error": {"message": "Unsupported parameter: 'stop' is not supported", "param": "stop"}}
    assert find_refusals(400, missing, sent) == []  # not sent: nothing to adapt
    nested = {"detail": [{"type": "extra_forbidden", "loc": ["body", "stream_options", "include_usage"]}]}
    assert [r.name for r in find_refusals(422, nested, sent)] == ["stream_options"]
    as_text = {"object": "error", "message": json.dumps(nested), "type": "internal_error_proxy"}
    assert [r.name for r in find_refusals(422, as_text, sent)] == ["stream_options"]


def test_renamed_field_goes_back_when_the_server_refuses_the_new_name() -> None:
    negotiator = Negotiator("http://azure.example/v1", "o3-mini")  # the name default sends max_completion_tokens
    body = {"model": "o3-mini", "messages": [], "max_tokens": 9}
    sent = negotiator.prepare(body).body
    assert sent["max_completion_tokens"] == 9
    refusal = {"error": {"message": "Unrecognized request argument supplied: max_completion_tokens"}}
    assert negotiator.learn(400, refusal, body, sent) == ["max_completion_tokens->max_tokens"]
    again = negotiator.prepare(body).body
    assert again["max_tokens"] == 9 and "max_completion_tokens" not in again
    # Both names refused: the cap is dropped, and a field is never adapted twice.
    assert negotiator.learn(400, {"error": {"message": "Unsupported parameter: 'max_tokens'"}}, body, again)
    assert "max_tokens" not in negotiator.prepare(body).body
    assert negotiator.learn(400, {"error": {"message": "Unsupported parameter: 'max_tokens'"}}, body, again) == [
        "max_tokens (learned by another call)"
    ]


def test_client_stop_cuts_at_a_stop_string_split_across_chunks() -> None:
    stop = ClientStop(["\n\n"])
    assert [stop.feed(p) for p in ["One.\n", "\nTwo", " three"]] == ["One.", "", ""]
    assert stop.stopped
    partial = ClientStop(["END"])
    assert partial.feed("abcE") == "abc" and partial.feed("Nx") == "ENx"
    assert partial.feed("yEN") == "y" and partial.flush() == "EN" and not partial.stopped


@pytest.mark.parametrize(
    ("pieces", "answer", "thought"),
    [
        (["  <th", "ink>\nplan", " it</th", "ink>\n\n", "1. A", "\n2. B"], "1. A\n2. B", "\nplan it"),
        (["<think>never closed"], "", "never closed"),
        (["1. <think> is text here"], "1. <think> is text here", ""),
        (["\n", "<", "t"], "\n<t", ""),
    ],
)
def test_think_blocks_are_split_from_the_answer(pieces: list[str], answer: str, thought: str) -> None:
    splitter = ReasoningSplitter()
    got = [splitter.feed(piece) for piece in pieces] + [splitter.finish()]
    assert "".join(a for a, _ in got) == answer
    assert "".join(t for _, t in got) == thought
    assert splitter.reasoning_chars == len(thought)


def test_debug_output_names_each_adaptation() -> None:
    profile = PROFILES["openai-unknown-reasoning"]
    for debug in (True, False):
        forget()
        with serve(profile) as server:
            flags = ["--debug"] if debug else []
            result = run_cli(
                "ask", "--mode", "sequential", *flags, "--base-url", server.url, "--model", profile.model, "Hi?"
            )
        assert result.returncode == 0, result.stderr
        assert ("adapted: max_tokens->max_completion_tokens" in result.stderr) == debug


@pytest.mark.anyio
async def test_an_adapted_re_send_is_no_restart_in_the_events() -> None:
    profile = PROFILES["openai-unknown-reasoning"]
    with serve(profile) as server:
        async with sot.stream(QUESTION, base_url=server.url, model=profile.model, mode="sot") as answer_events:
            seen = [type(event).__name__ async for event in answer_events]
        assert refused(server)  # it was refused, and adapted
    assert "SkeletonRestarted" not in seen and "ExpansionRestarted" not in seen
    assert answer_events.answer is not None
    assert_complete(answer_events.answer.to_dict())


def test_learning_is_safe_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    body = {"model": "x", "messages": [], "max_tokens": 3, "stop": ["\n\n"]}
    refusal = {"error": {"message": "Unsupported parameter: 'max_tokens'", "param": "max_tokens",
                         "code": "unsupported_parameter"}}  # fmt: skip

    def one(_: int) -> list[str]:
        negotiator = Negotiator("http://threads.example/v1", "x")
        return negotiator.learn(400, refusal, body, body)  # all sent before anyone learned

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(64)))
    assert all(results)  # every refused call may send again
    assert Negotiator("http://threads.example/v1", "x").notes == ["max_tokens->max_completion_tokens"]


def test_chunk_filter_keeps_thinking_apart_and_applies_a_refused_stop() -> None:
    from sot.backends._reasoning import ChunkFilter
    from sot.backends.base import ChatChunk

    answer_only = ChunkFilter(["\n\n"])
    pieces = ["<thi", "nk>plan\n\nmore</th", "ink>\n", "One.\n", "\nTwo."]
    out = [answer_only(ChatChunk(text=piece)) for piece in pieces]
    assert "".join(c.text for c in out if c) == "One."
    assert "".join(c.reasoning for c in out if c) == "plan\n\nmore"  # a stop inside thinking is no stop
    assert answer_only.stopped and out[-1] is not None and out[-1].finish_reason == "stop"
    held = ChunkFilter(["END"])
    assert held(ChatChunk(text="abcEN")) == ChatChunk(text="abc")
    tail = held.end()
    assert tail is not None and tail.text == "EN"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"error": {"message": "logprobs is not supported with this model"}}, "logprobs"),
        ({"error": {"message": "This model does not support the parameter `seed`"}}, "seed"),
        ({"error": "create() got an unexpected keyword argument 'seed'"}, "seed"),
        ({"message": "Additional properties are not allowed ('seed' was unexpected)"}, "seed"),
        ({"error": {"message": "body.seed: Extra inputs are not permitted"}}, "seed"),
        ({"error": {"message": "Failed to deserialize the JSON body: unknown field `seed`, expected one of"}}, "seed"),
        ({"error": {"message": "Only the default (1) value is supported.", "param": "temperature"}}, "temperature"),
        ({"error": {"message": "The model `m` does not exist or you do not have access to it."}}, None),
        ({"error": {"message": "'stop' is not supported"}}, None),  # not sent: nothing to adapt
    ],
)
def test_refusal_wordings_seen_in_the_wild(body: Any, field: str | None) -> None:
    sent = {"model": "m", "messages": [], "max_tokens": 3, "seed": 1, "logprobs": True, "temperature": 0.2}
    assert [r.name for r in find_refusals(400, body, sent)] == ([field] if field else [])
