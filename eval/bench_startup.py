"""Start-up cost of ``sot ask``: process start to first request, and a whole sequential answer.

A scripted server on loopback answers at once and stamps each request's arrival with
``time.monotonic()``, the same clock the parent reads just before it spawns ``sot``; so the first
figure is exactly the client's start-up (interpreter, imports, option parsing, client construction)
and the second the whole command against a server that costs nothing. Medians of ``--runs`` runs.

    python eval/bench_startup.py                                   # this checkout's `sot`
    python eval/bench_startup.py --sot before=/other/venv/bin/sot --sot after=.venv/bin/sot
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _bench_common import SOT_COMMAND, machine, reach_test_fakes
from results_io import RESULTS

reach_test_fakes()
from _fakes import FakeServer, sot_script  # noqa: E402


def describe_machine() -> str:
    about = machine()
    return (
        f"{about['cpu'] or about['platform']}, {about['cores']} cores, Python {about['python']}, "
        f"load {os.getloadavg()[0]:.1f} at start"
    )


def one_run(sot: str, server: FakeServer) -> tuple[float, float, float]:
    """(start -> request arrival, whole command, the command's CPU seconds) of one `sot ask`."""
    before = len(server.requests)
    env = {**os.environ, "SOT_API_KEY": "bench"}
    command = [sot, "ask", "--mode", "sequential", "--base-url", server.url, "--model", "m", "How do I boil an egg?"]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    ended = time.monotonic()
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or len(server.requests) != before + 1:
        raise SystemExit(f"sot failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    return server.requests[-1].received_at - started, ended - started, cpu


# What `sot ask` cannot send its first request without: the design card's httpx, anyio, tenacity, jinja2
# and typer, with what httpx itself imports only for its first request (httpcore) and the event loop
# (asyncio, and anyio's backend for it, which anyio.run and httpcore's connections load). The floor:
# sot's own share is what the command takes beyond it.
LIBRARIES = (
    "import httpx, httpcore, asyncio, anyio.streams.memory, anyio._backends._asyncio, tenacity, jinja2.sandbox, typer"
)
# httpx imports its own command line (click, rich, pygments: tens of ms) wherever all three are
# installed: not by sot's plain install, but by its extras (uvicorn brings click). The yardstick moves with it.
HTTPX_CLI = ("click", "rich", "pygments")


TARGET = 1.5  # start to the first request, over `python -c "import httpx"` (issue 30)


def import_httpx() -> float:
    """The yardstick: a fresh interpreter that only imports httpx, start to exit."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import httpx"], check=True)
    return time.monotonic() - started


def until_imported(code: str) -> float:
    """Start of a fresh interpreter to the moment `code` has run (its exit not counted: the command's
    figure ends at its first request, not at its exit)."""
    started = time.monotonic()
    with subprocess.Popen([sys.executable, "-c", code + "; print(flush=True)"], stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        child.stdout.readline()
        ended = time.monotonic()
    return ended - started


def summary(runs: list[tuple[float, float, float]]) -> dict[str, Any]:
    names = ("start_to_first_request_s", "whole_sequential_ask_s", "cpu_s")
    return {
        name: {"median": round(statistics.median(r[i] for r in runs), 4), "all": [round(r[i], 4) for r in runs]}
        for i, name in enumerate(names)
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sot",
        action="append",
        metavar="LABEL=PATH",
        help="a sot command to measure (repeat to compare; runs are interleaved); default: this checkout's",
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", default=str(RESULTS / "startup_bench"), help="results path without extension")
    args = parser.parse_args(argv)
    commands = dict(item.split("=", 1) for item in (args.sot or [f"this checkout={SOT_COMMAND}"]))
    host = describe_machine()
    runs: dict[str, list[tuple[float, float, float]]] = {label: [] for label in commands}
    yardstick: list[float] = []
    floor: list[float] = []
    with FakeServer(sot_script(sequential_text="Boil it for nine minutes.")) as server:
        for path in commands.values():
            one_run(path, server)  # warm the page cache and byte-code caches
        import_httpx()
        for _ in range(args.runs):
            yardstick.append(import_httpx())
            floor.append(until_imported(LIBRARIES))
            for label, path in commands.items():
                runs[label].append(one_run(path, server))
    httpx_s, floor_s = statistics.median(yardstick), statistics.median(floor)
    httpx_cli = all(importlib.util.find_spec(name) is not None for name in HTTPX_CLI)
    # Ratios and differences taken run by run (each run's three processes back to back), then the median:
    # a machine busier for some runs moves all three together, not one median against another's.
    floor_ratio = statistics.median(f / y for f, y in zip(floor, yardstick, strict=True))
    paired = {
        label: {
            "over_import_httpx": round(statistics.median(r[0] / y for r, y in zip(rows, yardstick, strict=True)), 3),
            "own_s": round(statistics.median(r[0] - f for r, f in zip(rows, floor, strict=True)), 4),
        }
        for label, rows in runs.items()
    }
    result: dict[str, Any] = {
        "machine": host,
        "runs": args.runs,
        "target_over_import_httpx": TARGET,
        "commands": {
            label: {
                "sot": path,
                **summary(runs[label]),
                **paired[label],
                "met": paired[label]["over_import_httpx"] <= TARGET,
            }
            for label, path in commands.items()
        },
        "python_c_import_httpx_s": {"median": round(httpx_s, 4), "all": [round(t, 4) for t in yardstick]},
        "httpx_imports_its_cli": httpx_cli,
        "required_libraries_s": {
            "code": LIBRARIES,
            "median": round(floor_s, 4),
            "over_import_httpx": round(floor_ratio, 3),
            "all": [round(t, 4) for t in floor],
        },
    }
    room_ms = (TARGET - floor_ratio) * httpx_s * 1e3  # what the target leaves sot beyond the libraries
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# sot ask start-up",
        "",
        "`python eval/bench_startup.py` against a scripted loopback server that answers at once; the first",
        "figure is process start to the request's arrival on the server's clock. Runs interleave the yardstick,",
        "the libraries and each command; ratios and differences are taken run by run, then their median.",
        "",
        f"Machine: {host}; {args.runs} runs each.",
        "",
        f'Yardstick, in the same run: `python -c "import httpx"` takes {httpx_s:.3f} s (median); the libraries '
        f"`sot ask` needs before its first request alone (`{LIBRARIES}`) are imported after {floor_s:.3f} s "
        f"({floor_ratio:.2f}x).",
        "",
        f"Here `import httpx` {'also imports' if httpx_cli else 'does not import'} httpx's own command line "
        f"({', '.join(HTTPX_CLI)} {'are' if httpx_cli else 'are not all'} installed: "
        f"{'an install with extras' if httpx_cli else 'a plain install'}).",
        "",
        "sot's own share is the command's figure less the libraries'."
        + (
            f" The libraries alone take {floor_ratio:.2f}x `import httpx` here: above the {TARGET}x target before "
            "sot runs a line of its own."
            if floor_ratio > TARGET
            else f" Within the {TARGET}x target, sot may take {room_ms:.0f} ms of its own."
        ),
        "",
        "| command | start -> first request (s) | / import httpx | sot's own (s) "
        "| whole `sot ask --mode sequential` (s) "
        "| CPU of the command (s) |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in result["commands"].items():
        first, whole, cpu = (row[k]["median"] for k in ("start_to_first_request_s", "whole_sequential_ask_s", "cpu_s"))
        ratio = f"{row['over_import_httpx']:.2f}x ({'met' if row['met'] else 'not met'})"
        lines.append(f"| {label} | {first:.3f} | {ratio} | {row['own_s']:.3f} | {whole:.3f} | {cpu:.3f} |")
    lines += [
        "",
        f'Target: start to the first request at most {TARGET}x `python -c "import httpx"` on the same machine.',
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
