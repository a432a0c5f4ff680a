"""A model server as a child process on loopback: start, wait for health, stop, never orphan.

The process runs in its own session (a terminal's Ctrl-C reaches us, and we stop it in order),
is stopped after use and on Ctrl-C, is killed by an ``atexit`` hook if the interpreter exits
another way, and on Linux is killed by the kernel if our process dies, kill -9 included
(``PR_SET_PDEATHSIG``). Its output goes to a log file; a failed start is explained in one line by
the server kind's own reading of that log.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import ctypes
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import httpx

from sot import constants
from sot.errors import LocalServerError

from ._probe import ProbeFailed, get_json

HEALTH_TIMEOUT_S = 120.0
# The settings a server's failure line may tell the user to change (sot serve's and the local backend's).
SERVER_SETTINGS = frozenset(
    {"llama_server", "gguf", "model", "max_model_len", "max_num_seqs", "gpu_memory_utilization"}
    | {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"}
)
STOP_GRACE_S = 5.0

# Reads a failed server's log and returns a one-line explanation, or None when it knows none.
Diagnose = Callable[[str], str | None]


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


def _last_line(log: str) -> str:
    lines = [line for line in log.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


class ManagedServer:
    """One server process on 127.0.0.1 whose command takes the port it must listen on."""

    def __init__(
        self,
        name: str,
        command: Callable[[int], Sequence[str]],
        *,
        log_path: Path,
        diagnose: Diagnose | None = None,
        health_path: str = "/health",
    ) -> None:
        self.name = name
        self.command = command
        self.log_path = log_path
        self.diagnose = diagnose
        self.health_path = health_path
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, timeout: float = HEALTH_TIMEOUT_S, port: int | None = None) -> None:
        self.port = port or free_port()
        try:
            with self.log_path.open("wb") as log:
                self.process = subprocess.Popen(
                    list(self.command(self.port)),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
        except OSError as exc:
            raise LocalServerError(f"could not start {self.name}: {exc.strerror}") from None
        atexit.register(self._kill)
        try:
            await self._wait_healthy(timeout)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.stop()
            raise

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def _failure(self, what: str) -> LocalServerError:
        log = self.log_text()
        known = self.diagnose(log) if self.diagnose else None
        detail = known or _last_line(log)
        # A known failure's fix names settings, quoted ('max_model_len'): the front end respells them. The
        # line may quote the child's own words too ('olmoe'): only the server settings count.
        options = [name for name in re.findall(r"'([a-z_]+)'", known or "") if name in SERVER_SETTINGS]
        return LocalServerError(f"{self.name} {what}" + (f": {detail}" if detail else ""), options=options)

    async def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=constants.HEALTH_PROBE_TIMEOUT_S) as http:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise self._failure(f"exited with code {self.process.returncode} while starting")
                # Each probe has a total deadline: a reply trickling a byte at a time cannot hold it.
                probe = min(constants.HEALTH_PROBE_TIMEOUT_S, max(0.05, deadline - time.monotonic()))
                url = f"http://127.0.0.1:{self.port}{self.health_path}"
                with contextlib.suppress(ProbeFailed):
                    status, _ = await get_json(http, url, deadline_s=probe)
                    if status == 200:
                        return
                await anyio.sleep(0.05)
        raise self._failure(f"was not healthy within {timeout:g} s")

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            with anyio.move_on_after(STOP_GRACE_S):
                while process.poll() is None:
                    await anyio.sleep(0.02)
            if process.poll() is None:
                process.kill()
                process.wait()
        atexit.unregister(self._kill)
        self.process = None

    async def follow_log(self, write: Callable[[str], object]) -> None:
        """Copy the server's log to `write` as it grows, until the process exits (then raise)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # Read only what was appended since the last look: a long-running server's log grows for days.
        with self.log_path.open("rb") as log:
            while True:
                exited = self.process is None or self.process.poll() is not None
                appended = log.read()
                if appended:
                    write(decoder.decode(appended))
                if exited:
                    code = self.process.returncode if self.process else None
                    raise self._failure(f"exited with code {code}")
                await anyio.sleep(0.2)

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
