"""Benchmark: pipelined expansion against two-phase SoT, through the CLI, in one run.

A scripted server streams a 5-point skeleton at one word per --word-delay seconds; point i's
expansion is longest for point 1 and shortest for point 5. Each mode runs `sot ask --json`
--repeats times (alternating); the script reports median total latency of both, their ratio,
how many expansions started before the skeleton stream ended, and whether order was kept.

    python eval/bench_pipeline.py [--word-delay 0.3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess

from _bench_common import SOT_COMMAND, reach_test_fakes
from results_io import RESULTS, save

reach_test_fakes()
from _fakes import FakeServer, sot_script  # noqa: E402

POINTS = [
    "Plan the week ahead",
    "Batch similar small tasks",
    "Block out distractions",
    "Take short breaks",
    "Review progress",
]


def run(url: str, pipeline: bool) -> dict[str, object]:
    command = [SOT_COMMAND, "ask", "--json", "--mode", "sot", "--base-url", url, "--model", "m"]
    command.append("--pipeline" if pipeline else "--no-pipeline")
    result = subprocess.run([*command, "How can I manage my time better?"], capture_output=True, text=True, check=True)
    answer: dict[str, object] = json.loads(result.stdout)
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--word-delay", type=float, default=0.3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()

    def expansion(n: int, title: str) -> str:
        return " ".join(["word"] * (6 - n) * 6)  # point 1: 30 words ... point 5: 6 words

    script = sot_script(
        POINTS, expansion=expansion, token_delay=args.word_delay / 2, skeleton_token_delay=args.word_delay
    )
    totals: dict[str, list[float]] = {"pipeline": [], "no-pipeline": []}
    early: list[int] = []
    ordered = True
    with FakeServer(script) as server:
        for i in range(args.repeats * 2):
            pipeline = (i % 2 == 0) if args.repeats % 2 else (i % 2 == 1)
            first = len(server.requests)
            answer = run(server.url, pipeline)
            timings = answer["timings"]
            assert isinstance(timings, dict)
            totals["pipeline" if pipeline else "no-pipeline"].append(float(timings["total_s"]))
            ordered &= answer["points"] == POINTS
            requests = server.requests[first:]
            skeleton_end = next(r.finished_at for r in requests if r.kind == "skeleton")
            if pipeline:
                early.append(sum(1 for r in requests if r.kind == "expand" and r.received_at < (skeleton_end or 0)))
    med = {k: statistics.median(v) for k, v in totals.items()}
    summary = {
        "word_delay_s": args.word_delay,
        "repeats": args.repeats,
        "median_total_s": med,
        "ratio_pipeline_over_two_phase": round(med["pipeline"] / med["no-pipeline"], 3),
        "expansions_started_before_skeleton_end": early,
        "order_kept": ordered,
        "totals": totals,
    }
    save(args.out, "pipeline_bench", summary)


if __name__ == "__main__":
    main()
