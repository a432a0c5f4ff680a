"""The twin's settings, and the one law that makes it a batched GPU server: a decode step takes longer
the more streams share it.

Defaults are those of NVIDIA NIM's published latency table for Llama-3.1-8B-Instruct on one H100 (time
per output token against concurrent streams). Between its rows the step time is interpolated linearly;
past its last row it is extrapolated along the last segment, so a batch limit above 200 still costs more.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# (running streams, ms per output token) rows, in increasing stream counts.
Table = tuple[tuple[int, float], ...]
# NVIDIA NIM, Llama-3.1-8B-Instruct, 1x H100.
NIM_LLAMA_8B_H100: Table = (
    (1, 4.63),
    (5, 4.58),
    (25, 5.19),
    (50, 5.91),
    (100, 7.57),
    (200, 12.65),
)
# A prompt token not in the prefix cache: an 8B model on an H100 prefills on the order of 20k tokens/s.
PREFILL_MS_PER_TOKEN = 0.05
# vLLM's max_num_seqs is 256 by default; 200 keeps the batch inside the measured table.
BATCH_LIMIT = 200
# vLLM's prefix cache is kept in blocks of 16 tokens: only whole blocks are ever shared.
CACHE_BLOCK_TOKENS = 16
# What the KV cache holds, in tokens: about 450k for Llama-3.1-8B (128 KiB a token) in ~60 GB of an H100.
KV_CAPACITY_TOKENS = 450_000
# A background stream's context (prompt and what it has written so far), for the KV-cache gauge only.
BACKGROUND_CONTEXT_TOKENS = 1_500
# How often, in real seconds, the tokens decoded since the last flush go out (first and last tokens go
# out at once): one chunk per stream per flush keeps a 2-core client from drowning in tiny SSE events.
FLUSH_INTERVAL_S = 0.01


def format_table(table: Table) -> str:
    """A table as rows of the command line's form: "1:4.63,5:4.58,..."."""
    return ",".join(f"{n}:{ms}" for n, ms in table)


def parse_table(spec: str) -> Table:
    """A step table from rows ("1:4.63,5:4.58,...") or from a file eval/bench_gpu.py wrote (its measured
    median time per output token at each stream count, ``token_latency.levels``); ValueError, naming the
    fix, for anything that is not at least two rows in increasing stream counts."""
    if spec.endswith(".json"):
        try:
            levels = _measured(spec)["token_latency"]["levels"]
            table = tuple((int(row["streams"]), float(row["ms_per_token_median"])) for row in levels)
        except KeyError as missing:
            raise ValueError(f"{spec}: its time-per-token run lacks {missing}: measure it again") from None
        if not all(row.get("full_length", True) for row in levels):
            raise ValueError(f"{spec}: some streams stopped short of their length: measure it again")
    else:
        rows = [item.split(":") for item in spec.split(",") if item.strip()]
        try:
            table = tuple((int(n), float(ms)) for n, ms in rows)
        except ValueError:
            raise ValueError(f"{spec!r}: give streams:ms rows, e.g. 1:4.63,5:4.58") from None
    _check(table, spec)
    return table


def _check(table: Table, name: str) -> None:
    counts = [n for n, _ in table]
    if len(table) < 2 or counts != sorted(set(counts)) or counts[0] < 1 or min(ms for _, ms in table) <= 0:
        raise ValueError(f"{name}: a step table needs two or more rows, in increasing stream counts from 1 up")


def describe_table(spec: str | None) -> str:
    """Where a table passed as `spec` comes from, in words (None: the default)."""
    if spec is None:
        return "NVIDIA NIM's table for Llama-3.1-8B-Instruct on one H100"
    if not spec.endswith(".json"):
        return "a table given on the command line"
    found = _measured(spec)
    device, latency = found["device"], found["token_latency"]
    where = f"one {device['name']}" if device.get("kind") == "gpu" else f"the CPU ({device['name']})"
    return f"{latency['program']} measured on {where} ({latency['model']['label']}; {Path(spec).name})"


def _measured(path: str) -> dict[str, Any]:
    """A results file of eval/bench_gpu.py that holds a time-per-token run."""
    found: dict[str, Any] = json.loads(Path(path).read_text())
    if not isinstance(found.get("token_latency"), dict):
        raise ValueError(f"{path} has no time-per-token run: eval/bench_gpu_tokens.py writes one")
    return found


def step_ms(streams: int, table: Table = NIM_LLAMA_8B_H100) -> float:
    """The duration of one decode step shared by `streams` running streams (at least one)."""
    counts = [n for n, _ in table]
    n = max(streams, counts[0])
    i = bisect.bisect_left(counts, n)
    if i < len(table) and counts[i] == n:
        return table[i][1]
    # Between two rows, or past the last one (then along the last segment).
    lo, hi = (table[i - 1], table[i]) if i < len(table) else (table[-2], table[-1])
    return lo[1] + (n - lo[0]) * (hi[1] - lo[1]) / (hi[0] - lo[0])


@dataclass(frozen=True)
class TwinConfig:
    """Everything the twin's physics depends on; every default is documented above."""

    model: str = "twin-llama-3.1-8b-instruct"
    table: Table = NIM_LLAMA_8B_H100
    prefill_ms_per_token: float = PREFILL_MS_PER_TOKEN
    batch_limit: int = BATCH_LIMIT
    background_streams: int = 0
    # Real seconds per simulated second are 1 / time_scale: the same physics, that many times faster.
    time_scale: float = 1.0
    cache_block_tokens: int = CACHE_BLOCK_TOKENS
    # Blocks the prefix cache remembers before it forgets the least recently used (about 1.6M tokens).
    cache_blocks: int = 100_000
    kv_capacity_tokens: int = KV_CAPACITY_TOKENS
    background_context_tokens: int = BACKGROUND_CONTEXT_TOKENS
    n_ctx: int = 8192
    flush_interval_s: float = FLUSH_INTERVAL_S

    def __post_init__(self) -> None:
        _check(self.table, "the step table")
        if self.batch_limit < 1 or self.time_scale <= 0 or self.prefill_ms_per_token < 0:
            raise ValueError("batch_limit >= 1, time_scale > 0 and prefill_ms_per_token >= 0, please")
        if not 0 <= self.background_streams <= self.batch_limit:
            raise ValueError(f"background_streams must be within 0..{self.batch_limit}")

    def step_s(self, streams: int) -> float:
        """One decode step with `streams` running, in simulated seconds."""
        return step_ms(streams, self.table) / 1000.0

    def prefill_s(self, tokens: int) -> float:
        return tokens * self.prefill_ms_per_token / 1000.0
