"""sot's own CPU per call and per streamed piece, against a bare httpx stream of the same answer.

A scripted server on loopback, in a process of its own (as a real server is: in this process its thread
would compete with the client's for the interpreter lock), streams a sequential answer of N words, one
word per SSE chunk; sot's Client reads it through ``Client.stream`` (as the CLI and the proxy do: every
event made) and a bare ``httpx`` stream reads its lines, each `--reps` times, CPU time of this thread
only. Two lengths give what a call costs whatever its length (the difference at the short answer, less
its pieces) and what each streamed piece adds.

    python eval/bench_client.py [--reps 30] [--short 20] [--long 400]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
from _bench_common import machine, reach_test_fakes
from results_io import RESULTS, save

import sot

reach_test_fakes()
from _fakes import FakeServer, sot_script  # noqa: E402

QUESTION = "How can I improve my time management skills?"


async def sot_ms(url: str, reps: int, model: str = "m") -> float:
    """sot's CPU ms per sequential answer streamed from `url` (as the CLI and the proxy read it)."""
    async with sot.Client(base_url=url, model=model, mode="sequential", max_tokens=100_000) as client:
        await client.ask(QUESTION)  # connections and templates: nothing of it is measured
        started = time.thread_time()
        for _ in range(reps):
            async with client.stream(QUESTION) as events:
                async for _event in events:
                    pass
        return (time.thread_time() - started) / reps * 1000


async def bare_ms(url: str, reps: int, model: str = "m") -> float:
    """A bare httpx stream's CPU ms per answer from `url`, its lines read."""
    body = {"model": model, "messages": [{"role": "user", "content": QUESTION}], "stream": True}
    async with httpx.AsyncClient() as http:
        await _read(http, url, body)  # the connection, as sot's is made before its timing starts
        started = time.thread_time()
        for _ in range(reps):
            await _read(http, url, body)
        return (time.thread_time() - started) / reps * 1000


async def _read(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> None:
    async with http.stream("POST", f"{url}/chat/completions", json=body) as response:
        async for _line in response.aiter_lines():
            pass


@contextmanager
def server_process(text: str) -> Iterator[str]:
    """The scripted server answering `text`, in a process of its own until the block ends; its URL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", text], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"the scripted server did not start (exit status {process.wait()})")
        yield url
    finally:
        assert process.stdin is not None
        process.stdin.close()  # the server's cue to stop
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _serve(text: str) -> None:
    with FakeServer(sot_script(sequential_text=text)) as server:
        print(server.url, flush=True)
        sys.stdin.read()


def one_length(words: int, reps: int, rounds: int) -> dict[str, float]:
    """Medians over `rounds` of (sot, bare) ms per call, rounds interleaved."""
    text = " ".join(f"word{i}" for i in range(words))
    with_sot: list[float] = []
    bare: list[float] = []
    with server_process(text) as url:
        for _ in range(rounds):
            with_sot.append(anyio.run(sot_ms, url, reps))
            bare.append(anyio.run(bare_ms, url, reps))
    return {"words": words, "sot_ms": statistics.median(with_sot), "bare_httpx_ms": statistics.median(bare)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--short", type=int, default=20)
    parser.add_argument("--long", type=int, default=400)
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the server process (server_process)
    args = parser.parse_args()
    if args.serve is not None:
        return _serve(args.serve)
    short, long = (one_length(n, args.reps, args.rounds) for n in (args.short, args.long))
    extra_short = short["sot_ms"] - short["bare_httpx_ms"]
    extra_long = long["sot_ms"] - long["bare_httpx_ms"]
    per_piece_us = (extra_long - extra_short) / (args.long - args.short) * 1000
    summary: dict[str, Any] = {
        "machine": machine(),
        "server": "scripted, in a process of its own",
        "short": short,
        "long": long,
        "per_call_ms_above_bare": round(extra_short - per_piece_us * args.short / 1000, 3),
        "per_piece_us_above_bare": round(per_piece_us, 1),
        "targets": {"per_call_ms_above_bare": 2.0, "per_piece_us_above_bare": 20.0},
    }
    save(RESULTS, "client_bench", summary)


if __name__ == "__main__":
    main()
