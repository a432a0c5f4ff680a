"""Router benchmark: load time, per-prompt time, and scores of the learned router and the rules side by side.

    python eval/bench_router.py     # writes eval/results/router_bench.json and router_bench.md

Load time is taken in fresh interpreters (median of 5): `import sot`, then the learned model's
first load (numpy, tokenizer, token vectors, weights). Per-prompt time is the median over every
prompt of every set, after load. Sets: the corpus' test split (held-out templates), vicuna80
(development only), the project's eval/prompts sets, and two sets written by hand after training
and never trained or tuned on: eval/router/fresh_after_training.jsonl (61 prompts, written after
the first model; the corpus then grew two task types for vicuna80's misroutes, not for this set)
and eval/router/fresh2_after_final_training.jsonl (45 prompts, written after the final model).
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
from sot.router import route_learned, route_rules  # noqa: E402
from sot.router.evaluate import load_labelled  # noqa: E402

OUT = ROOT / "eval" / "results"
_LOAD = """
import time
t0 = time.perf_counter()
import sot
t1 = time.perf_counter()
import sot.router.learned
sot.router.learned.model()
t2 = time.perf_counter()
sot.route("What are the benefits of tea?")
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def load_times() -> dict[str, float]:
    runs = []
    for _ in range(5):
        # Away from the checkout, whose source folder would shadow the installed sot.
        out = subprocess.run([sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True, cwd=OUT)
        runs.append([float(v) for v in out.stdout.split()])
    return {
        "import_sot_ms": statistics.median(r[0] for r in runs) * 1000,
        "model_load_ms": statistics.median(r[1] for r in runs) * 1000,
        "first_route_after_load_ms": statistics.median(r[2] for r in runs) * 1000,
    }


def sets() -> dict[str, list[tuple[str, str]]]:
    corpus = [json.loads(line) for line in (ROOT / "eval" / "router" / "corpus.jsonl").read_text().splitlines()]
    out = {"corpus test split": [(r["prompt"], r["label"]) for r in corpus if r["split"] == "test"]}
    vicuna = ROOT.parent / "shared" / "data" / "vicuna80.jsonl"
    if vicuna.is_file():
        out["vicuna80"] = load_labelled(vicuna)
    for path in sorted((ROOT / "eval" / "prompts").glob("router_*.jsonl")):
        out[path.stem] = load_labelled(path)
    here = ROOT / "eval" / "router"
    out["fresh set 1 (after the first model)"] = load_labelled(here / "fresh_after_training.jsonl")
    out["fresh set 2 (after the final model)"] = load_labelled(here / "fresh2_after_final_training.jsonl")
    return out


def score(rows: list[tuple[str, str]], decide: Any) -> tuple[dict[str, float], list[float]]:
    times, right, false_sot, caught = [], 0, 0, 0
    for prompt, want in rows:
        start = time.perf_counter()
        got = decide(prompt).mode
        times.append((time.perf_counter() - start) * 1000)
        right += got == want
        false_sot += want == "sequential" and got == "sot"
        caught += want == "sot" and got == "sot"
    n_sot = sum(want == "sot" for _, want in rows)
    n_seq = len(rows) - n_sot
    return {
        "n": len(rows),
        "n_sot": n_sot,
        "accuracy": right / len(rows),
        "false_sot": false_sot / n_seq if n_seq else 0.0,
        "sot_recall": caught / n_sot if n_sot else 0.0,
    }, times


def main() -> None:
    if len(sys.argv) > 1:
        raise SystemExit("usage: python eval/bench_router.py  (no options: it scores both routers on every set)")
    result: dict[str, Any] = {"machine": f"{platform.node()} {platform.machine()} {platform.processor()}".strip()}
    result["load"] = load_times()
    route_learned("warm up")
    result["sets"] = {}
    all_times: dict[str, list[float]] = {"learned": [], "rules": []}
    for name, rows in sets().items():
        result["sets"][name] = {}
        for router, decide in (("learned", route_learned), ("rules", route_rules)):
            figures, times = score(rows, decide)
            result["sets"][name][router] = figures
            all_times[router] += times
    result["per_prompt_median_ms"] = {k: statistics.median(v) for k, v in all_times.items()}
    result["per_prompt_p90_ms"] = {k: statistics.quantiles(v, n=10)[-1] for k, v in all_times.items()}
    OUT.mkdir(exist_ok=True)
    (OUT / "router_bench.json").write_text(json.dumps(result, indent=1) + "\n")
    (OUT / "router_bench.md").write_text(markdown(result))
    print(markdown(result))


def markdown(r: dict[str, Any]) -> str:
    load = r["load"]
    lines = [
        "# Router benchmark (eval/bench_router.py)",
        "",
        f"Machine: {r['machine']}, {sys.version.split()[0]}. Load, median of 5 fresh interpreters: "
        f"`import sot` {load['import_sot_ms']:.0f} ms, learned model load {load['model_load_ms']:.0f} ms "
        f"(lazy: on first use, or in the background when a router is made), first decision after load "
        f"{load['first_route_after_load_ms']:.2f} ms.",
        f"Per prompt after load, median (p90) over all sets: learned {r['per_prompt_median_ms']['learned']:.3f} ms "
        f"({r['per_prompt_p90_ms']['learned']:.3f}), rules {r['per_prompt_median_ms']['rules']:.3f} ms "
        f"({r['per_prompt_p90_ms']['rules']:.3f}).",
        "",
        "| set | prompts | SoT-suitable | learned: accuracy | false SoT | SoT caught "
        "| rules: accuracy | false SoT | SoT caught |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, by in r["sets"].items():
        a, b = by["learned"], by["rules"]
        lines.append(
            f"| {name} | {a['n']} | {a['n_sot']} | {a['accuracy']:.3f} | {a['false_sot']:.3f} | {a['sot_recall']:.3f} "
            f"| {b['accuracy']:.3f} | {b['false_sot']:.3f} | {b['sot_recall']:.3f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
