"""Benchmark: SoT under load, against a twin of a batched GPU server (eval/twin).

Per background load, from an idle server to one with every batch slot but one held by other users'
streams, it answers vicuna80's SoT-suitable questions (read from ../shared/data by path) in sot's
default mode (``mode="auto"``, with the router) and sequentially, and reports per load and mode the
median and p95 latency, time to first token and the tokens the server handled per answer (prompt and
completion, from the usage it reported). Modes alternate their order from question to question
within one run, and the twin's prefix cache is emptied before every answer, so no answer inherits
another's prefill.

Where ``sot.options.Options`` has a ``load_aware`` field, the default mode runs with it on (the
default) and off; otherwise only as it is, and the results say so.

The twin runs in its own process, its clock ``--time-scale`` times faster than real time; every
figure is given in the twin's time (unscaled: what the GPU server would take). The client's own work
is not sped up and so weighs ``--time-scale`` times more than it would: the results estimate it
from sequential answers, whose time the physics predicts.

``--table`` runs the twin on another step-time curve, such as the one eval/bench_gpu.py measured on a
real GPU (its results file), with the batch limit at the curve's last stream count.

    python eval/bench_load.py [--quick] [--time-scale 5] [--questions N] [--loads 0,0.25,0.5,0.75,1]
    python eval/bench_load.py --table eval/results/gpu_bench.json --loads 0 --brief --name load_h200_idle
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import _bench_common as bench  # noqa: E402
import anyio  # noqa: E402
import httpx  # noqa: E402
import results_io  # noqa: E402
from twin.physics import (  # noqa: E402
    BATCH_LIMIT,
    NIM_LLAMA_8B_H100,
    PREFILL_MS_PER_TOKEN,
    Table,
    describe_table,
    format_table,
    parse_table,
    step_ms,
)

import sot  # noqa: E402
from sot.options import Options  # noqa: E402

MODEL = "twin-llama-3.1-8b-instruct"
FULL = {"time_scale": 5.0, "questions": 0, "loads": "0,0.25,0.5,0.75,1"}
QUICK = {"time_scale": 10.0, "questions": 6, "loads": "0,0.5,1"}
IDLE_SPEEDUP_TARGET = 2.5  # default mode at least this much faster than sequential, idle (median per question)
SATURATED_RATIO_TARGET = 1.05  # default mode's median latency at most this times sequential's, saturated


def load_aware_available() -> bool:
    return "load_aware" in {f.name for f in dataclasses.fields(Options)}


def variants(brief: bool = False) -> dict[str, dict[str, Any]]:
    """Each variant's client options; "default" is sot as a user gets it (with `brief`: its brief mode too)."""
    runs: dict[str, dict[str, Any]] = {"default": {}}
    if brief:
        runs["default, brief"] = {"brief": True}
    if load_aware_available():
        runs["default, load-aware off"] = {"load_aware": False}
    runs["sequential"] = {"mode": "sequential"}
    return runs


def background_levels(fractions: Sequence[float], limit: int) -> list[int]:
    """Background streams per level: a fraction of the batch; 1 (or more) is every slot but one."""
    return sorted({min(round(f * limit), limit - 1) for f in fractions})


def level_name(streams: int, limit: int) -> str:
    if streams == 0:
        return "idle"
    if streams == limit - 1:
        return f"saturated ({streams} of {limit} slots busy)"
    return f"{round(100 * streams / limit)}% ({streams} of {limit} slots busy)"


@contextmanager
def twin_process(time_scale: float, batch_limit: int, table: Table) -> Iterator[str]:
    """The twin in a process of its own (the client keeps the other core); yields its URL."""
    env = {**os.environ, "PYTHONPATH": str(HERE)}  # twin, from eval/ (sot: the installed one)
    command = [sys.executable, "-m", "twin", "--port", "0", "--time-scale", str(time_scale)]
    command += ["--batch-limit", str(batch_limit), "--table", format_table(table)]
    child = subprocess.Popen(command, cwd=HERE, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        found = re.search(r"http://\S+", line)
        if not found:
            raise RuntimeError(f"the twin did not start: {line!r}")
        yield found.group(0)
    finally:
        child.terminate()
        child.wait(10)


def answer_row(answer: sot.Answer, scale: float, background: int, table: Table) -> dict[str, Any]:
    """One answer's figures, in the twin's time."""
    first = answer.timings.first_token_s
    return {
        "latency_s": round(answer.timings.total_s * scale, 4),
        "first_token_s": round(first * scale, 4) if first is not None else None,
        "mode_used": answer.mode,
        "points": len(answer.points),
        "calls": len(answer.calls),
        "prompt_tokens": answer.usage.prompt_tokens,
        "completion_tokens": answer.usage.completion_tokens,
        "server_tokens": answer.usage.prompt_tokens + answer.usage.completion_tokens,
        "truncated": answer.truncated,
        # What the physics alone gives a sequential answer: its tokens at this load's step time.
        "physics_s": round(answer.usage.completion_tokens * step_ms(background + 1, table) / 1000, 4)
        if answer.mode == "sequential" and len(answer.calls) == 1
        else None,
    }


async def run_level(
    admin: httpx.AsyncClient,
    clients: dict[str, sot.Client],
    questions: Sequence[dict[str, Any]],
    background: int,
    scale: float,
    table: Table,
) -> list[dict[str, Any]]:
    """Every question in every variant at one background load; the variants' order rotates."""
    (await admin.post("/admin/load", json={"streams": background})).raise_for_status()
    names, rows = list(clients), []
    for n, question in enumerate(questions):
        shift = n % len(names)
        for name in names[shift:] + names[:shift]:
            (await admin.post("/admin/cache/clear")).raise_for_status()
            answer = await clients[name].ask(question["question"])
            row = {"background": background, "variant": name, "id": question["question_id"]}
            rows.append(row | {"category": question["category"]} | answer_row(answer, scale, background, table))
    return rows


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    latency = [r["latency_s"] for r in rows]
    first = [r["first_token_s"] for r in rows if r["first_token_s"] is not None]
    overhead = [r["latency_s"] - r["physics_s"] for r in rows if r["physics_s"] is not None]
    return {
        "answers": len(rows),
        "median_s": round(statistics.median(latency), 3),
        "p95_s": round(bench.percentile(latency, 0.95), 3),
        "median_first_token_s": round(statistics.median(first), 3) if first else None,
        "p95_first_token_s": round(bench.percentile(first, 0.95), 3) if first else None,
        "median_server_tokens": statistics.median(r["server_tokens"] for r in rows),
        "median_prompt_tokens": statistics.median(r["prompt_tokens"] for r in rows),
        "median_completion_tokens": statistics.median(r["completion_tokens"] for r in rows),
        "answered_with_sot": sum(r["mode_used"] == "sot" for r in rows),
        "truncated": sum(bool(r["truncated"]) for r in rows),
        "median_client_overhead_s": round(statistics.median(overhead), 3) if overhead else None,
    }


def compare(rows: Sequence[dict[str, Any]], variant: str) -> dict[str, Any]:
    """`variant` against sequential at one load: per-question speed-up and the ratio of medians."""
    by_id = {(r["variant"], r["id"]): r["latency_s"] for r in rows}
    ids = sorted({r["id"] for r in rows if r["variant"] == variant})
    speedups = [by_id[("sequential", i)] / by_id[(variant, i)] for i in ids]
    medians = [statistics.median(by_id[(v, i)] for i in ids) for v in (variant, "sequential")]
    return {
        "median_speedup": round(statistics.median(speedups), 3),
        "faster_on": sum(s > 1 for s in speedups),
        "questions": len(ids),
        "median_ratio_to_sequential": round(medians[0] / medians[1], 3),
    }


def summary_of(rows: Sequence[dict[str, Any]], levels: Sequence[int], limit: int) -> list[dict[str, Any]]:
    out = []
    for background in levels:
        here = [r for r in rows if r["background"] == background]
        names = list(dict.fromkeys(r["variant"] for r in here))
        out.append(
            {
                "background": background,
                "level": level_name(background, limit),
                "variants": {v: summarise([r for r in here if r["variant"] == v]) for v in names},
                "against_sequential": {v: compare(here, v) for v in names if v != "sequential"},
            }
        )
    return out


def acceptance(levels: Sequence[dict[str, Any]], batch_limit: int) -> dict[str, Any]:
    """The two figures the product is held to, per default-mode variant (None where that load was not run)."""
    idle, saturated = levels[0], levels[-1]
    full = saturated["background"] == batch_limit - 1
    out: dict[str, Any] = {}
    for variant, versus in idle["against_sequential"].items():
        speedup = versus["median_speedup"] if idle["background"] == 0 else None
        ratio = saturated["against_sequential"][variant]["median_ratio_to_sequential"] if full else None
        out[variant] = {
            "idle_median_speedup": speedup,
            "idle_ok": speedup is not None and speedup >= IDLE_SPEEDUP_TARGET,
            "saturated_median_ratio": ratio,
            "saturated_ok": ratio is not None and ratio <= SATURATED_RATIO_TARGET,
        }
    return out


def git_commit(exported_from: str | None = None) -> dict[str, Any]:
    """The checkout's commit; `exported_from` names it for a copy without git history (``git archive``)."""
    if exported_from:
        return {"commit": exported_from, "uncommitted_changes": False, "exported": True}
    return bench.git_state()


def level_table(level: dict[str, Any]) -> list[str]:
    lines = [
        f"### {level['level']}",
        "",
        "| mode | median s | p95 s | median TTFT s | p95 TTFT s | median server tokens (prompt + completion) "
        "| answered with SoT | median speed-up vs sequential (per question) | median latency / sequential's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in level["variants"].items():
        versus = level["against_sequential"].get(name)
        speedup = (
            f"{versus['median_speedup']} (faster on {versus['faster_on']} of {versus['questions']})" if versus else ""
        )
        ratio = versus["median_ratio_to_sequential"] if versus else ""
        tokens = f"{s['median_server_tokens']} ({s['median_prompt_tokens']} + {s['median_completion_tokens']})"
        lines.append(
            f"| {name} | {s['median_s']} | {s['p95_s']} | {s['median_first_token_s']} | {s['p95_first_token_s']} "
            f"| {tokens} | {s['answered_with_sot']} of {s['answers']} | {speedup} | {ratio} |"
        )
    return [*lines, ""]


def header(result: dict[str, Any]) -> list[str]:
    twin, machine, git = result["twin"], result["machine"], result["git"]
    table = ", ".join(f"{n}: {ms} ms" for n, ms in twin["table"])
    dirty = " with uncommitted changes" if git["uncommitted_changes"] else ""
    if git.get("exported"):
        dirty = " (a `git archive` export of it, with eval/twin and eval/bench_load.py as they are here)"
    scale = twin["time_scale"]
    return [
        "# SoT under load, against a batched GPU server's twin (eval/bench_load.py)",
        "",
        f"Machine (client and twin, the twin in its own process): {machine['cpu']}, {machine['cores']} cores, "
        f"{machine['platform']}, Python {machine['python']}. Commit {git['commit']}{dirty}. "
        f"Run took {result['wall_s']} s.",
        "",
        f"Twin: time per output token from {twin['table_source']} ({table}, "
        f"interpolated by running streams), batch limit {twin['batch_limit']}, prefill "
        f"{twin['prefill_ms_per_token']} ms per uncached prompt token, prefix cache emptied before every answer. "
        f"Its clock ran {scale}x real time; **all times are the twin's (unscaled)**. The client's own work is not "
        f"sped up, so it weighs {scale}x: its median share of a sequential answer (measured minus what the "
        f"physics gives its tokens) was {result['client_overhead_s']} s.",
        "",
        f"{result['questions']} SoT-suitable questions of vicuna80 per load; modes interleaved (order rotating per "
        f'question). Default mode: `mode="auto"` (router), sot\'s defaults otherwise. {result["load_aware_note"]}',
        "",
    ]


def markdown(result: dict[str, Any]) -> str:
    lines = [
        *header(result),
        "## Acceptance",
        "",
        f"| default-mode variant | idle: median per-question speed-up (target >= {IDLE_SPEEDUP_TARGET}) "
        f"| saturated: median latency / sequential's (target <= {SATURATED_RATIO_TARGET}) |",
        "|---|---|---|",
    ]
    for name, a in result["acceptance"].items():
        idle = f"{a['idle_median_speedup']} ({'met' if a['idle_ok'] else 'not met'})"
        ratio = a["saturated_median_ratio"]
        saturated = "not run" if ratio is None else f"{ratio} ({'met' if a['saturated_ok'] else 'not met'})"
        lines.append(f"| {name} | {idle} | {saturated} |")
    lines += ["", "## Per load", ""]
    for level in result["levels"]:
        lines += level_table(level)
    return "\n".join(lines)


async def measure(args: argparse.Namespace, url: str, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    levels = background_levels([float(f) for f in args.loads.split(",")], args.batch_limit)
    rows: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as admin:
        clients = {
            name: sot.Client(base_url=url + "/v1", model=MODEL, **opts) for name, opts in variants(args.brief).items()
        }
        try:
            for client in clients.values():  # connections, the router's model: nothing of it is measured
                await client.ask(questions[0]["question"])
            for background in levels:
                started = time.perf_counter()
                rows += await run_level(admin, clients, questions, background, args.time_scale, args.step_table)
                print(f"load {background}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        finally:
            for client in clients.values():
                await client.aclose()
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"a small run: {QUICK}")
    parser.add_argument("--time-scale", type=float, help=f"the twin's speed-up (default {FULL['time_scale']})")
    parser.add_argument("--questions", type=int, help="the first N suitable questions (default all)")
    parser.add_argument("--loads", help=f"fractions of the batch held by background streams (default {FULL['loads']})")
    parser.add_argument("--batch-limit", type=int, help=f"default {BATCH_LIMIT}; with --table, its last stream count")
    parser.add_argument("--table", help="time per output token: a gpu_bench.json, or N:ms rows (default NIM's)")
    parser.add_argument("--brief", action="store_true", help="also the brief mode (the paper's short points)")
    parser.add_argument("--data", default=str(bench.DATA))
    parser.add_argument("--out-dir", default=str(results_io.RESULTS))
    parser.add_argument("--name", default="load", help="results are written to OUT_DIR/NAME.json and NAME.md")
    parser.add_argument("--commit", help="the commit this copy was exported from, where it has no git history")
    args = parser.parse_args(argv)
    preset = QUICK if args.quick else FULL
    for key, value in preset.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    try:
        args.step_table = parse_table(args.table) if args.table else NIM_LLAMA_8B_H100
    except (OSError, ValueError) as exc:
        parser.error(f"--table: {exc}")
    # A measured curve ends where the measurement did: past it the twin would only extrapolate.
    if args.batch_limit is None:
        args.batch_limit = args.step_table[-1][0] if args.table else BATCH_LIMIT
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    questions = bench.suitable_questions(args.data, args.questions)
    started = time.perf_counter()
    with twin_process(args.time_scale, args.batch_limit, args.step_table) as url:
        rows = anyio.run(measure, args, url, questions)
    levels = summary_of(rows, sorted({r["background"] for r in rows}), args.batch_limit)
    overhead = [r["latency_s"] - r["physics_s"] for r in rows if r["physics_s"] is not None]
    aware = load_aware_available()
    result = {
        "machine": bench.machine(),
        "git": git_commit(args.commit),
        "wall_s": round(time.perf_counter() - started, 1),
        "quick": args.quick,
        "questions": len(questions),
        "twin": {
            "model": MODEL,
            "table": [list(row) for row in args.step_table],
            "table_source": describe_table(args.table),
            "batch_limit": args.batch_limit,
            "prefill_ms_per_token": PREFILL_MS_PER_TOKEN,
            "time_scale": args.time_scale,
        },
        "load_aware": aware,
        "load_aware_note": "Load-awareness: run on (the default) and off."
        if aware
        else "Load-awareness: `Options` has no `load_aware` field in this checkout, so only sot as it is was run.",
        "client_overhead_s": round(statistics.median(overhead), 3) if overhead else None,
        "acceptance": acceptance(levels, args.batch_limit),
        "levels": levels,
        "answers": rows,
    }
    out = Path(args.out_dir)
    results_io.save(out, args.name, {k: v for k, v in result.items() if k != "answers"} | {"answers": rows})
    (out / f"{args.name}.md").write_text(markdown(result) + "\n")


if __name__ == "__main__":
    main()
