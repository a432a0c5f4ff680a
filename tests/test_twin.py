"""eval/twin: the batched GPU server's twin the load benchmark runs against, over real HTTP on loopback.

Timings are read from the twin's own simulated clock (the llama.cpp-style ``timings`` of each reply),
so the physics is checked exactly however busy this machine is; wall-clock checks only compare
orders of magnitude. Every server runs its physics many times faster than real time.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import openai
import pytest

import sot
from sot._shape import SkeletonShape
from sot.templates import Prompts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from twin import NIM_LLAMA_8B_H100, TwinConfig, TwinServer, describe_table, parse_table, plan, recognise, step_ms
from twin.tokens import PrefixCache, tokenize

FAST = 50.0  # simulated seconds per real second
QUESTION = "How can I improve my time management skills?"
# One client for every test: a new httpx client builds an SSL context, tens of milliseconds each.
HTTP = httpx.Client(timeout=30)


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    HTTP.close()


@pytest.fixture
def twin() -> Iterator[TwinServer]:
    with TwinServer(TwinConfig(time_scale=FAST)) as server:
        yield server


def chat(server: TwinServer, content: str, **extra: Any) -> dict[str, Any]:
    """One streamed completion read to its end: the text, the last chunk's usage and timings."""
    body = {"model": "m", "messages": [{"role": "user", "content": content}], "stream": True}
    body |= {"stream_options": {"include_usage": True}} | extra
    text, last, finish = "", {}, None
    with HTTP.stream("POST", server.base_url + "/chat/completions", json=body, timeout=30) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        for line in reply.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk["choices"]:
                text += choice["delta"].get("content") or ""
                finish = choice["finish_reason"] or finish
            last = chunk
    return {"text": text, "usage": last["usage"], "timings": last["timings"], "finish_reason": finish}


def per_token_ms(reply: dict[str, Any]) -> float:
    timings = reply["timings"]
    return float(timings["predicted_ms"]) / float(timings["predicted_n"] - 1)


def load(server: TwinServer, streams: int) -> None:
    assert HTTP.post(server.url + "/admin/load", json={"streams": streams}).json()["background"] == streams


def wait_for_metrics(server: TwinServer, name: str, value: float) -> dict[str, tuple[str, dict[str, str], float]]:
    """The metrics once `name` reads `value` (requests started from threads take a moment to arrive)."""
    deadline = time.monotonic() + 5
    while True:
        metrics = parse_prometheus(HTTP.get(server.url + "/metrics").text)
        if metrics[name][2] == value:
            return metrics
        if time.monotonic() > deadline:
            pytest.fail(f"{name} never read {value} (last: {metrics[name][2]})")
        time.sleep(0.005)  # polling a server's own counter, not ordering two tasks


def parse_prometheus(text: str) -> dict[str, tuple[str, dict[str, str], float]]:
    """Samples by name, checked against the text format: every sample's family has HELP and TYPE first."""
    declared: dict[str, str] = {}
    samples: dict[str, tuple[str, dict[str, str], float]] = {}
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_]\w*="[^"\\]*",?)*)\} (\S+)$')
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("gauge", "counter")
            declared[name] = kind
            continue
        match = sample.match(line)
        assert match, line
        name, labels, value = match.groups()
        assert name in declared, f"{name} has no # TYPE line before it"
        samples[name] = (declared[name], dict(re.findall(r'(\w+)="([^"]*)"', labels)), float(value))
    return samples


def test_step_time_is_the_table_interpolated() -> None:
    assert step_ms(1) == 4.63 and step_ms(200) == 12.65
    assert step_ms(75) == pytest.approx((5.91 + 7.57) / 2)
    assert step_ms(0) == 4.63  # an empty batch costs what one stream does
    assert step_ms(300) == pytest.approx(12.65 + (12.65 - 7.57))  # along the last segment
    assert [n for n, _ in NIM_LLAMA_8B_H100] == [1, 5, 25, 50, 100, 200]


def test_more_running_streams_make_every_stream_slower(twin: TwinServer) -> None:
    alone = chat(twin, QUESTION, max_tokens=120)
    load(twin, 99)
    started = time.perf_counter()
    busy = chat(twin, QUESTION, max_tokens=120)
    busy_wall = time.perf_counter() - started
    assert per_token_ms(alone) == pytest.approx(step_ms(1), rel=0.01)
    assert per_token_ms(busy) == pytest.approx(step_ms(100), rel=0.01)
    assert busy["finish_reason"] == "length" and busy["usage"]["completion_tokens"] == 120
    # The simulated clock is the wall clock, sped up: 120 steps of 7.57 ms take about 18 ms here.
    assert 0.5 * 120 * 7.57e-3 / FAST < busy_wall < 20 * 120 * 7.57e-3 / FAST + 0.5


@pytest.mark.anyio
async def test_real_streams_share_steps() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}], "max_tokens": 100}
    # Every slot held until all 25 requests wait: then they start in one step, and share every step.
    with TwinServer(TwinConfig(time_scale=FAST, background_streams=TwinConfig.batch_limit)) as server:
        replies: list[dict[str, Any]] = []
        async with (
            httpx.AsyncClient(base_url=server.base_url, timeout=30) as client,
            anyio.create_task_group() as group,
        ):

            async def one() -> None:
                replies.append((await client.post("/chat/completions", json=body)).json())

            for _ in range(25):
                group.start_soon(one)
            await anyio.to_thread.run_sync(wait_for_metrics, server, "vllm:num_requests_waiting", 25)
            await anyio.to_thread.run_sync(load, server, 0)
    assert [per_token_ms(r) for r in replies] == [pytest.approx(step_ms(25), rel=0.001)] * 25


def test_batch_limit_queues_requests_fifo_and_metrics_show_them_waiting() -> None:
    with TwinServer(TwinConfig(time_scale=2.0, batch_limit=2)) as server:
        replies: dict[int, dict[str, Any]] = {}
        ended: list[int] = []

        def ask(n: int) -> None:
            replies[n] = chat(server, f"Question number {n}: how do tides work?", max_tokens=200)
            ended.append(n)

        threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
        for n, thread in enumerate(threads):
            thread.start()  # each arrives before the next leaves
            name = "vllm:num_requests_running" if n < 2 else "vllm:num_requests_waiting"
            metrics = wait_for_metrics(server, name, n + 1 if n < 2 else n - 1)
        slots = HTTP.get(server.url + "/slots").json()
        for thread in threads:
            thread.join()
    assert metrics["vllm:num_requests_running"][2] == 2
    assert metrics["vllm:num_requests_waiting"][2] == 2
    assert [s["is_processing"] for s in slots] == [True, True]
    queued = [replies[n]["timings"]["queue_ms"] for n in range(4)]
    assert max(queued[:2]) < 10 and min(queued[2:]) > 100
    assert ended.index(2) < ended.index(3)  # the first to wait is the first to run


def test_background_load_is_settable_while_running() -> None:
    with TwinServer(TwinConfig(time_scale=FAST, batch_limit=8, background_streams=3)) as server:
        metrics = parse_prometheus(HTTP.get(server.url + "/metrics").text)
        assert metrics["vllm:num_requests_running"][2] == 3
        assert per_token_ms(chat(server, QUESTION, max_tokens=60)) == pytest.approx(step_ms(4), rel=0.01)
        load(server, 8)  # every slot held: a request waits until the load drops
        waiting: list[dict[str, Any]] = []
        thread = threading.Thread(target=lambda: waiting.append(chat(server, QUESTION, max_tokens=60)))
        thread.start()
        metrics = wait_for_metrics(server, "vllm:num_requests_waiting", 1)
        assert (metrics["vllm:num_requests_running"][2], metrics["vllm:num_requests_waiting"][2]) == (8, 1)
        assert HTTP.get(server.url + "/slots", params={"fail_on_no_slot": "1"}).status_code == 503
        load(server, 0)
        thread.join()
        assert waiting[0]["timings"]["queue_ms"] > 0
        assert per_token_ms(waiting[0]) == pytest.approx(step_ms(1), rel=0.01)
        assert HTTP.post(server.url + "/admin/load", json={"streams": -1}).status_code == 400


def measured_run(tmp_path: Path, rows: list[tuple[int, float]], full_length: bool = True) -> Path:
    """A results file in the shape eval/bench_gpu.py writes: the median time per output token per stream count."""
    levels = [{"streams": n, "ms_per_token_median": ms, "full_length": full_length} for n, ms in rows]
    latency = {"program": "llama-server", "model": {"label": "8B-shaped"}, "levels": levels}
    path = tmp_path / "gpu_bench.json"
    path.write_text(json.dumps({"device": {"kind": "gpu", "name": "NVIDIA H200"}, "token_latency": latency}))
    return path


def test_a_measured_gpu_run_sets_the_step_time(tmp_path: Path) -> None:
    path = measured_run(tmp_path, [(1, 5.3), (8, 11.9), (64, 46.3)])
    table = parse_table(str(path))
    assert table == parse_table("1:5.3,8:11.9,64:46.3") == ((1, 5.3), (8, 11.9), (64, 46.3))
    assert describe_table(str(path)) == "llama-server measured on one NVIDIA H200 (8B-shaped; gpu_bench.json)"
    assert "NIM" in describe_table(None)
    with TwinServer(TwinConfig(time_scale=FAST, table=table, background_streams=7)) as server:
        assert per_token_ms(chat(server, QUESTION, max_tokens=60)) == pytest.approx(11.9, rel=0.01)


@pytest.mark.parametrize("spec", ["1:5.3", "8:2,1:1", "1:5,1:6", "0:1,2:3", "1:a,2:3", "1-5,2:3"])
def test_a_step_table_is_two_or_more_rows_in_increasing_stream_counts(spec: str) -> None:
    with pytest.raises(ValueError, match="rows"):
        parse_table(spec)


def test_a_measured_run_that_is_not_whole_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="measure it again"):
        parse_table(str(measured_run(tmp_path, [(1, 5.3), (8, 11.9)], full_length=False)))
    (tmp_path / "smoke.json").write_text(json.dumps({"device": {}, "runs": []}))
    with pytest.raises(ValueError, match="no time-per-token run"):
        parse_table(str(tmp_path / "smoke.json"))


def test_prefix_cache_cuts_prefill(twin: TwinServer) -> None:
    shared = "Background: " + " ".join(f"fact{n}" for n in range(400)) + "\n"
    first = chat(twin, shared + "Question one?", max_tokens=5)
    second = chat(twin, shared + "Question two?", max_tokens=5)
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= second["usage"]["prompt_tokens"] - 32 and cached % 16 == 0
    # Prefill is 0.05 ms a token: ~400 tokens are ~20 ms more before the first token.
    assert first["timings"]["prompt_ms"] - second["timings"]["prompt_ms"] == pytest.approx(cached * 0.05, rel=0.1)
    cache = PrefixCache(block_tokens=4)
    assert cache.admit(list("abcdefgh")) == 0 and cache.admit(list("abcdefgX")) == 4


def test_metrics_are_vllms_prometheus_text(twin: TwinServer) -> None:
    chat(twin, QUESTION, max_tokens=10)
    reply = HTTP.get(twin.url + "/metrics")
    assert reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = parse_prometheus(reply.text)
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting"):
        assert samples[name][0] == "gauge" and samples[name][1]["model_name"] == TwinConfig.model
    assert samples["vllm:gpu_cache_usage_perc"][2] == samples["vllm:kv_cache_usage_perc"][2] == 0.0
    assert samples["vllm:generation_tokens_total"] == ("counter", {"engine": "0", "model_name": TwinConfig.model}, 10.0)
    assert "# HELP vllm:num_requests_waiting Number of requests waiting to be processed." in reply.text
    load(twin, 100)
    samples = parse_prometheus(HTTP.get(twin.url + "/metrics").text)
    assert samples["vllm:num_requests_running"][2] == 100 and 0 < samples["vllm:kv_cache_usage_perc"][2] < 1


def test_slots_are_llama_cpps_list(twin: TwinServer) -> None:
    load(twin, 5)
    slots = HTTP.get(twin.url + "/slots").json()
    assert len(slots) == TwinConfig.batch_limit and [s["id"] for s in slots] == list(range(len(slots)))
    assert sum(s["is_processing"] for s in slots) == 5
    for key in ("id_task", "n_ctx", "speculative", "params", "next_token"):
        assert key in slots[0]
    assert slots[-1]["id_task"] == -1 and slots[-1]["next_token"]["has_next_token"] is False


def test_openai_sdk_streams_and_completes(twin: TwinServer) -> None:
    client = openai.OpenAI(base_url=twin.base_url, api_key="none")
    assert [m.id for m in client.models.list()] == [TwinConfig.model]
    whole = client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    assert whole.choices[0].finish_reason == "stop" and whole.usage is not None
    assert whole.usage.completion_tokens == len(tokenize(whole.choices[0].message.content or ""))
    assert 600 <= whole.usage.completion_tokens <= 1000
    pieces, usage, finish = [], None, None
    stream = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=50,
    )
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert finish == "length" and usage is not None and usage.completion_tokens == 50
    assert "".join(pieces) == "".join(tokenize(whole.choices[0].message.content or "")[:50])


def test_stop_strings_and_bad_requests(twin: TwinServer) -> None:
    whole = HTTP.post(twin.base_url + "/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]})
    text = whole.json()["choices"][0]["message"]["content"]
    cut = chat(twin, QUESTION, stop=["**"])
    assert cut["text"] == text[: text.index("**")].rstrip() and cut["finish_reason"] == "stop"
    assert HTTP.post(twin.base_url + "/chat/completions", content=b"{").status_code == 400
    assert HTTP.post(twin.base_url + "/chat/completions", json={"messages": []}).status_code == 400


def test_prompts_are_recognised_from_sots_own_templates() -> None:
    prompts = Prompts()

    def seen(messages: list[Any]) -> Any:
        return recognise([{"role": m.role, "content": m.content} for m in messages])

    for pipelined in (True, False):  # the plan prompt tells the planner how its writers will see it
        outline = seen(prompts.skeleton(QUESTION, SkeletonShape(max_points=7), pipelined=pipelined))
        assert (outline.kind, outline.question, outline.min_points, outline.max_points) == ("outline", QUESTION, 3, 7)
    assert seen(prompts.skeleton(QUESTION, SkeletonShape(), "skeleton_brief.j2")).kind == "outline_brief"
    expand = seen(prompts.expansion(QUESTION, ["Plan", "Focus"], 1, details=["a", "b (about 90 words)"]))
    assert (expand.kind, expand.question, expand.index, expand.title) == ("expand", QUESTION, 2, "Focus")
    brief = seen(prompts.expansion(QUESTION, ["Plan", "Focus"], 0, template="expand_brief.j2"))
    assert (brief.kind, brief.index) == ("expand_brief", 1)
    assert seen(prompts.sequential(QUESTION)).kind == "plain"
    route = recognise([{"role": "user", "content": prompts.render("route.j2", question=QUESTION)}])
    assert (route.kind, route.question) == ("route", QUESTION)


def test_answers_are_deterministic_and_of_documented_size() -> None:
    made = plan(QUESTION)
    assert made == plan(QUESTION) and 4 <= len(made.headings) <= 6
    assert 600 <= made.total_tokens <= 900 and all(100 <= n <= 220 for n in made.section_tokens)
    assert plan(QUESTION, max_points=3).total_tokens == pytest.approx(made.total_tokens, abs=3)


@pytest.mark.anyio
async def test_sot_answers_against_the_twin() -> None:
    # Slower than the other tests: the twin writes at ten times real speed, no faster.
    with TwinServer(TwinConfig(time_scale=10.0)) as twin:
        async with sot.Client(base_url=twin.base_url, model="m", mode="sot") as client:
            answer = await client.ask(QUESTION)
        async with sot.Client(base_url=twin.base_url, model="m", mode="sequential") as client:
            plain = await client.ask(QUESTION)
    made = plan(QUESTION)
    assert answer.mode == "sot" and answer.points == list(made.headings)
    assert all(answer.expansions) and not answer.truncated
    assert [c.purpose for c in answer.calls].count("expand") == len(made.headings)
    assert plain.mode == "sequential" and len(plain.calls) == 1
    assert plain.usage.completion_tokens > 600
    # The sections are written side by side: what that saves is timed by eval/bench_load.py, not here,
    # where a busy machine would make a ratio of wall-clock times flaky.
    expands = [c for c in answer.calls if c.purpose == "expand"]
    in_flight = max(sum(e.start_s <= c.start_s < e.end_s for e in expands) for c in expands)
    assert in_flight >= len(expands) - 1
