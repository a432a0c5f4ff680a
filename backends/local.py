"""The embedded default backend: llama.cpp with the bundled model, zero configuration.

One local server at a time per cache directory, shared by every command that wants it: whichever
command starts it (``sot serve``, ``sot proxy``, ``sot ask``, ``sot batch``, a program using
``sot.Client``) holds a file lock for as long as it runs the server and advertises it in a record
beside the lock (who holds it, which model, the URL). Any other command with no backend configured
uses that server while it runs; when its owner ends and stops it, the commands still using it carry
on with a server of their own (the first to notice starts one, the others use that). A command that
cannot share (another model, a holder that advertises nothing, ``sot serve`` while another command
runs the server) is refused at once, in one line that names the holder and the way out; the only
waits are for a holder that is starting or stopping its server, both bounded by the holder's own
deadlines.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from filelock import FileLock, Timeout

from sot import constants
from sot.errors import BackendConnectionError, LocalServerError, ProtocolError

from ._holder import (
    LOCK_NAME,
    RUNNING,
    STARTING,
    STATE_NAME,
    STOPPING,
    Holder,
    advertised_url,
    alive,
    describe_command,
    is_healthy,
    read_holder,
    server_lock,
    this_command,
    unrecorded_holder,
    withdraw,
    write_holder,
)
from ._load import LoadReading
from .base import ChatChunk, ChatRequest
from .llama_server import ServerSettings, find_server, llama_server
from .model_files import cache_dir, resolve_model, say
from .openai_compat import OpenAICompatBackend
from .process import ManagedServer

logger = logging.getLogger("sot.local")

__all__ = [
    "LOCK_NAME",
    "STATE_NAME",
    "LocalBackend",
    "LocalConfig",
    "advertised_url",
    "describe_command",
    "read_holder",
    "serve_forever",
]

# The holder writes its record right after taking the lock; a lock held this long with no record is
# held by something that does not advertise (an older sot, another program), so it cannot be shared.
RECORD_GRACE_S = 5.0
# A holder whose server stops answering its health check for this long is reported, not waited on.
UNHEALTHY_PATIENCE_S = 30.0
POLL_S = 0.1


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

    def chosen_model(self) -> Path | None:
        """The GGUF asked for (--gguf, else $SOT_GGUF), resolved; None: the bundled model."""
        chosen = self.gguf or os.environ.get(constants.ENV_GGUF)
        return Path(chosen).expanduser().resolve() if chosen else None


# Claiming: use the running server, or take the lock and run one -----------------------------------


def _mismatch(holder: Holder, chosen: Path | None) -> LocalServerError:
    wanted = chosen.name if chosen is not None else "the bundled model"
    served = holder.model_name()
    share = "leave out 'gguf' to use it" if holder.serves(None) else f"give the same 'gguf' ({served}) to use it"
    return LocalServerError(
        f"{holder.who} runs the local server with {served}, not {wanted}, and one runs at a time: "
        f"{share}, stop that command, or give 'base_url' for another server",
        options=("gguf", "base_url"),
    )


def _not_shared(serving: bool) -> LocalServerError:
    way = "then run sot serve again" if serving else "or give 'base_url' for another server"
    return LocalServerError(
        f"the local server is held by {unrecorded_holder()}, which does not share it: wait for it to end "
        f"(or stop it), {way}",
        options=("base_url",),
    )


def _serving_elsewhere(holder: Holder) -> LocalServerError:
    at = f" at {holder.url}" if holder.url and holder.state == RUNNING else ""
    return LocalServerError(
        f"{holder.who} already runs the local server{at}, and sot ask, batch and proxy use it while it runs: "
        "stop that command first, or run sot serve again once it has ended"
    )


@dataclass
class _Claim:
    lock: FileLock | None = None  # ours: start the server
    holder: Holder | None = None  # theirs: use it


async def _claim(chosen: Path | None, *, serving: bool = False, quiet: bool = False) -> _Claim:
    """Take the lock (to run the server), or the running server of whoever holds it (not when `serving`).

    Waits only while the holder starts or stops its server; refuses at once what cannot be shared.
    """
    lock = server_lock()
    said = quiet
    unrecorded_since: float | None = None
    unhealthy_since: float | None = None
    while True:
        try:
            lock.acquire(timeout=0)
            # Whatever record is there was left by a holder that died without withdrawing it.
            return _Claim(lock=lock)
        except Timeout:
            pass
        holder = read_holder()
        if holder is None or not alive(holder.pid):
            # Taken a moment ago and not yet recorded, released in a moment, or held by a non-sharer.
            if unrecorded_since is None:
                unrecorded_since = time.monotonic()
            elif time.monotonic() - unrecorded_since > RECORD_GRACE_S:
                raise _not_shared(serving)
        else:
            unrecorded_since = None
            if serving and holder.state in (STARTING, RUNNING):
                raise _serving_elsewhere(holder)
            if holder.state in (STARTING, RUNNING) and holder.serves(chosen) is False:
                raise _mismatch(holder, chosen)
            if holder.state == RUNNING and holder.url:
                if await is_healthy(holder.url):
                    logger.debug("using the local server of %s", holder.who)
                    return _Claim(holder=holder)
                if unhealthy_since is None:
                    unhealthy_since = time.monotonic()
                elif time.monotonic() - unhealthy_since > UNHEALTHY_PATIENCE_S:
                    raise LocalServerError(
                        f"the local server of {holder.who} is not answering its health check: "
                        "stop that command, or give 'base_url' for another server",
                        options=("base_url",),
                    )
            elif holder.state == STARTING and not said:
                say(f"waiting for {holder.who} to start the local server")
                said = True
        await anyio.sleep(POLL_S)


class _Ownership:
    """The lock held and the server run by this process, advertised for the others."""

    def __init__(self, lock: FileLock, chosen: Path | None) -> None:
        self.lock = lock
        self.chosen = chosen
        self.server: ManagedServer | None = None
        self.settings: ServerSettings | None = None
        self.command = this_command()
        self._stopped = False

    def _record(self, state: str) -> None:
        served = str(self.settings.gguf.resolve()) if self.settings else (str(self.chosen) if self.chosen else None)
        url = self.server.url if self.server is not None and state == RUNNING else None
        holder = Holder(os.getpid(), self.command, state, url, served, self.chosen is None)
        write_holder(holder)

    async def start(self, config: LocalConfig, port: int | None = None) -> ManagedServer:
        try:
            self._record(STARTING)
            self.settings = await anyio.to_thread.run_sync(config.settings)
            self._record(STARTING)
            server = llama_server(self.settings, cache_dir() / "llama-server.log")
            await server.start(port=port)  # stops its process itself when it fails
            self.server = server
            self._record(RUNNING)
        except BaseException:
            await self.stop()
            raise
        return server

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        with anyio.CancelScope(shield=True):
            try:
                if self.server is not None:
                    # Users see it going and wait for the lock rather than reach a server that is stopping.
                    self._record(STOPPING)
                    await self.server.stop()
            finally:
                # Withdrawn before the lock is given back: a record is only ever its holder's.
                withdraw()
                self.lock.release()


def _backend(url: str) -> OpenAICompatBackend:
    return OpenAICompatBackend(url, constants.LOCAL_MODEL_NAME, dialect="llama.cpp", name="llama.cpp")


BUNDLED_MODEL_PROFILE = "small"  # backends/small_model/


class LocalChat:
    """The backend of a ``LocalBackend``: its current server's, moving to another when a shared one goes."""

    name = "llama.cpp"

    def __init__(self, local: LocalBackend, current: OpenAICompatBackend) -> None:
        self._local = local
        self.current = current
        self.model = current.model

    def __repr__(self) -> str:
        return f"LocalChat(url={self.current.base_url!r})"

    @property
    def base_url(self) -> str:
        return self.current.base_url

    async def live_url(self) -> str:
        """The URL of a server that is there now (moving first if the shared one was withdrawn)."""
        return (await self._local.current()).base_url

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        backend = await self._local.current()
        produced = False
        try:
            async with aclosing(backend.stream_chat(request)) as chunks:
                async for chunk in chunks:
                    produced = True
                    yield chunk
            return
        except (BackendConnectionError, ProtocolError):
            if not await self._local.moved(backend) or produced:
                # A cut stream is retried by the caller's one retry loop, on the server moved to.
                raise
        async with aclosing((await self._local.current()).stream_chat(request)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def served_models(self, deadline_s: float) -> list[str]:
        return await (await self._local.current()).served_models(deadline_s)

    @property
    def in_flight(self) -> int:
        return self.current.in_flight

    async def load(self) -> LoadReading | None:
        """The local server's load (its /slots)."""
        return await (await self._local.current()).load()

    async def aclose(self) -> None:
        await self._local.aclose()


class LocalBackend:
    """A started (or shared) local server and the backend that talks to it."""

    def __init__(self, config: LocalConfig, backend: OpenAICompatBackend, ownership: _Ownership | None) -> None:
        self.config = config
        self._ownership = ownership
        self._holder: Holder | None = None  # the other command whose server we use
        self._retired: list[OpenAICompatBackend] = []
        self._moving = anyio.Lock()
        self.backend = LocalChat(self, backend)
        # The model profile (sot/profiles.py) for what this backend serves: set by start().
        self.profile: str | None = None

    @property
    def server(self) -> ManagedServer | None:
        """The server this process runs (None while it uses another command's)."""
        return self._ownership.server if self._ownership is not None else None

    @property
    def url(self) -> str | None:
        """The address of the server answers come from now (this process's, or the one it shares)."""
        if self.server is not None:
            return self.server.url
        return self._holder.url if self._holder is not None else None

    @classmethod
    async def start(cls, config: LocalConfig | None = None, **overrides: Any) -> LocalBackend:
        config = config or LocalConfig(**overrides)
        backend, ownership, holder = await _open(config)
        local = cls(config, backend, ownership)
        local._holder = holder
        # The bundled 135M model gets its own profile; a GGUF of the user's own (--gguf or $SOT_GGUF) may
        # be any size.
        local.profile = BUNDLED_MODEL_PROFILE if config.chosen_model() is None else None
        return local

    def _withdrawn(self) -> bool:
        """Whether the server we use is no longer advertised by its holder (a file read, no request)."""
        holder = self._holder
        if holder is None:
            return False
        now = read_holder()
        return now is None or (now.pid, now.url, now.state) != (holder.pid, holder.url, RUNNING) or not alive(now.pid)

    async def current(self) -> OpenAICompatBackend:
        backend = self.backend.current
        if self._withdrawn():
            await self.moved(backend)
        return self.backend.current

    async def moved(self, failed: OpenAICompatBackend) -> bool:
        """After `failed` failed to connect: move to another server if the shared one is gone; whether we did."""
        async with self._moving:
            if self.backend.current is not failed:
                return True  # another call has moved already
            holder = self._holder
            if holder is None or (not self._withdrawn() and holder.url and await is_healthy(holder.url)):
                return False  # our own server, or theirs is still there: the failure is the call's
            say(f"the local server of {holder.who} has stopped; going on without it")
            backend, ownership, now = await _open(self.config, quiet=True)
            self._retired.append(self.backend.current)  # calls may still be reading from it
            self.backend.current, self._ownership, self._holder = backend, ownership, now
            return True

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            retired, self._retired = [*self._retired, self.backend.current], []
            for backend in retired:
                await backend.aclose()
            ownership, self._ownership = self._ownership, None
            if ownership is not None:
                await ownership.stop()


async def _open(
    config: LocalConfig, *, quiet: bool = False
) -> tuple[OpenAICompatBackend, _Ownership | None, Holder | None]:
    chosen = config.chosen_model()
    claim = await _claim(chosen, quiet=quiet)
    if claim.holder is not None:
        assert claim.holder.url is not None
        return _backend(claim.holder.url), None, claim.holder
    assert claim.lock is not None
    ownership = _Ownership(claim.lock, chosen)
    server = await ownership.start(config)
    return _backend(server.url), ownership, None


async def serve_forever(config: LocalConfig, port: int | None = None) -> None:
    """``sot serve``: run the local server in the foreground (on `port`, else a free one) for every command."""
    chosen = config.chosen_model()
    claim = await _claim(chosen, serving=True)
    assert claim.lock is not None
    ownership = _Ownership(claim.lock, chosen)
    try:
        server = await ownership.start(config, port)
        settings = ownership.settings
        assert settings is not None
        say(f"serving {settings.gguf.name} at {server.url} with {settings.slots} slots; Ctrl-C stops it")
        await anyio.sleep_forever()
    finally:
        await ownership.stop()
