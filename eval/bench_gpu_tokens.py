"""Benchmark: time per output token of a model at 1 to N concurrent streams, every stream exactly as long.

It starts llama.cpp's server with sot's launcher (one slot per stream of the largest count, every
layer on the GPU) and, per stream count, sends that many `/completion` requests at once, each with
its own prompt of `--prompt-tokens` tokens and `n_predict` = `--n-predict` with `ignore_eos`, so no
stream stops early and the counts compare like with like (the report checks every stream's length).
Per count: the server's own decode time per token of each stream (`timings.predicted_ms /
predicted_n`, which leaves the prompt out: median and slowest stream) and all streams' output
tokens over the wall time. Each count runs `--repeats` times and the last run is reported, so the
first run of a batch shape (CUDA graph capture, kernel choice) is not measured. The prompts are
text tokenised by the server, so any GGUF works; on a lent GPU the model is eval/gpu/random_gguf.py's
Llama-3-8B-shaped one.

The figures go into PREFIX.json and PREFIX.md (`--results`, as written by eval/bench_gpu.py, which
renders them; a new report is made where there is none), rewritten after every stream count.

    python eval/bench_gpu_tokens.py --results eval/results/gpu_bench [--gguf MODEL.gguf] [--llama-server PATH]
        [--streams 1,4,8,16,32,64] [--n-predict 128] [--prompt-tokens 32] [--budget-s S]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import bench_gpu
import httpx

from sot.backends.llama_server import ServerSettings, find_server, llama_server
from sot.backends.model_files import resolve_model

FILLER = (
    "Write a long and detailed report about the history of lighthouses, their keepers, the lamps and "
    "lenses they used, and how ships found their way along dangerous coasts before radio and satellites."
)


async def post(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await http.post(url, json=body)
    reply.raise_for_status()
    return dict(reply.json())


async def prompts(http: httpx.AsyncClient, base: str, count: int, length: int) -> list[list[int]]:
    """`count` distinct prompts of exactly `length` tokens of the server's own vocabulary."""
    out = []
    for i in range(count):
        found = await post(http, f"{base}/tokenize", {"content": f"Stream {i}. {FILLER}", "add_special": False})
        tokens: list[int] = found["tokens"]
        out.append((tokens * (length // len(tokens) + 1))[:length])
    return out


async def level(http: httpx.AsyncClient, base: str, prompts: list[list[int]], n_predict: int) -> dict[str, Any]:
    """All prompts at once; the server's timings of each stream and the wall time of all."""
    timings: list[dict[str, Any]] = []

    async def one(prompt: list[int]) -> None:
        body = {
            "prompt": prompt,
            "n_predict": n_predict,
            "ignore_eos": True,
            "temperature": 0,
            # Each request computes its prompt afresh: a cached one would make later counts cheaper.
            "cache_prompt": False,
            "stream": False,
        }
        timings.append((await post(http, f"{base}/completion", body))["timings"])

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for prompt in prompts:
            tg.start_soon(one, prompt)
    wall = time.perf_counter() - start
    per_token = [t["predicted_ms"] / t["predicted_n"] for t in timings if t["predicted_n"]]
    produced = [t["predicted_n"] for t in timings]
    return {
        "streams": len(prompts),
        "ms_per_token_median": round(statistics.median(per_token), 3),
        "ms_per_token_max": round(max(per_token), 3),
        "tokens_per_s": round(sum(produced) / wall, 1),
        "wall_s": round(wall, 3),
        "full_length": all(n == n_predict for n in produced),
        "output_tokens": sorted(set(produced)),
        "prompt_ms_median": round(statistics.median(t["prompt_ms"] for t in timings), 3),
    }


def report(args: argparse.Namespace) -> dict[str, Any]:
    """The report to add to: PREFIX.json as it is, else a new one with the device, build and commit."""
    existing = Path(f"{args.results}.json")
    if existing.is_file():
        return dict(json.loads(existing.read_text()))
    return {**bench_gpu.summary_head(args), "runs": []}


def model_info(args: argparse.Namespace, gguf: Path) -> dict[str, Any]:
    if args.model_info:
        return bench_gpu.read_json(args.model_info)
    return {"label": gguf.name, "description": f"{gguf.name}, {gguf.stat().st_size / 1e6:,.1f} MB"}


async def main(args: argparse.Namespace) -> None:
    end = time.monotonic() + args.budget_s if args.budget_s else None
    summary = await anyio.to_thread.run_sync(report, args)
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    slots = max(args.streams)
    # Room for the prompt, the output and the BOS token in every slot, rounded up.
    per_slot = -(-(args.prompt_tokens + args.n_predict + 16) // 256) * 256
    program = await anyio.to_thread.run_sync(find_server, args.llama_server)
    gguf = await anyio.to_thread.run_sync(resolve_model, args.gguf, program.tool("llama-quantize"))
    settings = ServerSettings(program, gguf, slots, ctx_per_slot=per_slot, gpu_layers=args.gpu_layers)
    section: dict[str, Any] = {
        "model": model_info(args, gguf),
        "gguf": gguf.name,
        "program": program.label,
        "server_flags": bench_gpu.server_flags(settings),
        "prompt_tokens": args.prompt_tokens,
        "n_predict": args.n_predict,
        "repeats": args.repeats,
        "budget_s": args.budget_s,
        "levels": [],
        "all_runs": [],
        "skipped_streams": [],
    }
    summary["token_latency"] = section
    server = llama_server(settings, Path(args.log))
    started = time.perf_counter()
    await server.start(timeout=args.start_timeout_s)
    section["server_start_s"] = round(time.perf_counter() - started, 1)
    print(f"{program.label} serving {gguf.name} with {slots} slots", flush=True)
    base = f"http://127.0.0.1:{server.port}"
    try:
        limits = httpx.Limits(max_connections=slots + 8, max_keepalive_connections=slots + 8)
        async with httpx.AsyncClient(timeout=httpx.Timeout(args.request_timeout_s), limits=limits) as http:
            all_prompts = await prompts(http, base, slots, args.prompt_tokens)
            await level(http, base, all_prompts[:1], 8)  # first load and kernel set-up, not measured
            spent = 0.0
            for streams in args.streams:
                # A count runs about as long as the last, up to twice: skip any that could outrun the budget.
                if end is not None and time.monotonic() + 2 * spent > end:
                    section["skipped_streams"].append(streams)
                    continue
                began = time.monotonic()
                runs = [await level(http, base, all_prompts[:streams], args.n_predict) for _ in range(args.repeats)]
                spent = time.monotonic() - began
                section["all_runs"].append(runs)
                section["levels"].append(runs[-1])
                print(json.dumps(runs[-1]), flush=True)
                bench_gpu.write_report(args.results, summary)
    finally:
        await server.stop()
    bench_gpu.write_report(args.results, summary)
    print("\n".join(bench_gpu.token_latency_markdown(section)))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", help="the model file (default: the bundled SmolLM2-135M)")
    parser.add_argument("--llama-server", help="llama-server binary (default: sot's own choice)")
    parser.add_argument("--results", required=True, help="add to PREFIX.json and PREFIX.md (made if missing)")
    parser.add_argument("--model-info", help="JSON from eval/gpu/random_gguf.py --info (label, shape, write time)")
    parser.add_argument("--streams", type=bench_gpu.counts, default=[1, 4, 8, 16, 32, 64], help="stream counts")
    parser.add_argument("--n-predict", type=int, default=128, help="output tokens of every stream")
    parser.add_argument("--prompt-tokens", type=int, default=32, help="prompt tokens of every stream")
    parser.add_argument("--repeats", type=int, default=2, help="runs per stream count; the last is reported")
    parser.add_argument("--gpu-layers", type=int, default=bench_gpu.ALL_LAYERS)
    parser.add_argument("--budget-s", type=float, default=0, help="skip the stream counts past this (0: no limit)")
    parser.add_argument("--start-timeout-s", type=float, default=300, help="for the server to load the model")
    parser.add_argument("--request-timeout-s", type=float, default=300)
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "llama-server-tokens.log"))
    parser.add_argument("--build-time-s", type=float, help="for a new report: how long building llama-server took")
    parser.add_argument("--build-info", help="for a new report: JSON from eval/gpu/run_device.sh")
    parser.add_argument("--commit-file", help="for a new report: JSON with commit and uncommitted_changes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse())
