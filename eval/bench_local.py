"""Benchmark: SoT against sequential answers on the embedded local backend, in one run.

For every `sot_suitable` question of ../shared/data/vicuna80.jsonl both modes run on the same
server (alternating which goes first), so the ratio compares like with like. It also measures the
server's aggregate decode throughput at 1, 4 and 8 concurrent streams, and records the machine.

    python eval/bench_local.py [--limit N] [--out eval/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from sot.backends.base import ChatRequest
from sot.backends.local import LocalBackend, LocalConfig

import sot
from sot.constants import LOCAL_SKELETON_FREQUENCY_PENALTY
from sot.templates import Message

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "vicuna80.jsonl"


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


async def throughput(local: LocalBackend, streams: int, tokens: int = 128) -> float:
    """Aggregate completion tokens per second with `streams` requests decoding at once."""
    request = ChatRequest(
        [Message("user", "Write a long story about a lighthouse keeper.")], max_tokens=tokens, temperature=0
    )
    counts: list[int] = []

    async def one() -> None:
        n = 0
        async for chunk in local.backend.stream_chat(request):
            if chunk.usage is not None:
                n = chunk.usage.completion_tokens
        counts.append(n)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(streams):
            tg.start_soon(one)
    return sum(counts) / (time.perf_counter() - start)


async def main(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    questions = [r for r in rows if r.get("sot_suitable")][: args.limit or None]
    config = LocalConfig(slots=8)
    model_name = (await anyio.to_thread.run_sync(config.settings)).gguf.name
    local = await LocalBackend.start(config)
    try:
        await throughput(local, 1, 16)  # warm-up
        tps = {str(n): round(await throughput(local, n), 1) for n in (1, 4, 8)}
        results = []
        options: dict[str, Any] = {
            "temperature": 0,
            "max_parallel": 8,
            "skeleton_frequency_penalty": LOCAL_SKELETON_FREQUENCY_PENALTY,
        }
        async with sot.Client(backend=local.backend, **options) as client:
            for i, row in enumerate(questions):
                order = ["sot", "sequential"] if i % 2 == 0 else ["sequential", "sot"]
                answers = {mode: await client.ask(row["question"], mode=mode) for mode in order}
                sot_a, seq_a = answers["sot"], answers["sequential"]
                results.append(
                    {
                        "id": row["question_id"],
                        "category": row["category"],
                        "sot_s": round(sot_a.timings.total_s, 3),
                        "sequential_s": round(seq_a.timings.total_s, 3),
                        "ratio": round(seq_a.timings.total_s / sot_a.timings.total_s, 3),
                        "sot_mode_used": sot_a.mode,
                        "points": len(sot_a.points),
                        "sot_tokens": sot_a.usage.completion_tokens,
                        "sequential_tokens": seq_a.usage.completion_tokens,
                        "sot_first_token_s": sot_a.timings.first_token_s,
                        "sequential_first_token_s": seq_a.timings.first_token_s,
                    }
                )
                print(json.dumps(results[-1]), flush=True)
    finally:
        await local.aclose()
    summary = {
        "machine": machine(),
        "model": model_name,
        "questions": len(results),
        "throughput_tokens_per_s": tps,
        "throughput_scaling": {n: round(tps[n] / tps["1"], 2) for n in ("4", "8")},
        "median_sot_s": round(statistics.median(r["sot_s"] for r in results), 3),
        "median_sequential_s": round(statistics.median(r["sequential_s"] for r in results), 3),
        "median_ratio_sequential_over_sot": round(statistics.median(r["ratio"] for r in results), 3),
        "median_sot_tokens": statistics.median(r["sot_tokens"] for r in results),
        "median_sequential_tokens": statistics.median(r["sequential_tokens"] for r in results),
        "rows": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "local_bench.json").write_text(json.dumps(summary, indent=1))
    (out / "local_bench.md").write_text(markdown(summary))
    print(markdown(summary))


def markdown(s: dict[str, Any]) -> str:
    m = s["machine"]
    lines = [
        "# SoT vs sequential on the local backend",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}. Model: {s['model']}, temperature 0.",
        f"Server decode throughput (tokens/s) at 1/4/8 streams: {s['throughput_tokens_per_s']} "
        f"(scaling x{s['throughput_scaling']['4']} at 4, x{s['throughput_scaling']['8']} at 8).",
        "",
        f"{s['questions']} sot_suitable questions of vicuna80, both modes in the same run:",
        f"median SoT {s['median_sot_s']} s, median sequential {s['median_sequential_s']} s, "
        f"median per-question ratio sequential/SoT **{s['median_ratio_sequential_over_sot']}** "
        f"(> 1 means SoT is faster). Median completion tokens: SoT {s['median_sot_tokens']}, "
        f"sequential {s['median_sequential_tokens']}.",
        "",
        "| id | category | SoT s | sequential s | ratio | points | SoT tokens | seq tokens |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s["rows"]:
        lines.append(
            f"| {r['id']} | {r['category']} | {r['sot_s']} | {r['sequential_s']} | {r['ratio']} | {r['points']} "
            f"| {r['sot_tokens']} | {r['sequential_tokens']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "results"))
    anyio.run(main, parser.parse_args())
