"""Benchmark: what `sot proxy` adds, on loopback, against the fake upstream (bounded: a few seconds).

The proxy runs as its own process (`sot proxy`), the fake upstream on a thread of this one, and the
load generator is httpx on this one's event loop, so direct and proxied requests share every cost
but the proxy's.

1. Added latency to first byte: N concurrent streams (50, the acceptance figure, and 200), rounds
   alternating direct (client -> upstream) and proxied (client -> proxy -> upstream), the proxy
   answering sequentially (`MODEL+seq`: one upstream call) and passing through (a request with
   tools). First byte = the first chunk carrying answer text. Added = proxied percentile minus direct
   percentile, same run.
2. 200 concurrent SoT streams (`MODEL+sot`, points finishing in reverse order upstream): every
   response complete, in reading order, with [DONE] and usage; the proxy's peak RSS.

    python eval/bench_proxy.py [--rounds 5] [--out eval/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import psutil
from _bench_common import SOT_COMMAND, percentile, reach_test_fakes
from results_io import RESULTS, save

reach_test_fakes()
from _fakes import FakeServer, Reply, SeenRequest, sot_script  # noqa: E402

QUESTION = "What are good ways to sleep better?"
POINTS = ["Keep a fixed schedule", "Dim the lights at night", "Avoid late caffeine", "Cool quiet bedroom"]
FIRST_DELAY_S = 0.05  # the upstream's time to first token
TOKEN_DELAY_S = 0.01  # 100 words a second per stream: a fast upstream, the proxy's hardest case
API_TOKEN_DELAY_S = 0.025  # 40 a second: about what hosted APIs stream
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


def handler(token_delay: float = TOKEN_DELAY_S) -> Any:
    sot = sot_script(
        POINTS,
        expansion_delay=lambda n: 0.02 * (len(POINTS) - n),  # point 1 finishes last
        token_delay=token_delay,
    )

    def handle(request: SeenRequest) -> Reply:
        if request.kind in ("skeleton", "expand"):
            return sot(request)
        words = " ".join(["word"] * 20)
        return Reply(words, first_delay=FIRST_DELAY_S, token_delay=token_delay)

    return handle


def expected_sot_text() -> str:
    """The scripted answer as a full answer shows it: every section under its own heading."""
    return "\n\n".join(f"**{i}. {p}**\n\nDetails on {p} for point {i}." for i, p in enumerate(POINTS, 1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def one_stream(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """Time to the first text chunk and the whole streamed text."""
    start = time.perf_counter()
    first: float | None = None
    pieces: list[str] = []
    done = usage = False
    finishes: list[str] = []
    async with http.stream("POST", url, json=body) as response:
        status = response.status_code
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                done = True
                continue
            event = json.loads(data)
            if event.get("usage"):
                usage = True
            for choice in event.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    first = first if first is not None else time.perf_counter() - start
                    pieces.append(text)
                if choice.get("finish_reason"):
                    finishes.append(choice["finish_reason"])
    return {
        "status": status,
        "first_s": first,
        "text": "".join(pieces),
        "done": done,
        "usage": usage,
        "finishes": finishes,
        "total_s": time.perf_counter() - start,
    }


async def burst(
    url: str, body: dict[str, Any], n: int, repeats: int = 1, stagger_s: float = 0.0
) -> list[dict[str, Any]]:
    """`n` concurrent streams; each worker makes `repeats` requests one after another, worker i starting
    after i * `stagger_s` (0: all at once, a burst; > 0: streams opening and closing, a steady load)."""
    results: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=n + 8, max_keepalive_connections=n + 8)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:

        async def run(i: int) -> None:
            await anyio.sleep(i * stagger_s)
            for _ in range(repeats):
                results.append(await one_stream(http, url, body))

        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(run, i)
    return results


def added_latency(
    upstream: str, proxy: str, n: int, rounds: int, process: psutil.Process, stagger_s: float
) -> dict[str, Any]:
    seq = {"model": "fake-model", "messages": [{"role": "user", "content": QUESTION}], "stream": True}
    cases = {
        "direct": (upstream, seq),
        "proxied_sequential": (proxy, {**seq, "model": "fake-model+seq"}),
        "passthrough_tools": (proxy, {**seq, "tools": TOOLS}),
    }
    repeats = 3 if stagger_s else 1
    firsts: dict[str, list[float]] = {name: [] for name in cases}
    round_p50s: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, float] = dict.fromkeys(cases, 0.0)
    for _ in range(rounds):
        for name, (url, body) in cases.items():
            before = sum(process.cpu_times()[:2])
            results = anyio.run(burst, f"{url}/chat/completions", body, n, repeats, stagger_s)
            cpu[name] += sum(process.cpu_times()[:2]) - before
            assert all(r["status"] == 200 and r["done"] and r["first_s"] is not None for r in results), name
            firsts[name] += [r["first_s"] for r in results]
            round_p50s[name].append(percentile([r["first_s"] for r in results], 0.5))
    count = len(firsts["direct"])
    out: dict[str, Any] = {
        "concurrent_streams": n,
        "arrival": f"staggered {stagger_s * 1000:g} ms apart, {repeats} requests per stream" if stagger_s else "burst",
        "requests_per_case": count,
    }
    out["proxy_cpu_ms_per_request"] = {name: cpu[name] / count * 1000 for name in cases if name != "direct"}
    for name, values in firsts.items():
        out[f"{name}_first_byte_ms"] = {"p50": percentile(values, 0.5) * 1000, "p99": percentile(values, 0.99) * 1000}
    for name in ("proxied_sequential", "passthrough_tools"):
        out[f"{name}_added_ms"] = {
            q: out[f"{name}_first_byte_ms"][q] - out["direct_first_byte_ms"][q] for q in ("p50", "p99")
        }
        # Each round's p50 against the direct p50 of the same round, then the median of those: a round
        # the VM stalled in (its direct p99 jumps) moves this one figure by one place, not the pooled p50.
        deltas = [(a - b) * 1000 for a, b in zip(round_p50s[name], round_p50s["direct"], strict=True)]
        out[f"{name}_added_ms"]["p50_median_of_rounds"] = statistics.median(deltas)
    return out


def client_cpu(upstream: str, requests: int = 100) -> dict[str, float]:
    """CPU per request of sot's own Client (no proxy) and of a bare httpx stream, on this thread."""
    from bench_client import bare_ms, sot_ms

    return {
        "sot_client_sequential": anyio.run(sot_ms, upstream, requests, "fake-model"),
        "bare_httpx_stream": anyio.run(bare_ms, upstream, requests, "fake-model"),
    }


def sot_load(proxy: str, n: int, process: psutil.Process) -> dict[str, Any]:
    body = {
        "model": "fake-model+sot",
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    peak = [process.memory_info().rss]
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.02):
            peak[0] = max(peak[0], process.memory_info().rss)

    before = process.memory_info().rss
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.perf_counter()
    results = anyio.run(burst, f"{proxy}/chat/completions", body, n)
    wall = time.perf_counter() - started
    stop.set()
    watcher.join()
    expected = expected_sot_text()
    complete = [r for r in results if r["status"] == 200 and r["done"] and r["usage"] and r["finishes"] == ["stop"]]
    ordered = [r for r in complete if r["text"] == expected]
    return {
        "concurrent_streams": n,
        "complete": len(complete),
        "complete_and_ordered": len(ordered),
        "wall_s": wall,
        "answer_p50_s": statistics.median(r["total_s"] for r in results),
        "first_text_p50_ms": statistics.median(r["first_s"] or 0 for r in results) * 1000,
        "proxy_rss_mb": {"before": before / 2**20, "peak": peak[0] / 2**20, "after": process.memory_info().rss / 2**20},
    }


def start_proxy(upstream: str) -> tuple[str, subprocess.Popen[bytes]]:
    """`sot proxy` in its own process in front of `upstream`; its base URL once /health answers."""
    port = free_port()
    command = [SOT_COMMAND, "proxy", "--upstream", upstream, "--model", "fake-model"]
    command += ["--port", str(port), "--router", "rules", "--max-concurrent", "512"]
    command += ["--max-upstream-calls", "2048", "--max-parallel", "8"]
    env = {**os.environ, "SOT_API_KEY": "", "OPENAI_API_KEY": ""}
    proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    return f"http://127.0.0.1:{port}/v1", proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    with FakeServer(handler()) as server, FakeServer(handler(API_TOKEN_DELAY_S)) as api_server:
        (proxy, proc), (api_proxy, api_proc) = start_proxy(server.url), start_proxy(api_server.url)
        try:
            process, api_process = psutil.Process(proc.pid), psutil.Process(api_proc.pid)
            for url in (proxy, api_proxy):
                anyio.run(
                    burst,
                    f"{url}/chat/completions",
                    {"model": "fake-model+sot", "messages": [{"role": "user", "content": QUESTION}], "stream": True},
                    4,
                )  # warm-up
            summary: dict[str, Any] = {
                "machine": f"{platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
                f"(load average {os.getloadavg()[0]:.1f} at start)",
                "upstream": f"fake server: first token {FIRST_DELAY_S * 1000:.0f} ms, "
                f"{TOKEN_DELAY_S * 1000:.0f} ms per word",
                # 50 streams open at any time, opening about one answer's length / 50 apart.
                "added_latency_50_steady": added_latency(server.url, proxy, 50, args.rounds, process, 0.006),
                "added_latency_50_steady_api_speed": added_latency(
                    api_server.url, api_proxy, 50, args.rounds, api_process, 0.011
                ),
                "added_latency_50_burst": added_latency(server.url, proxy, 50, args.rounds, process, 0.0),
                "added_latency_200_burst": added_latency(
                    server.url, proxy, 200, max(1, args.rounds // 2), process, 0.0
                ),
                "sot_200": sot_load(proxy, 200, process),
                "cpu_ms_per_request_without_proxy": client_cpu(server.url),
            }
        finally:
            for running in (proc, api_proc):
                running.terminate()
                running.wait(10)
    save(args.out, "proxy_bench", summary)
    write_markdown(Path(args.out) / "proxy_bench.md", summary)


def _pair(d: dict[str, float]) -> str:
    rounds = f" (rounds: {d['p50_median_of_rounds']:.1f})" if "p50_median_of_rounds" in d else ""
    return f"{d['p50']:.1f}{rounds} / {d['p99']:.1f}"


def write_markdown(path: Path, s: dict[str, Any]) -> None:
    rows = []
    for key in (
        "added_latency_50_steady",
        "added_latency_50_steady_api_speed",
        "added_latency_50_burst",
        "added_latency_200_burst",
    ):
        a = s[key]
        speed = f"{API_TOKEN_DELAY_S * 1000:.0f} ms per word" if key.endswith("api_speed") else "upstream as above"
        cells = [
            str(a["concurrent_streams"]),
            f"{a['arrival']}; {speed}",
            str(a["requests_per_case"]),
            _pair(a["direct_first_byte_ms"]),
            _pair(a["proxied_sequential_added_ms"]),
            _pair(a["passthrough_tools_added_ms"]),
            f"{a['proxy_cpu_ms_per_request']['proxied_sequential']:.1f} / "
            f"{a['proxy_cpu_ms_per_request']['passthrough_tools']:.1f}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    sot = s["sot_200"]
    rss = sot["proxy_rss_mb"]
    header = [
        "concurrent streams",
        "arrival",
        "requests per case",
        "direct first byte p50 / p99",
        "added: SoT proxy answering sequentially, p50 / p99",
        "added: pass-through (tools), p50 / p99",
        "proxy CPU ms per request (sequential / pass-through)",
    ]
    path.write_text(
        "# sot proxy: added latency and load (eval/bench_proxy.py)\n\n"
        f"Machine: {s['machine']}. Upstream: {s['upstream']}. All on loopback; the proxy is its own process.\n\n"
        "Added latency to the first answer text = proxied percentile minus direct percentile, same run (ms); "
        "in brackets, the median over rounds of each round's proxied p50 minus its direct p50. Percentiles "
        "interpolate between ranks, as `sot batch`'s report does.\n\n"
        "| " + " | ".join(header) + " |\n" + "|---" * len(header) + "|\n" + "\n".join(rows) + "\n\n"
        f"{sot['concurrent_streams']} concurrent SoT streams ({len(POINTS)} points, finishing in reverse order "
        f"upstream): {sot['complete']} complete ([DONE], usage, finish_reason stop), {sot['complete_and_ordered']} "
        f"with exactly the expected text in reading order; wall {sot['wall_s']:.2f} s, median answer "
        f"{sot['answer_p50_s']:.2f} s. Proxy RSS: {rss['before']:.0f} MB before, {rss['peak']:.0f} MB peak, "
        f"{rss['after']:.0f} MB after.\n\n"
        "CPU per request without the proxy, same upstream answer (ms): sot's own Client answering sequentially "
        f"{s['cpu_ms_per_request_without_proxy']['sot_client_sequential']:.1f}, a bare httpx stream of it "
        f"{s['cpu_ms_per_request_without_proxy']['bare_httpx_stream']:.1f}.\n"
    )


if __name__ == "__main__":
    main()
