"""Benchmark: SoT against sequential answers on the embedded local backend, in one run.

For every `sot_suitable` question of ../shared/data/vicuna80.jsonl both modes run on the same
server (alternating which goes first), so the ratio compares like with like. It also measures the
server's aggregate decode throughput at 1, 4 and 8 concurrent streams, and records the machine.

    python eval/bench_local.py [--limit N] [--out eval/results]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import anyio
from _bench_common import (
    DATA,
    HERE,
    machine,
    paired_row,
    question_table,
    scaling,
    speedup_markdown,
    speedup_summary,
    suitable_questions,
    throughputs,
)

import sot
from sot.backends.local import LocalBackend, LocalConfig


async def main(args: argparse.Namespace) -> None:
    questions = suitable_questions(args.data, args.limit)
    config = LocalConfig(slots=8)
    model_name = (await anyio.to_thread.run_sync(config.settings)).gguf.name
    local = await LocalBackend.start(config)
    try:
        tps = await throughputs(local.backend, (1, 4, 8))
        results = []
        options: dict[str, Any] = {
            "temperature": 0,
            # The profile the embedded server picks for what it serves (the bundled model: small).
            "profile": local.profile,
            "max_parallel": 8,
        }
        async with sot.Client(backend=local.backend, **options) as client:
            for i, row in enumerate(questions):
                order = ["sot", "sequential"] if i % 2 == 0 else ["sequential", "sot"]
                answers = {mode: await client.ask(row["question"], mode=mode) for mode in order}
                results.append(paired_row(row, answers["sot"], answers["sequential"]))
                print(json.dumps(results[-1]), flush=True)
    finally:
        await local.aclose()
    summary = {
        "machine": machine(),
        "model": model_name,
        "throughput_tokens_per_s": tps,
        "throughput_scaling": scaling(tps),
        **speedup_summary(results),
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
        *speedup_markdown(s),
        "",
        *question_table(s["rows"]),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "results"))
    anyio.run(main, parser.parse_args())
