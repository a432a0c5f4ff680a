"""``sot serve``: a model server in the foreground, local llama.cpp (shared with `sot ask`) or vLLM."""

from __future__ import annotations

import errno
import shlex
import socket
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from .. import constants
from ..errors import ConfigurationError, SotError
from ._common import Debug, fail, interrupted
from ._options import Gguf, LlamaServer

if TYPE_CHECKING:
    from ..backends.vllm_server import VllmSettings


def check_port(port: int, *, listen: bool) -> None:
    """Refuse a --port the server could not listen on now, before minutes of loading a model."""
    if not 1 <= port <= 65535:
        raise ConfigurationError(f"--port must be between 1 and 65535, not {port}")
    if not listen:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As servers bind: a port whose last connections linger in TIME_WAIT is free to them, so to us.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise _unusable(port, exc) from None


def _unusable(port: int, exc: OSError) -> ConfigurationError:
    if exc.errno == errno.EADDRINUSE:
        return ConfigurationError(
            f"port {port} is already in use on 127.0.0.1: choose another --port, or leave it out for a free one"
        )
    if exc.errno == errno.EACCES:
        return ConfigurationError(f"port {port} needs privileges to listen on: choose a --port of 1024 or above")
    return ConfigurationError(f"cannot listen on port {port} ({exc.strerror}): choose another --port")


def serve(
    backend: Annotated[str, typer.Option(help="llama.cpp (local CPU, default) or vllm (GPU).")] = "llama.cpp",
    model: Annotated[str | None, typer.Option("--model", help="vllm: Hugging Face id or local path.")] = None,
    tensor_parallel_size: Annotated[int, typer.Option(help="vllm: GPUs per model replica (tensor parallel).")] = 1,
    pipeline_parallel_size: Annotated[int, typer.Option(help="vllm: pipeline stages.")] = 1,
    data_parallel_size: Annotated[int, typer.Option(help="vllm: model replicas.")] = 1,
    max_num_seqs: Annotated[int, typer.Option(help="vllm: sequences decoded at once (points x questions).")] = 160,
    gpu_memory_utilization: Annotated[float, typer.Option(help="vllm: share of GPU memory to use.")] = 0.90,
    max_model_len: Annotated[int | None, typer.Option(help="vllm: context length cap.")] = None,
    speculative_ngram: Annotated[int, typer.Option(help="vllm: n-gram speculative tokens (0: off).")] = 0,
    port: Annotated[int | None, typer.Option(help="Port to listen on, on 127.0.0.1 (default: a free one).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the server command and exit.")] = False,
    gguf: Gguf = None,
    llama_server: LlamaServer = None,
    slots: Annotated[int, typer.Option(help="llama.cpp: parallel slots.")] = constants.DEFAULT_MAX_PARALLEL,
    threads: Annotated[int | None, typer.Option(help="llama.cpp: CPU threads.")] = None,
    debug: Debug = False,
) -> None:
    """Run a model server in the foreground until Ctrl-C: local llama.cpp (reused by `sot ask`) or vLLM."""
    from ..backends.vllm_server import VllmSettings

    try:
        if port is not None:
            check_port(port, listen=not dry_run)
        if backend == "vllm":
            vllm = VllmSettings(
                model=model or "",
                tensor_parallel_size=tensor_parallel_size,
                pipeline_parallel_size=pipeline_parallel_size,
                data_parallel_size=data_parallel_size,
                max_num_seqs=max_num_seqs,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=max_model_len,
                ngram_speculative_tokens=speculative_ngram,
            )
            _serve_vllm(vllm, port, dry_run)
        elif backend == "llama.cpp":
            _serve_llama(gguf, llama_server, slots, threads, port, dry_run)
        else:
            raise ConfigurationError(f"--backend must be llama.cpp or vllm, not {backend!r}")
    except KeyboardInterrupt:
        raise interrupted("sot: server stopped") from None
    except SotError as exc:
        fail(exc, debug)


def _serve_vllm(settings: VllmSettings, port: int | None, dry_run: bool) -> None:
    from ..backends.vllm_server import serve_vllm

    if dry_run:
        typer.echo(shlex.join(settings.command(port or 8000)))
        return
    anyio.run(lambda: serve_vllm(settings, port=port))


def _serve_llama(
    gguf: str | None, binary: str | None, slots: int, threads: int | None, port: int | None, dry_run: bool
) -> None:
    from ..backends.local import LocalConfig, serve_forever
    from ..backends.process import free_port

    config = LocalConfig(gguf=gguf, binary=binary, slots=slots, threads=threads)
    if dry_run:
        typer.echo(shlex.join(config.settings(prepare=False).command(port or free_port())))
        return
    anyio.run(lambda: serve_forever(config, port=port))
