"""Reading a server's load (vLLM's and llama.cpp's monitoring endpoints) and the fan-out decided from it.

The monitor is tested against a real HTTP server on 127.0.0.1 (``http.server`` in a thread) that
counts requests per path; freshness and memory windows run on an injected clock, never on sleeps.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx
import pytest

from sot.backends._load import (
    LOAD_FAILURE_BACKOFF_S,
    LOAD_FAILURES_BEFORE_GIVING_UP,
    LOAD_FRESH_S,
    LOAD_NO_METRICS_S,
    LOAD_READ_TIMEOUT_S,
    LoadMonitor,
    LoadReading,
    Source,
    metrics_root,
    parse_prometheus,
    reading_from_metrics,
    reading_from_slots,
)
from sot.router.load import KV_HIGH_MARK, Grants, decide_fan_out

# The shape of vLLM's page (docs.vllm.ai "Production Metrics"; V1 engine: a series per engine,
# labelled engine and model_name), with the histogram lines that make up most of it.
VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.42
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.17
# TYPE vllm:iteration_tokens_total histogram
vllm:iteration_tokens_total_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:iteration_tokens_total_bucket{engine="0",le="1.0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
vllm:iteration_tokens_total_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
"""
# The older engine's names (vLLM 0.4-0.9): gpu_cache_usage_perc, one series labelled model_name only.
VLLM_OLD_METRICS = """\
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 4.0
vllm:num_requests_waiting{model_name="m"} 0.0
vllm:num_requests_swapped{model_name="m"} 0.0
vllm:gpu_cache_usage_perc{model_name="m"} 0.95
"""
# llama.cpp's server with --metrics (tools/server/README.md, "GET /metrics").
LLAMA_METRICS = """\
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1786
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 48.9
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 4
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 2
"""


def llama_slots(busy: list[bool]) -> bytes:
    """llama.cpp's GET /slots (tools/server/README.md), trimmed to the fields that matter here."""
    slots = [
        {"id": i, "id_task": 135 + i if on else -1, "n_ctx": 2048, "speculative": False, "is_processing": on,
         "params": {"n_predict": -1, "temperature": 0.8, "samplers": ["top_k", "temperature"]},
         "next_token": {"has_next_token": on, "n_remain": -1, "n_decoded": 136 if on else 0}}
        for i, on in enumerate(busy)
    ]  # fmt: skip
    return json.dumps(slots).encode()


PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"
NOT_SUPPORTED = (
    501,
    "application/json",
    b'{"error":{"code":501,"message":"This server does not support slots endpoint."}}',
)


@dataclass
class Route:
    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    hang: bool = False  # hold the request until the test sets `release` (or ends)


@dataclass
class FakeMonitoring:
    """A loopback server answering the monitoring paths as routed; counts every request by path."""

    routes: dict[str, Route] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    headers: list[dict[str, str]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        self.hits[handler.path] += 1
        self.headers.append(dict(handler.headers))
        self.arrived.set()
        route = self.routes.get(handler.path, Route(404, "text/plain", b"Not Found"))
        if route.hang:
            self.release.wait(30)
        handler.send_response(route.status)
        handler.send_header("Content-Type", route.content_type)
        handler.send_header("Content-Length", str(len(route.body)))
        handler.end_headers()
        handler.wfile.write(route.body)


@pytest.fixture
def server() -> Iterator[FakeMonitoring]:
    fake = FakeMonitoring()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Head and body in one segment, as real servers send them: two small writes on a keep-alive
        # connection meet the client's delayed ACK and cost 40 ms a reply, most of a 0.3 s budget.
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            fake.answer(self)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    # A short poll: shutdown() waits for the loop to look, and the default half second is most of this file's time.
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield fake
    fake.release.set()
    httpd.shutdown()
    httpd.server_close()


@dataclass
class Clock:
    t: float = 1000.0

    def __call__(self) -> float:
        return self.t


def reading(running: int, waiting: int = 0, capacity: int | None = None, kv_usage: float | None = None) -> LoadReading:
    source: Source = "llama.cpp-slots" if capacity is not None else "vllm-metrics"
    return LoadReading(running, waiting, capacity, kv_usage, source, read_at=0.0)


# Parsing


def test_vllm_metrics_sum_the_engines_and_keep_the_fullest_kv_cache() -> None:
    got = reading_from_metrics(parse_prometheus(VLLM_METRICS), read_at=5.0)
    assert got == LoadReading(7, 3, None, 0.42, "vllm-metrics", 5.0)
    old = reading_from_metrics(parse_prometheus(VLLM_OLD_METRICS), read_at=0.0)
    assert old is not None and (old.running, old.waiting, old.kv_usage) == (4, 0, 0.95)


def test_prometheus_text_with_escapes_nan_inf_and_timestamps() -> None:
    text = (
        "# HELP x with a } brace\n"
        'vllm:num_requests_running{model_name="a \\"quoted\\", {odd} name",engine="0",} 2 1712345678000\n'
        'vllm:num_requests_running{model_name="b\\\\c\\nd"} NaN\n'
        "vllm:num_requests_waiting +Inf\n"
        'vllm:kv_cache_usage_perc{engine="0"} 1.5e-1\n'
        "not a sample line at all\n"
        'vllm:num_requests_waiting{broken="unterminated} 3\n'
    )
    samples = parse_prometheus(text)
    assert [s.labels for s in samples[:2]] == [
        {"model_name": 'a "quoted", {odd} name', "engine": "0"},
        {"model_name": "b\\c\nd"},
    ]
    got = reading_from_metrics(samples, read_at=0.0)
    # NaN is no value, +Inf no count: neither may make the server look busy or idle.
    assert got == LoadReading(2, 0, None, 0.15, "vllm-metrics", 0.0)


def test_llama_cpp_metrics_and_slots() -> None:
    got = reading_from_metrics(parse_prometheus(LLAMA_METRICS), read_at=0.0)
    assert got == LoadReading(4, 2, None, None, "llama.cpp-metrics", 0.0)
    slots = reading_from_slots(json.loads(llama_slots([True, False, True, False])), read_at=1.0)
    assert slots == LoadReading(2, 0, 4, None, "llama.cpp-slots", 1.0)
    assert slots.free == 2
    # Builds before is_processing said state: 0 idle, 1 processing.
    assert reading_from_slots([{"id": 0, "state": 1}, {"id": 1, "state": 0}], 0.0) == LoadReading(
        1, 0, 2, None, "llama.cpp-slots", 0.0
    )


@pytest.mark.parametrize("data", [[], {"slots": []}, [{"id": 0}], ["x"], None, [{"is_processing": "yes"}]])
def test_what_is_not_a_slots_list_or_a_metrics_page_gives_no_reading(data: object) -> None:
    assert reading_from_slots(data, 0.0) is None
    for page in ("<html><body>Not here</body></html>", "process_cpu_seconds_total 1.5\n", json.dumps(data)):
        assert reading_from_metrics(parse_prometheus(page), 0.0) is None


@pytest.mark.parametrize(
    ("base_url", "root"),
    [
        ("http://h:8000/v1", "http://h:8000"),
        ("http://h:8000/v1/", "http://h:8000"),
        ("http://h:8080", "http://h:8080"),
        ("https://gw.example/llm/v1", "https://gw.example/llm"),
        ("http://user:secret@h:8000/v1?x=1", "http://h:8000"),
    ],
)
def test_metrics_live_at_the_server_root(base_url: str, root: str) -> None:
    assert metrics_root(base_url) == root


# The monitor, over real HTTP


@pytest.mark.anyio
async def test_vllm_is_read_from_metrics_at_most_once_while_fresh(server: FakeMonitoring) -> None:
    server.routes["/metrics"] = Route(200, PROMETHEUS, VLLM_METRICS.encode())
    clock = Clock()
    async with httpx.AsyncClient() as http:
        monitor = LoadMonitor(http, server.url, now=clock)
        got = await monitor.read()
        clock.t += LOAD_FRESH_S / 2  # fresh: no request, from read() or cached()
        assert await monitor.read() is got and monitor.cached() is got
        clock.t += LOAD_FRESH_S
        assert monitor.cached() is None  # stale; cached() never asks
        again = await monitor.read()
    assert got == LoadReading(7, 3, None, 0.42, "vllm-metrics", 1000.0)
    assert again is not None and again is not got and again.read_at == clock.t
    # /slots was asked once; /metrics, having answered, is the only path asked since.
    assert server.hits == {"/slots": 1, "/metrics": 2}


@pytest.mark.anyio
async def test_llama_cpp_slots_are_read_by_default_and_metrics_when_slots_are_off(server: FakeMonitoring) -> None:
    server.routes["/slots"] = Route(200, "application/json", llama_slots([True] * 7 + [False]))
    async with httpx.AsyncClient() as http:
        got = await LoadMonitor(http, server.url).read()
    assert got is not None and (got.source, got.running, got.capacity) == ("llama.cpp-slots", 7, 8)
    assert server.hits == {"/slots": 1}

    server.routes["/slots"] = Route(*NOT_SUPPORTED)  # --no-slots
    server.routes["/metrics"] = Route(200, PROMETHEUS, LLAMA_METRICS.encode())
    async with httpx.AsyncClient() as http:
        got = await LoadMonitor(http, server.url).read()
    assert got is not None and (got.source, got.running, got.waiting) == ("llama.cpp-metrics", 4, 2)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "route",
    [Route(404, "text/plain", b"Not Found"), Route(200, "text/html", b"<!doctype html><title>app</title>"),
     Route(*NOT_SUPPORTED), Route(200, "application/json", b"\x00\xffgarbage")],
)  # fmt: skip
async def test_an_endpoint_without_metrics_is_remembered(server: FakeMonitoring, route: Route) -> None:
    server.routes = {"/slots": route, "/metrics": route}
    clock = Clock()
    async with httpx.AsyncClient() as http:
        monitor = LoadMonitor(http, server.url, now=clock)
        assert await monitor.read() is None
        clock.t += LOAD_NO_METRICS_S - 1
        assert await monitor.read() is None
        assert server.hits == {"/slots": 1, "/metrics": 1}
        clock.t += 2
        await monitor.read()
    assert server.hits == {"/slots": 2, "/metrics": 2}


@pytest.mark.anyio
async def test_concurrent_callers_share_one_request(server: FakeMonitoring) -> None:
    # Held until every caller has had its turn to ask.
    server.routes["/slots"] = Route(200, "application/json", llama_slots([True, False, False, False]), hang=True)
    results: list[LoadReading | None] = []
    async with httpx.AsyncClient() as http:
        # A generous timeout: this test is about sharing, and the request is held on purpose.
        monitor = LoadMonitor(http, server.url, timeout_s=10)

        async def ask() -> None:
            results.append(await monitor.read())

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(ask)
            await anyio.to_thread.run_sync(server.arrived.wait)
            server.release.set()
    assert server.hits == {"/slots": 1}
    assert len(results) == 20 and all(r is not None and r is results[0] for r in results)


@pytest.mark.anyio
async def test_a_hung_endpoint_costs_at_most_the_timeout_then_nothing(server: FakeMonitoring) -> None:
    server.routes["/slots"] = Route(hang=True)
    clock = Clock()
    async with httpx.AsyncClient(timeout=None) as http:  # only the monitor's own bound applies
        monitor = LoadMonitor(http, server.url, now=clock)
        started = time.perf_counter()
        assert await monitor.read() is None
        elapsed = time.perf_counter() - started
        assert await monitor.read() is None  # within the backoff: not asked again
    assert elapsed < LOAD_READ_TIMEOUT_S + 1.0  # slack for a loaded machine; the client alone would wait forever
    assert server.hits == {"/slots": 1}


@pytest.mark.anyio
async def test_failures_in_a_row_are_remembered_as_no_metrics(server: FakeMonitoring) -> None:
    server.routes["/slots"] = Route(hang=True)
    clock = Clock()
    async with httpx.AsyncClient() as http:
        monitor = LoadMonitor(http, server.url, now=clock, timeout_s=0.05)
        for _ in range(LOAD_FAILURES_BEFORE_GIVING_UP):
            assert await monitor.read() is None
            clock.t += LOAD_FAILURE_BACKOFF_S + 0.1
        assert server.hits == {"/slots": LOAD_FAILURES_BEFORE_GIVING_UP}
        clock.t += LOAD_NO_METRICS_S - 2 * LOAD_FAILURE_BACKOFF_S
        assert await monitor.read() is None
        assert server.hits == {"/slots": LOAD_FAILURES_BEFORE_GIVING_UP}  # given up for the long window
        clock.t += 2 * LOAD_FAILURE_BACKOFF_S
        await monitor.read()
    assert server.hits == {"/slots": LOAD_FAILURES_BEFORE_GIVING_UP + 1}


@pytest.mark.anyio
async def test_a_loading_server_is_asked_again_soon_and_a_moved_path_found_at_once(server: FakeMonitoring) -> None:
    loading = Route(503, "application/json", b'{"error":{"code":503,"message":"Loading model"}}')
    server.routes = {"/slots": loading, "/metrics": loading}
    clock = Clock()
    async with httpx.AsyncClient() as http:
        monitor = LoadMonitor(http, server.url, now=clock)
        assert await monitor.read() is None
        clock.t += LOAD_FAILURE_BACKOFF_S + 0.1  # a 503 is not "no metrics": asked again after the short backoff
        server.routes = {"/slots": Route(200, "application/json", llama_slots([False, True]))}
        assert (await monitor.read()) is not None
        # Restarted with --no-slots --metrics: the remembered path fails, the other is asked in the same read.
        server.routes = {"/slots": Route(*NOT_SUPPORTED), "/metrics": Route(200, PROMETHEUS, LLAMA_METRICS.encode())}
        clock.t += LOAD_FRESH_S + 0.1
        got = await monitor.read()
    assert got is not None and got.source == "llama.cpp-metrics"
    assert server.hits == {"/slots": 3, "/metrics": 1}


@pytest.mark.anyio
async def test_a_cancelled_reader_leaves_no_one_waiting(server: FakeMonitoring) -> None:
    server.routes["/slots"] = Route(200, "application/json", llama_slots([False]), hang=True)
    followed: list[LoadReading | None] = []
    async with httpx.AsyncClient() as http:
        monitor = LoadMonitor(http, server.url, timeout_s=10)
        leader = anyio.CancelScope()

        async def lead() -> None:
            with leader:
                await monitor.read()

        async def follow() -> None:
            followed.append(await monitor.read())

        async with anyio.create_task_group() as tg:
            tg.start_soon(lead)
            await anyio.to_thread.run_sync(server.arrived.wait)
            tg.start_soon(follow)
            await anyio.wait_all_tasks_blocked()
            leader.cancel()
        assert followed == [None]
        server.release.set()
        assert await monitor.read() is not None  # nothing was cached: the next reader asks afresh
    assert server.hits == {"/slots": 2}


@pytest.mark.anyio
async def test_the_clients_key_reaches_the_server_and_never_the_log(
    server: FakeMonitoring, caplog: pytest.LogCaptureFixture
) -> None:
    server.routes["/slots"] = Route(200, "application/json", llama_slots([False]))
    caplog.set_level(logging.DEBUG, logger="sot.load")
    async with httpx.AsyncClient(headers={"Authorization": "Bearer sk-secret-key-123"}) as http:
        assert await LoadMonitor(http, server.url.replace("http://", "http://me:pw@")).read() is not None
    assert server.headers[0]["Authorization"] == "Bearer sk-secret-key-123"
    assert caplog.records and "sk-secret" not in caplog.text and "pw" not in caplog.text


# The decision


# llama.cpp (capacity known): all points, as many as there are free slots, or sequential when full or
# queuing; vLLM (no capacity): all points unless queuing or the KV cache is nearly full; no reading: sot's
# own calls against its own limit on them (10 here), the full fan-out where it has none. One point (or
# max_parallel 1) is the caller's limit, not the load's.
@pytest.mark.parametrize(
    ("load", "own", "points", "mode", "width", "says", "limit"),
    [
        (reading(0, capacity=8), 0, 5, "sot", 5, "room for 5", None),
        (reading(5, capacity=8), 0, 5, "sot", 3, "5 of 8 slots running, 3 free", None),
        (reading(7, capacity=8), 0, 5, "sequential", 1, "server busy: 7 of 8 slots running", None),
        (reading(8, capacity=8), 0, 5, "sequential", 1, "server busy", None),
        (reading(7, 3, capacity=8), 0, 5, "sequential", 1, "server busy: 7 of 8 slots running, 3 waiting", None),
        (reading(2, 1), 0, 5, "sequential", 1, "1 waiting", None),
        (reading(30, kv_usage=0.5), 0, 5, "sot", 5, "KV cache 50% full", None),
        (reading(30, kv_usage=KV_HIGH_MARK + 0.05), 0, 5, "sequential", 1, "KV cache 95% full", None),
        (reading(30), 0, 12, "sot", 8, "room for 8", None),
        (None, 0, 5, "sot", 5, "no load reading", 10),
        (None, 9, 5, "sot", 5, "the full fan-out", None),
        (None, 7, 5, "sot", 3, "7 of its 10 calls in flight, 3 left", 10),
        (None, 9, 5, "sequential", 1, "sot calls fill the backend", 10),
        (reading(0, capacity=8), 0, 1, "sot", 1, "1 at a time allowed", None),
    ],
)
def test_decision_table(
    load: LoadReading | None, own: int, points: int, mode: str, width: int, says: str, limit: int | None
) -> None:
    fan = decide_fan_out(load, own_in_flight=own, points=points, max_parallel=8, own_limit=limit)
    assert (fan.mode, fan.width) == (mode, width), fan.reason
    assert says in fan.reason
    assert 1 <= fan.width <= 8


def test_the_decision_serialises_with_its_inputs() -> None:
    fan = decide_fan_out(reading(7, 3, capacity=8), own_in_flight=2, points=5, max_parallel=8)
    load = {"source": "llama.cpp-slots", "running": 7, "waiting": 3, "capacity": 8, "kv_usage": None}
    reason = "server busy: 7 of 8 slots running, 3 waiting"
    assert fan.to_dict() == {"mode": "sequential", "width": 1, "reason": reason, "points": 5, "max_parallel": 8,
                             "own_in_flight": 2, "load": load}  # fmt: skip
    assert json.loads(json.dumps(fan.to_dict())) == fan.to_dict()


def test_a_reply_no_parser_expected_gives_no_reading_and_no_error(server: FakeMonitoring) -> None:
    server.routes["/slots"] = Route(body=("[" * 100_000 + "]" * 100_000).encode())
    assert anyio.run(_read_once, server.url) is None  # nested past any parser's depth: no reading, no error
    huge = 'vllm:num_requests_running{model_name="m"} 1e308\nvllm:num_requests_running{model_name="n"} 1e308\n'
    server.routes = {"/metrics": Route(content_type="text/plain", body=huge.encode())}
    reading = anyio.run(_read_once, server.url)
    assert reading is not None and reading.running == 1_000_000  # past any real count: the cap


async def _read_once(url: str) -> LoadReading | None:
    async with httpx.AsyncClient() as http:
        return await LoadMonitor(http, url).read()


def test_answers_deciding_on_one_reading_share_its_free_slots() -> None:
    grants = Grants()
    load = reading(0, capacity=8)
    first = decide_fan_out(load, own_in_flight=0, points=6, max_parallel=8, granted=grants.since(load.read_at))
    grants.give(first.width, load.read_at + 0.1)
    second = decide_fan_out(load, own_in_flight=0, points=6, max_parallel=8, granted=grants.since(load.read_at))
    assert (first.width, second.width) == (6, 2) and "6 given to other answers since" in second.reason
