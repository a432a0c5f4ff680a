"""What the local and GPU benchmarks share: the questions, the machine, server throughput, paired runs.

Both compare SoT with sequential answers per question on one llama.cpp server (both modes in the
same run, alternating which goes first) and measure the server's aggregate decode throughput.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

import sot
from sot.backends.base import Backend, ChatRequest
from sot.batch.report import percentile as report_percentile
from sot.errors import ProtocolError
from sot.templates import Message

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "vicuna80.jsonl"
THROUGHPUT_PROMPT = "Write a long story about a lighthouse keeper."


def reach_test_fakes() -> None:
    """Put this checkout's tests/ folder on sys.path, so that ``import _fakes`` finds the scripted server.

    The fakes live in tests/_fakes (the wheel does not ship them) and eval/ is not installed either: a
    script run as ``python eval/x.py`` reaches them through the checkout it sits in. Appended, so that
    nothing in tests/ shadows an installed module.
    """
    tests = str(HERE.parent / "tests")
    if tests not in sys.path:
        sys.path.append(tests)


def suitable_questions(path: str | Path, limit: int = 0) -> list[dict[str, Any]]:
    """The SoT-suitable rows of a labelled JSONL file, the first `limit` of them (0: all).

    vicuna80's shape (`question_id`, `sot_suitable`) or the project's own sets' (`id`, `sot_suitable`
    or `route: "sot"`); every row comes back with `question_id` and `category`.
    """
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    suitable = [r for r in rows if r.get("sot_suitable") or r.get("route") == "sot"]
    return [
        {**r, "question_id": r.get("question_id", r.get("id", n)), "category": r.get("category", "")}
        for n, r in enumerate(suitable[: limit or None], 1)
    ]


def git_state() -> dict[str, Any]:
    """This checkout's commit and whether tracked files changed since (None and False without git)."""

    def output(*args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    changed = output("status", "--porcelain", "--untracked-files=no")
    return {"commit": output("rev-parse", "HEAD") or None, "uncommitted_changes": bool(changed)}


def percentile(values: Sequence[float], q: float) -> float:
    """The q quantile (0 to 1), interpolated between ranks as `sot batch`'s report does; values must not be empty."""
    if not 0 <= q <= 1:
        raise ValueError(f"q is a quantile from 0 to 1, not {q}")
    found = report_percentile(list(values), q)
    if found is None:
        raise ValueError("percentile of no values")
    return found


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


async def throughput(backend: Backend, streams: int, tokens: int = 128) -> float:
    """Aggregate completion tokens per second with `streams` requests decoding at once."""
    request = ChatRequest([Message("user", THROUGHPUT_PROMPT)], max_tokens=tokens, temperature=0)
    counts: list[int] = []

    async def one() -> None:
        # Raw backend calls have no retry loop; llama.cpp's server now and then drops one of many
        # concurrent connections before answering, which would sink the whole figure. Once more.
        for attempt in (1, 2):
            n = 0
            try:
                async for chunk in backend.stream_chat(request):
                    if chunk.usage is not None:
                        n = chunk.usage.completion_tokens
            except ProtocolError:
                if attempt == 2:
                    raise
                continue
            counts.append(n)
            return

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(streams):
            tg.start_soon(one)
    return sum(counts) / (time.perf_counter() - start)


async def throughputs(backend: Backend, streams: Sequence[int], tokens: int = 128) -> dict[str, float]:
    """Tokens per second at each stream count, after a short warm-up request."""
    await throughput(backend, 1, 16)
    return {str(n): round(await throughput(backend, n, tokens), 1) for n in streams}


def scaling(tps: dict[str, float]) -> dict[str, float]:
    """Each stream count's throughput over the lowest count's."""
    lowest = min(tps, key=int)
    return {n: round(v / tps[lowest], 2) for n, v in tps.items() if n != lowest}


def paired_row(row: dict[str, Any], sot_answer: sot.Answer, sequential: sot.Answer) -> dict[str, Any]:
    """One question's SoT and sequential answers, side by side."""
    return {
        "id": row["question_id"],
        "category": row["category"],
        "sot_s": round(sot_answer.timings.total_s, 3),
        "sequential_s": round(sequential.timings.total_s, 3),
        "ratio": round(sequential.timings.total_s / sot_answer.timings.total_s, 3),
        "sot_mode_used": sot_answer.mode,
        "points": len(sot_answer.points),
        "sot_tokens": sot_answer.usage.completion_tokens,
        "sequential_tokens": sequential.usage.completion_tokens,
        "sot_first_token_s": sot_answer.timings.first_token_s,
        "sequential_first_token_s": sequential.timings.first_token_s,
        # Cut at a token limit or before a loop: such an answer's time says little of a whole answer's.
        "sot_truncated": sot_answer.truncated,
        "sequential_truncated": sequential.truncated,
        "sot_looped": any(call.looped for call in sot_answer.calls),
        "sequential_looped": any(call.looped for call in sequential.calls),
    }


def geometric_mean(values: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def speedup_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Medians of paired rows; the ratio is sequential latency / SoT latency (> 1: SoT was faster)."""
    ratios = [r["ratio"] for r in rows]
    whole = [r["ratio"] for r in rows if not (r.get("sot_truncated") or r.get("sequential_truncated"))]
    return {
        # How many answers of each mode were cut (token limit or loop), and the speed-up without them.
        "sot_truncated": sum(bool(r.get("sot_truncated")) for r in rows),
        "sequential_truncated": sum(bool(r.get("sequential_truncated")) for r in rows),
        "sot_looped": sum(bool(r.get("sot_looped")) for r in rows),
        "sequential_looped": sum(bool(r.get("sequential_looped")) for r in rows),
        "whole_pairs": len(whole),
        "median_ratio_whole_pairs": round(statistics.median(whole), 3) if whole else None,
        "questions": len(rows),
        "median_sot_s": round(statistics.median(r["sot_s"] for r in rows), 3),
        "median_sequential_s": round(statistics.median(r["sequential_s"] for r in rows), 3),
        "median_ratio_sequential_over_sot": round(statistics.median(ratios), 3),
        "geomean_ratio_sequential_over_sot": round(geometric_mean(ratios), 3),
        "sot_faster": sum(1 for r in ratios if r > 1),
        "median_sot_tokens": statistics.median(r["sot_tokens"] for r in rows),
        "median_sequential_tokens": statistics.median(r["sequential_tokens"] for r in rows),
    }


def speedup_markdown(s: dict[str, Any]) -> list[str]:
    return [
        f"median SoT {s['median_sot_s']} s, median sequential {s['median_sequential_s']} s; per-question "
        f"speed-up sequential/SoT: median **{s['median_ratio_sequential_over_sot']}**, geometric mean "
        f"{s['geomean_ratio_sequential_over_sot']}, SoT faster on {s['sot_faster']} of {s['questions']} "
        f"(> 1 means SoT is faster). Median completion tokens: SoT {s['median_sot_tokens']}, "
        f"sequential {s['median_sequential_tokens']}.",
        f"Cut answers (token limit or loop): SoT {s['sot_truncated']} ({s['sot_looped']} looped), sequential "
        f"{s['sequential_truncated']} ({s['sequential_looped']} looped); the {s['whole_pairs']} questions where "
        f"neither was cut: median speed-up {s['median_ratio_whole_pairs']}.",
    ]


QUESTION_COLUMNS = (
    ("id", "id"),
    ("category", "category"),
    ("SoT s", "sot_s"),
    ("sequential s", "sequential_s"),
    ("ratio", "ratio"),
    ("points", "points"),
    ("SoT tokens", "sot_tokens"),
    ("seq tokens", "sequential_tokens"),
)


def question_table(rows: Sequence[dict[str, Any]], extra: Sequence[tuple[str, str]] = ()) -> list[str]:
    """A markdown table of paired rows; `extra` adds (header, key) columns."""
    columns = [*QUESTION_COLUMNS, *extra]
    lines = ["| " + " | ".join(h for h, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[k]) for _, k in columns) + " |" for r in rows]
    return lines


# The installed `sot` command: `python -m sot` from the checkout's root would import its source folder,
# where sot.backends is not (setuptools installs backends/ inside the package).
SOT_COMMAND = str(Path(sys.executable).with_name("sot"))
