"""eval/bench_gpu.py: the GPU benchmark harness, run end to end on the CPU with the real llama.cpp server.

Only the GPU itself is faked (an `nvidia-smi` script on PATH), to check how the device is read.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests_support import require_binary

from sot.constants import DEFAULT_MAX_POINTS as MAX

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "eval" / "bench_gpu.py"
FAKE_NVIDIA_SMI = """#!/bin/sh
if [ "$1" = "--query-gpu=name,driver_version" ]; then
  echo "NVIDIA H100 80GB HBM3, 570.86.15"
  exit 0
fi
echo "| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8 |"
"""
# The unsuitable question is skipped, and --questions 2 stops before the fourth.
QUESTIONS = [
    (11, "How can I improve my time management skills?", True),
    (12, "Solve 3x + 11 = 5x - 9 for x.", False),
    (13, "What are the benefits of regular exercise?", True),
    (14, "How do I plan a trip?", True),
]
FAKE_NVCC = """#!/bin/sh
echo "Cuda compilation tools, release 12.6, V12.6.85"
"""


def _device(path: str) -> dict[str, Any]:
    code = f"import json, sys; sys.path.insert(0, {str(SCRIPT.parent)!r}); import bench_gpu; print(json.dumps(bench_gpu.device()))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PATH": path}, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _script(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    (folder / name).chmod(0o755)


def test_the_device_is_what_nvidia_smi_and_nvcc_report(tmp_path: Path) -> None:
    _script(tmp_path / "bin", "nvidia-smi", FAKE_NVIDIA_SMI)
    _script(tmp_path / "bin", "nvcc", FAKE_NVCC)
    found = _device(str(tmp_path / "bin"))
    assert found["kind"] == "gpu" and found["name"] == "NVIDIA H100 80GB HBM3" and found["count"] == 1
    assert (found["driver"], found["cuda_driver"], found["cuda_toolkit"]) == ("570.86.15", "12.8", "12.6")


def test_without_nvidia_smi_the_device_is_the_cpu(tmp_path: Path) -> None:
    _script(tmp_path / "bin", "nvcc", FAKE_NVCC)  # a CUDA toolkit without a GPU is still a CPU run
    found = _device(str(tmp_path / "bin"))
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    assert found["kind"] == "cpu" and found["name"] == model and "cuda_toolkit" not in found


@pytest.mark.local
def test_the_harness_end_to_end_on_the_cpu(tmp_path: Path) -> None:
    require_binary()
    data = tmp_path / "questions.jsonl"
    rows = [{"question_id": i, "category": "generic", "question": q, "sot_suitable": ok} for i, q, ok in QUESTIONS]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prefix = tmp_path / "out" / "smoke"
    options = "--questions 2 --slots 2 --streams 1,2 --throughput-tokens 24 --max-tokens 96 --point-max-tokens 32"
    command = [sys.executable, str(SCRIPT), *options.split(), "--build-time-s", "321.5"]
    command += ["--data", str(data), "--out-prefix", str(prefix)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]

    result = json.loads(Path(f"{prefix}.json").read_text())
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    assert result["commit"] == head.stdout.strip() and result["build_time_s"] == 321.5
    assert result["device"]["kind"] in ("cpu", "gpu") and result["device"]["name"]
    assert result["gpu_layers"] == 999 and result["max_tokens"] == 96

    [run] = result["runs"]
    flags = run["server_flags"]
    assert run["slots"] == 2 and flags[flags.index("--parallel") + 1] == "2"
    assert flags[flags.index("--n-gpu-layers") + 1] == "999" and run["model"].endswith(".gguf")
    assert "--port" not in flags and not any("/" in f for f in flags)

    tps = run["throughput_tokens_per_s"]
    assert list(tps) == ["1", "2"] and all(0 < v < 100_000 for v in tps.values())
    assert run["throughput_scaling"] == {"2": round(tps["2"] / tps["1"], 2)}

    # Only the first two suitable questions; the order flips from one question to the next.
    assert [r["id"] for r in run["rows"]] == [11, 13]
    assert [r["order"][0] for r in run["rows"]] == ["sot", "two_phase"]
    for r in run["rows"]:
        assert r["sot_mode_used"] == "sot" and 2 <= r["points"] <= MAX and 2 <= r["two_phase_points"] <= MAX
        assert 0 < r["sequential_tokens"] <= 96 and r["sot_tokens"] > 0
        assert 0 < r["sot_s"] < 1200 and 0 < r["sequential_s"] < 1200 and 0 < r["two_phase_s"] < 1200
        assert r["ratio"] == pytest.approx(r["sequential_s"] / r["sot_s"], abs=0.01)
        assert r["pipeline_ratio"] == pytest.approx(r["two_phase_s"] / r["sot_s"], abs=0.01)

    ratios = [r["ratio"] for r in run["rows"]]
    assert run["questions"] == 2
    assert run["median_ratio_sequential_over_sot"] == pytest.approx(statistics.median(ratios), abs=0.001)
    assert run["geomean_ratio_sequential_over_sot"] == pytest.approx(math.sqrt(ratios[0] * ratios[1]), abs=0.001)
    assert run["sot_faster"] == sum(1 for r in ratios if r > 1)
    assert run["pipelined_faster"] == sum(1 for r in run["rows"] if r["pipeline_ratio"] > 1)

    report = Path(f"{prefix}.md").read_text()
    assert f"median **{run['median_ratio_sequential_over_sot']}**" in report
    assert f"SoT faster on {run['sot_faster']} of 2" in report and "build time: 321.5 s" in report
    assert "| tokens/s | " + " | ".join(str(v) for v in tps.values()) + " |" in report
    assert ("CPU only" in report) == (result["device"]["kind"] == "cpu")
    assert [line.split(" | ")[0] for line in report.splitlines() if line.startswith("| 1")] == ["| 11", "| 13"]
