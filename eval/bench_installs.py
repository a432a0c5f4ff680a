"""Answer times of two installs of sot on the embedded model, side by side in one run.

Each install answers the same outside questions in SoT mode at temperature 0, in rounds that
alternate between them (A, B, A, B ...), so a busier minute of the machine falls on both. Reported:
each install's median answer time and outline time, and the median over questions of B's time over
A's (each question's times summed over the rounds).

    python eval/bench_installs.py --install before=/tmp/old/bin/python --install after=.venv/bin/python \\
        --sets ai,aj --rounds 2 --name early_outline_stop
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path
from typing import Any

from _bench_common import machine
from results_io import RESULTS, save

PROMPTS = Path(__file__).resolve().parent / "prompts"

# Run by each install's own interpreter: one JSON line per question on stdout.
WORKER = """
import json, sys, anyio, sot

async def main():
    questions = json.loads(sys.argv[1])
    async with sot.Client(temperature=0) as client:
        await client.ask("Name three fruits.", mode="sot")  # the server started and warm
        for q in questions:
            a = await client.ask(q, mode="sot")
            print(json.dumps({"total_s": a.timings.total_s, "skeleton_s": a.timings.skeleton_s,
                              "points": len(a.points)}), flush=True)

anyio.run(main)
"""


def run_install(python: str, questions: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [python, "-c", WORKER, json.dumps(questions)], capture_output=True, text=True, check=True, cwd="/"
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="append", required=True, help="LABEL=path/to/python (two)")
    parser.add_argument("--sets", default="ai,aj", help="outside sets: eval/prompts/quality_outside_SET.jsonl")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--name", default="installs_bench")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    installs = [item.split("=", 1) for item in args.install]
    if len(installs) != 2 or any(len(pair) != 2 for pair in installs):
        parser.error("give two installs: --install LABEL=PYTHON --install LABEL=PYTHON")
    questions = [
        json.loads(line)["question"]
        for name in args.sets.split(",")
        for line in (PROMPTS / f"quality_outside_{name}.jsonl").read_text().splitlines()
    ]
    runs: dict[str, list[list[dict[str, Any]]]] = {label: [] for label, _ in installs}
    for _ in range(args.rounds):
        for label, python in installs:
            runs[label].append(run_install(python, questions))
    (a, _), (b, _) = installs
    per_question = {
        label: [sum(r[i]["total_s"] for r in rounds) for i in range(len(questions))] for label, rounds in runs.items()
    }
    summary = {
        "machine": machine(),
        "questions": len(questions),
        "sets": args.sets,
        "rounds": args.rounds,
        "median_total_s": {
            label: statistics.median(r["total_s"] for rs in rounds for r in rs) for label, rounds in runs.items()
        },
        "median_outline_s": {
            label: statistics.median(r["skeleton_s"] for rs in rounds for r in rs) for label, rounds in runs.items()
        },
        f"median_ratio_{b}_over_{a}": statistics.median(
            y / x for x, y in zip(per_question[a], per_question[b], strict=True)
        ),
        "same_point_counts": sum(runs[a][0][i]["points"] == runs[b][0][i]["points"] for i in range(len(questions))),
        "runs": runs,
    }
    save(args.out, args.name, summary)


if __name__ == "__main__":
    main()
