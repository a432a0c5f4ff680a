"""vLLM's OpenAI-compatible server, launched with settings that suit SoT.

Prefix caching is on (every expansion of a question shares one prefix: instructions, question,
skeleton), and the batch is sized for points x concurrent questions. Parallelism past one GPU is
vLLM's own: tensor / pipeline / data parallel sizes pass straight through (several nodes: start
vLLM with Ray yourself and point ``--base-url`` at it, once per endpoint).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass

from sot import constants
from sot.errors import ConfigurationError, LocalServerError

from .model_files import cache_dir
from .process import ManagedServer

ENV_VLLM_COMMAND = "SOT_VLLM_COMMAND"
# Points per question x questions answered at once: room for a full fan-out of several answers.
DEFAULT_MAX_NUM_SEQS = constants.DEFAULT_MAX_POINTS * 16
HEALTH_TIMEOUT_S = 900.0  # model download and CUDA graph capture take minutes

_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"No CUDA GPUs are available|Failed to infer device type|no (?:NVIDIA|CUDA) (?:driver|GPU)|"
                   r"Found no NVIDIA driver|CUDA driver version is insufficient", re.I),
        "no usable GPU found (vLLM needs a CUDA GPU here)",
    ),
    (
        re.compile(r"CUDA out of memory|OutOfMemoryError|No available memory for the cache blocks|"
                   r"larger than the available KV cache memory|insufficient memory", re.I),
        "out of GPU memory: lower 'max_model_len' or 'max_num_seqs', raise 'gpu_memory_utilization', "
        "or add GPUs with 'tensor_parallel_size'",
    ),
    (
        re.compile(r"is not a local folder and is not a valid model identifier|Repository Not Found|"
                   r"RepositoryNotFoundError|401 Client Error|Cannot find model|does not appear to have a file", re.I),
        "model not found: check the model id or path (and HF_TOKEN for gated models)",
    ),
    (
        re.compile(r"ModuleNotFoundError: No module named 'vllm'|No module named vllm", re.I),
        "vllm is not installed: pip install vllm (on a machine with a CUDA GPU)",
    ),
)  # fmt: skip


def diagnose(log: str) -> str | None:
    """One line for vLLM's common start failures, read from its log."""
    for pattern, message in _FAILURES:
        if pattern.search(log):
            return message
    return None


@dataclass(frozen=True)
class VllmSettings:
    model: str
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS
    gpu_memory_utilization: float = 0.90
    max_model_len: int | None = None
    ngram_speculative_tokens: int = 0
    served_model_name: str | None = None
    extra_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_num_seqs"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"'{name}' must be at least 1", options=(name,))
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ConfigurationError("'gpu_memory_utilization' must be in (0, 1]", options=("gpu_memory_utilization",))
        if not self.model.strip():
            raise ConfigurationError("'model' is required for the vLLM backend", options=("model",))

    def launcher(self) -> list[str]:
        """The program that runs vLLM: $SOT_VLLM_COMMAND, the `vllm` CLI, or this Python's module."""
        override = os.environ.get(ENV_VLLM_COMMAND)
        if override:
            return shlex.split(override)
        found = shutil.which("vllm")
        if found:
            return [found]
        if importlib.util.find_spec("vllm") is not None:
            return [sys.executable, "-m", "vllm.entrypoints.cli.main"]
        return ["vllm"]  # not installed: the canonical command, for --dry-run and a clear error

    def command(self, port: int, host: str = "127.0.0.1") -> list[str]:
        args = [
            *self.launcher(), "serve", self.model,
            "--host", host,
            "--port", str(port),
            "--served-model-name", self.served_model_name or self.model,
            "--enable-prefix-caching",
            "--max-num-seqs", str(self.max_num_seqs),
            "--gpu-memory-utilization", f"{self.gpu_memory_utilization:g}",
            "--tensor-parallel-size", str(self.tensor_parallel_size),
            "--pipeline-parallel-size", str(self.pipeline_parallel_size),
            "--data-parallel-size", str(self.data_parallel_size),
        ]  # fmt: skip
        if self.max_model_len:
            args += ["--max-model-len", str(self.max_model_len)]
        if self.ngram_speculative_tokens:
            spec = {
                "method": "ngram",
                "num_speculative_tokens": self.ngram_speculative_tokens,
                "prompt_lookup_max": 4,
            }
            args += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
        return [*args, *self.extra_args]


def vllm_server(settings: VllmSettings) -> ManagedServer:
    return ManagedServer("vLLM", settings.command, log_path=cache_dir() / "vllm-server.log", diagnose=diagnose)


async def serve_vllm(settings: VllmSettings, *, port: int | None, timeout: float = HEALTH_TIMEOUT_S) -> None:
    """``sot serve --backend vllm``: run vLLM in the foreground, its log on stderr, until Ctrl-C."""
    import anyio

    program = settings.launcher()[0]
    if os.sep not in program and shutil.which(program) is None:
        raise LocalServerError("vllm is not installed: pip install vllm (on a machine with a CUDA GPU)")
    server = vllm_server(settings)
    try:
        await server.start(timeout=timeout, port=port)
        print(
            f"sot: vLLM serves {settings.served_model_name or settings.model} at {server.url}; "
            f"ask with: sot ask --base-url {server.url} --dialect vllm ...",
            file=sys.stderr,
            flush=True,
        )
        await server.follow_log(lambda text: print(text, end="", file=sys.stderr, flush=True))
    finally:
        with anyio.CancelScope(shield=True):
            await server.stop()
