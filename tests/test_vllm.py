"""The vLLM backend without a GPU: option mapping, launcher lifecycle against a stand-in, structured
outputs, and failover across endpoints. The real thing is marked gpu and skipped without one."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from _fakes import Reply, sot_script
from tests_support import SOT

import sot
from sot.backends.base import ChatRequest, Constraint
from sot.backends.openai_compat import OpenAICompatBackend
from sot.backends.vllm_server import VllmSettings, diagnose
from sot.templates import Message

HERE = Path(__file__).resolve().parent


def test_dry_run_prints_the_vllm_command() -> None:
    args = [
        "serve",
        "--backend",
        "vllm",
        "--model",
        "Qwen/Qwen2.5-7B-Instruct",
        "--tensor-parallel-size",
        "2",
        "--dry-run",
    ]
    result = subprocess.run([SOT, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout)
    assert command[command.index("serve") + 1] == "Qwen/Qwen2.5-7B-Instruct"
    assert command[command.index("--tensor-parallel-size") + 1] == "2"
    assert "--enable-prefix-caching" in command


def test_options_map_to_vllm_flags() -> None:
    settings = VllmSettings(
        model="m",
        tensor_parallel_size=4,
        pipeline_parallel_size=2,
        data_parallel_size=3,
        max_num_seqs=256,
        gpu_memory_utilization=0.8,
        max_model_len=8192,
        ngram_speculative_tokens=5,
    )
    command = settings.command(9000)
    flags = dict(itertools.pairwise(command))
    assert flags["--port"] == "9000" and flags["--host"] == "127.0.0.1"
    assert flags["--tensor-parallel-size"] == "4" and flags["--pipeline-parallel-size"] == "2"
    assert flags["--data-parallel-size"] == "3" and flags["--max-num-seqs"] == "256"
    assert flags["--gpu-memory-utilization"] == "0.8" and flags["--max-model-len"] == "8192"
    assert json.loads(flags["--speculative-config"]) == {
        "method": "ngram",
        "num_speculative_tokens": 5,
        "prompt_lookup_max": 4,
    }
    with pytest.raises(sot.ConfigurationError):
        VllmSettings(model="m", tensor_parallel_size=0)


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        ("RuntimeError: No CUDA GPUs are available", "no usable GPU"),
        ("torch.OutOfMemoryError: CUDA out of memory.", "out of GPU memory"),
        ("x is not a local folder and is not a valid model identifier", "model not found"),
        ("all good", None),
    ],
)
def test_common_failures_are_named(log: str, expected: str | None) -> None:
    found = diagnose(log)
    assert (found is None) if expected is None else (found is not None and expected in found)


def _serve_env(tmp_path: Path, mode: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SOT_VLLM_COMMAND=f"{shlex.quote(sys.executable)} -m _fakes.vllm",
        FAKE_VLLM_MODE=mode,
        FAKE_VLLM_LOG=str(tmp_path / "vllm.log"),
        SOT_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]),  # _fakes (sot: the installed one)
    )
    return env


def _start_serve(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    command = [SOT, "serve", "--backend", "vllm", "--model", "my-model", "--max-num-seqs", "32"]
    return subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_serve_env(tmp_path, mode)
    )


def test_launcher_lifecycle_health_ask_and_ctrl_c(tmp_path: Path) -> None:
    serve = _start_serve(tmp_path, "ok")
    assert serve.stderr is not None
    url = None
    for line in serve.stderr:
        if "sot: vLLM serves" in line:
            url = line.split(" at ")[1].split(";")[0]
            break
    assert url, "the launcher never reported a healthy server"
    children = psutil.Process(serve.pid).children(recursive=True)
    assert children
    ask = subprocess.run(
        [SOT, "ask", "--json", "--mode", "sot", "--base-url", url, "--dialect", "vllm", "--profile", "small", "How?"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ask.returncode == 0, ask.stderr
    assert json.loads(ask.stdout)["model"] == "my-model"
    serve.send_signal(signal.SIGINT)
    assert serve.wait(timeout=30) == 130
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert alive == []
    entries = [json.loads(line) for line in (tmp_path / "vllm.log").read_text().splitlines()]
    argv = entries[0]["argv"]
    assert argv[:2] == ["serve", "my-model"] and argv[argv.index("--max-num-seqs") + 1] == "32"
    skeleton_bodies = [e["body"] for e in entries[1:] if "structured_outputs" in e.get("body", {})]
    assert len(skeleton_bodies) == 1 and "regex" in skeleton_bodies[0]["structured_outputs"]


@pytest.mark.parametrize(
    ("mode", "message"), [("oom", "out of GPU memory"), ("nogpu", "no usable GPU"), ("notfound", "model not found")]
)
def test_launcher_turns_crashes_into_one_line_errors(tmp_path: Path, mode: str, message: str) -> None:
    serve = _start_serve(tmp_path, mode)
    _, err = serve.communicate(timeout=60)
    assert serve.returncode == sot.LocalServerError.exit_code
    last = [line for line in err.splitlines() if line.startswith("sot: error:")]
    assert len(last) == 1 and message in last[0]
    assert "Traceback" not in last[0]


def _skeleton_request() -> ChatRequest:
    return ChatRequest(
        [Message("user", "q")], max_tokens=8, constraint=Constraint(gbnf="root ::= x", regex="(x\\n){3}")
    )


def test_structured_output_fields_per_dialect() -> None:
    vllm = OpenAICompatBackend("http://127.0.0.1:9/v1", "m", dialect="vllm")
    llama = OpenAICompatBackend("http://127.0.0.1:9/v1", "m", dialect="llama.cpp")
    plain = OpenAICompatBackend("http://127.0.0.1:9/v1", "m")
    request = _skeleton_request()
    assert vllm.request_body(request) == {"structured_outputs": {"regex": "(x\\n){3}"}}
    assert "guided_regex" not in json.dumps(vllm.request_body(request))
    assert llama.request_body(request) == {"grammar": "root ::= x"}
    assert plain.request_body(request) == {}


@pytest.mark.anyio
async def test_skeleton_falls_back_to_text_parsing_when_the_constraint_is_ignored(fake) -> None:
    server = fake(
        lambda r: (
            Reply("Sure! Skeleton:\n1. **Alpha**\n2. **Beta**\n\nHope it helps.")
            if r.kind == "skeleton"
            else Reply("x.")
        )
    )
    answer = await sot.ask("q", base_url=server.url, model="m", mode="sot", dialect="vllm", profile="small")
    assert answer.points == ["Alpha", "Beta"]
    assert "structured_outputs" in server.of_kind("skeleton")[0].body


@pytest.mark.anyio
async def test_failover_across_endpoints_keeps_every_point_in_order(fake) -> None:
    points = [f"Point {c}" for c in "ABCDEF"]
    healthy = fake(sot_script(points))
    broken = fake(lambda request: Reply(status=503))
    async with sot.Client(base_url=[broken.url, healthy.url], model="m", mode="sot", max_parallel=3) as client:
        answer = await client.ask("How?")
        again = await client.ask("How else?")
    assert answer.points == points and answer.failed_points == []
    assert answer.expansions == [f"Details on {p} for point {i}." for i, p in enumerate(points, 1)]
    assert again.failed_points == []
    # Out of rotation after its first failures: the broken server sees few of the 14 calls.
    assert len(broken.requests) <= 3
    assert len(healthy.requests) == 14


@pytest.mark.anyio
async def test_calls_spread_over_healthy_endpoints_within_their_limits(fake) -> None:
    points = [f"Point {c}" for c in "ABCDEFGH"]
    one, two = (
        fake(sot_script(points, expansion_delay=lambda n: 0.2)),
        fake(sot_script(points, expansion_delay=lambda n: 0.2)),
    )
    async with sot.Client(base_url=[one.url, two.url], model="m", mode="sot", max_parallel=8, max_points=8) as client:
        answer = await client.ask("How?")
    assert answer.points == points
    assert one.max_in_flight <= 4 and two.max_in_flight <= 4  # each endpoint's share of 8
    assert len(one.of_kind("expand")) + len(two.of_kind("expand")) == 8
    assert min(len(one.of_kind("expand")), len(two.of_kind("expand"))) >= 1


def _has_gpu() -> bool:
    return (
        shutil.which("nvidia-smi") is not None and subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0
    )


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs a CUDA GPU")
def test_real_vllm_serves_a_sot_answer(tmp_path: Path) -> None:
    pytest.importorskip("vllm")
    model = os.environ.get("SOT_VLLM_TEST_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
    serve = subprocess.Popen([SOT, "serve", "--backend", "vllm", "--model", model], stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stderr is not None
        url = next(line.split(" at ")[1].split(";")[0] for line in serve.stderr if "sot: vLLM serves" in line)
        ask = subprocess.run(
            [
                sys.executable,
                "-m",
                "sot",
                "ask",
                "--json",
                "--mode",
                "sot",
                "--base-url",
                url,
                "--dialect",
                "vllm",
                "How can I sleep better?",
            ],
            capture_output=True,
            text=True,
        )
        assert ask.returncode == 0 and len(json.loads(ask.stdout)["points"]) >= 3
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=60)
