"""Benchmark: the batch client's cost against an instant local fake server.

Runs `sot batch` (SoT mode: one skeleton and three expansions per prompt) on N and 10*N generated
prompts against a scripted server that answers at once, and reads the child process's CPU time and
peak resident memory from the kernel. Marginal CPU per backend call = difference of CPU over
difference of calls (start-up cancels out); bounded memory = peak RSS barely moves with 10x prompts.

    python eval/bench_batch.py [--prompts 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from _bench_common import SOT_COMMAND, reach_test_fakes
from results_io import RESULTS, save

reach_test_fakes()
from _fakes import FakeServer, sot_script  # noqa: E402


def run(server: FakeServer, n: int, workdir: Path, concurrency: int) -> dict[str, float]:
    prompts = workdir / f"p{n}.jsonl"
    prompts.write_text(
        "".join(json.dumps({"id": i, "question": f"What are tips number {i}?"}) + "\n" for i in range(n))
    )
    out = workdir / f"r{n}.jsonl"
    before_calls = len(server.requests)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [SOT_COMMAND, "batch", str(prompts), "--out", str(out), "--modes", "sot"]
    command += ["--concurrency", str(concurrency), "--no-progress", "--base-url", server.url, "--model", "m"]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    records = sum(1 for _ in out.open())
    return {
        "prompts": n,
        "records": records,
        "calls": len(server.requests) - before_calls,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_mb": after.ru_maxrss / 1024,  # the largest child so far (monotonic)
        "wall_s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    with FakeServer(sot_script()) as server, tempfile.TemporaryDirectory() as tmp:
        small = run(server, args.prompts, Path(tmp), args.concurrency)
        large = run(server, args.prompts * 10, Path(tmp), args.concurrency)
    summary = {
        "machine": {"cores": os.cpu_count(), "platform": platform.platform()},
        "small": small,
        "large": large,
        "client_cpu_ms_per_call_marginal": round(
            1000 * (large["cpu_s"] - small["cpu_s"]) / (large["calls"] - small["calls"]), 3
        ),
        "client_cpu_ms_per_call_overall_large": round(1000 * large["cpu_s"] / large["calls"], 3),
        "peak_rss_mb_small": round(small["peak_rss_mb"], 1),
        "peak_rss_mb_large": round(large["peak_rss_mb"], 1),
    }
    save(args.out, "batch_bench", summary)


if __name__ == "__main__":
    main()
