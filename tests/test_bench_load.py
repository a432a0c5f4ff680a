"""eval/bench_load.py's options: the twin's step-time curve, and what its answers are held to."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import bench_load
from twin.physics import BATCH_LIMIT, NIM_LLAMA_8B_H100

import sot


def test_by_default_the_twin_steps_at_nims_table() -> None:
    args = bench_load.parse_args([])
    assert args.step_table == NIM_LLAMA_8B_H100 and args.batch_limit == BATCH_LIMIT


def test_a_measured_curve_sets_the_step_time_and_the_batch_limit(tmp_path: Path) -> None:
    levels = [{"streams": n, "ms_per_token_median": ms} for n, ms in [(1, 5.0), (4, 8.0), (64, 40.0)]]
    run = {
        "device": {"kind": "gpu", "name": "G"},
        "token_latency": {"program": "p", "model": {"label": "m"}, "levels": levels},
    }
    path = tmp_path / "gpu_bench.json"
    path.write_text(json.dumps(run))
    args = bench_load.parse_args(["--table", str(path)])
    # The measurement ended at 64 streams: a larger batch would be extrapolated, not measured.
    assert args.step_table == ((1, 5.0), (4, 8.0), (64, 40.0)) and args.batch_limit == 64
    assert bench_load.parse_args(["--table", str(path), "--batch-limit", "32"]).batch_limit == 32

    # A sequential answer's time from the physics alone is its tokens at this curve's step time.
    answer = SimpleNamespace(
        mode="sequential",
        calls=[None],
        points=[],
        truncated=False,
        timings=SimpleNamespace(total_s=1.0, first_token_s=0.1),
        usage=SimpleNamespace(prompt_tokens=10, completion_tokens=100),
    )
    row = bench_load.answer_row(cast(sot.Answer, answer), scale=1.0, background=3, table=args.step_table)
    assert row["physics_s"] == pytest.approx(100 * 8.0 / 1000)


def test_a_table_that_is_no_curve_is_refused_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_load.parse_args(["--table", "8:2,1:1"])
    assert "--table" in capsys.readouterr().err
