"""Start-up cost of ``sot ask``: process start to first request, and a whole sequential answer.

A scripted server on loopback answers at once and stamps each request's arrival with
``time.monotonic()``, the same clock the parent reads just before it spawns ``sot``; so the first
figure is exactly the client's start-up (interpreter, imports, option parsing, client construction)
and the second the whole command against a server that costs nothing. Medians of ``--runs`` runs.

    python eval/bench_startup.py                       # this checkout's `sot`
    python eval/bench_startup.py --sot /other/venv/bin/sot --label before
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sot.fake_server import FakeServer, sot_script

RESULTS = Path(__file__).parent / "results"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f} at start"


def one_run(sot: str, server: FakeServer) -> tuple[float, float]:
    before = len(server.requests)
    env = {**os.environ, "SOT_API_KEY": "bench"}
    command = [sot, "ask", "--mode", "sequential", "--base-url", server.url, "--model", "m", "How do I boil an egg?"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    ended = time.monotonic()
    if done.returncode != 0 or len(server.requests) != before + 1:
        raise SystemExit(f"sot failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return server.requests[-1].received_at - started, ended - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sot", default=shutil.which("sot") or "sot", help="the sot command to measure")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", default=str(RESULTS / "startup_bench"), help="results path without extension")
    args = parser.parse_args(argv)
    with FakeServer(sot_script(sequential_text="Boil it for nine minutes.")) as server:
        one_run(args.sot, server)  # warm the page cache and byte-code caches
        runs = [one_run(args.sot, server) for _ in range(args.runs)]
    first = statistics.median(r[0] for r in runs)
    whole = statistics.median(r[1] for r in runs)
    result: dict[str, Any] = {
        "label": args.label,
        "sot": args.sot,
        "runs": args.runs,
        "machine": machine(),
        "start_to_first_request_s": {"median": round(first, 4), "all": [round(r[0], 4) for r in runs]},
        "whole_sequential_ask_s": {"median": round(whole, 4), "all": [round(r[1], 4) for r in runs]},
        "targets_s": {"start_to_first_request": 0.25, "whole_sequential_ask": 0.4},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    existing: dict[str, Any] = {}
    if out.with_suffix(".json").exists():
        existing = json.loads(out.with_suffix(".json").read_text())
    existing[args.label] = result
    out.with_suffix(".json").write_text(json.dumps(existing, indent=2) + "\n")
    lines = [
        "# sot ask start-up",
        "",
        "`python eval/bench_startup.py` (medians; a scripted loopback server that answers at once; the first",
        "figure is process start to the request's arrival on the server's clock).",
        "",
        "| run | machine | runs | start -> first request (s) | whole `sot ask --mode sequential` (s) |",
        "|---|---|---|---|---|",
    ]
    for label, row in existing.items():
        lines.append(
            f"| {label} | {row['machine']} | {row['runs']} | {row['start_to_first_request_s']['median']:.3f} "
            f"| {row['whole_sequential_ask_s']['median']:.3f} |"
        )
    lines.append("")
    lines.append("Targets on the development machine: <= 0.25 s to the first request, <= 0.4 s in all.")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(json.dumps(result, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
