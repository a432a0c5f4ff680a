"""The embedded default backend: llama.cpp with the bundled model, zero configuration.

``sot serve`` runs a server in the foreground and advertises it in a state file; any ``sot ask``
with no backend configured reuses it. Otherwise a command starts a private server for its own
use and stops it when done. A file lock makes sure two commands never start two servers at once:
the second waits (and says so), then reuses or starts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from filelock import FileLock, Timeout

from sot import constants
from sot.errors import LocalServerError

from ._probe import healthy
from .llama_server import ServerSettings, find_server, llama_server
from .model_files import cache_dir, resolve_model, say
from .openai_compat import OpenAICompatBackend
from .process import ManagedServer

LOCK_NAME = "local-server.lock"
STATE_NAME = "local-server.json"


@dataclass(frozen=True)
class LocalConfig:
    gguf: str | None = None
    binary: str | None = None
    slots: int = constants.DEFAULT_MAX_PARALLEL
    threads: int | None = None
    gpu_layers: int | None = None

    def settings(self, *, prepare: bool = True) -> ServerSettings:
        """The server's command line; with `prepare` off nothing is downloaded or written (dry runs)."""
        program = find_server(self.binary)
        model = resolve_model(self.gguf, program.tool("llama-quantize"), prepare=prepare)
        return ServerSettings(program, model, self.slots, threads=self.threads, gpu_layers=self.gpu_layers)


def _server_lock() -> FileLock:
    # Not bound to a thread: a contended lock is taken in a worker thread and released from the
    # event loop's; a per-thread lock (filelock's default) would ignore that release and keep the
    # file locked, so the next command in this process would wait forever.
    return FileLock(str(cache_dir() / LOCK_NAME), thread_local=False)


def _state_path() -> Path:
    return cache_dir() / STATE_NAME


async def advertised_url() -> str | None:
    """The URL of a healthy server that ``sot serve`` advertises, if any (its health check has a total deadline)."""
    try:
        state = json.loads(_state_path().read_text())
        url = str(state["url"])
        os.kill(int(state["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return url if await healthy(url.removesuffix("/v1") + "/health") else None


def advertise(server: ManagedServer, settings: ServerSettings) -> None:
    state = {"url": server.url, "pid": os.getpid(), "gguf": settings.gguf.name, "slots": settings.slots}
    _state_path().write_text(json.dumps(state))


def withdraw() -> None:
    _state_path().unlink(missing_ok=True)


async def _start_server(config: LocalConfig, port: int | None = None) -> tuple[ManagedServer, ServerSettings]:
    settings = await anyio.to_thread.run_sync(config.settings)
    server = llama_server(settings, cache_dir() / "llama-server.log")
    await server.start(port=port)
    return server, settings


def _backend(url: str) -> OpenAICompatBackend:
    return OpenAICompatBackend(url, constants.LOCAL_MODEL_NAME, dialect="llama.cpp", name="llama.cpp")


async def _acquire(lock: FileLock) -> bool:
    """Take the lock; while another command holds it, wait and say so. False: a server appeared."""
    try:
        lock.acquire(timeout=0)
        return True
    except Timeout:
        say("another sot command is using the local server; waiting for it")
    while True:
        if await advertised_url():
            return False
        try:
            await anyio.to_thread.run_sync(lambda: lock.acquire(timeout=0.5))
            return True
        except Timeout:
            continue


BUNDLED_MODEL_PROFILE = "small"  # backends/small_model/


class LocalBackend:
    """A started (or reused) local server and the backend that talks to it."""

    def __init__(self, backend: OpenAICompatBackend, server: ManagedServer | None, lock: FileLock | None) -> None:
        self.backend = backend
        self.server = server
        self._lock = lock
        # The model profile (sot/profiles.py) for what this backend serves: set by start().
        self.profile: str | None = None

    @classmethod
    async def start(cls, config: LocalConfig | None = None, **overrides: Any) -> LocalBackend:
        config = config or LocalConfig(**overrides)
        local = await cls._start(config)
        # The bundled 135M model gets its own profile; a --gguf of the user's own may be any size.
        local.profile = BUNDLED_MODEL_PROFILE if config.gguf is None else None
        return local

    @classmethod
    async def _start(cls, config: LocalConfig) -> LocalBackend:
        url = await advertised_url()
        if url:
            return cls(_backend(url), None, None)
        lock = _server_lock()
        if not await _acquire(lock):
            url = await advertised_url()
            return cls(_backend(url or ""), None, None)
        try:
            server, _ = await _start_server(config)
        except BaseException:
            lock.release()
            raise
        return cls(_backend(server.url), server, lock)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.backend.aclose()
            if self.server is not None:
                await self.server.stop()
            if self._lock is not None:
                self._lock.release()


async def serve_forever(config: LocalConfig, port: int | None = None) -> None:
    """``sot serve``: run the local server in the foreground (on `port`, else a free one) and advertise it."""
    lock = _server_lock()
    if await advertised_url():
        raise LocalServerError("a local server is already running (sot serve)")
    if not await _acquire(lock):
        raise LocalServerError("a local server is already running (sot serve)")
    server: ManagedServer | None = None
    try:
        server, settings = await _start_server(config, port)
        advertise(server, settings)
        say(f"serving {settings.gguf.name} at {server.url} with {settings.slots} slots; Ctrl-C stops it")
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            withdraw()
            if server is not None:
                await server.stop()
            lock.release()
