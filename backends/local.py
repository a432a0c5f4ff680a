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

import contextlib
import json
import logging
import os
import re
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from filelock import FileLock, Timeout

from sot import constants
from sot.errors import BackendConnectionError, LocalServerError, ProtocolError

from ._probe import healthy
from .base import ChatChunk, ChatRequest
from .llama_server import ServerSettings, find_server, llama_server
from .model_files import Q4_NAME, Q8_NAME, cache_dir, resolve_model, say
from .openai_compat import OpenAICompatBackend
from .process import ManagedServer

logger = logging.getLogger("sot.local")

LOCK_NAME = "local-server.lock"
STATE_NAME = "local-server.json"
# The holder writes its record right after taking the lock; a lock held this long with no record is
# held by something that does not advertise (an older sot, another program), so it cannot be shared.
RECORD_GRACE_S = 5.0
# A holder whose server stops answering its health check for this long is reported, not waited on.
UNHEALTHY_PATIENCE_S = 30.0
POLL_S = 0.1

STARTING, RUNNING, STOPPING = "starting", "running", "stopping"


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


# Who holds the server ----------------------------------------------------------------------------


def _safe_name(text: str) -> str:
    return re.sub(r"[^\w.+-]", "", text)[:40] or "?"


def _clean_command(text: str) -> str:
    # A record is a file anyone may write: what it says reaches a terminal, so only plain characters.
    return re.sub(r"[^\w .+-]", "", text)[:60].strip() or "?"


def _with_subcommand(name: str, rest: Sequence[str]) -> str:
    name = _safe_name(name)
    if name == "sot" and rest and re.fullmatch(r"[a-z][a-z-]{0,20}", rest[0]):
        return f"sot {rest[0]}"
    return name


def describe_command(argv: Sequence[str]) -> str:
    """A process's command, short and free of its arguments ("sot proxy", "bench.py"): arguments may hold keys."""
    args = list(argv)
    if args and args[0] == "-c":  # sys.argv of `python -c ...`
        return "python -c"
    if args and re.fullmatch(r"python[\d.]*", Path(args[0]).name):
        args = args[1:]
        while args and args[0].startswith("-"):
            flag = args.pop(0)
            if flag == "-m" and args:
                return _with_subcommand(args[0], args[1:])
            if flag == "-c":
                return "python -c"
            if flag in ("-W", "-X") and args:
                args.pop(0)
    if not args or not args[0]:
        return "python"
    path = Path(args[0])
    # `python -m sot ask` runs sot/__main__.py: name the package.
    name = path.parent.name if path.name == "__main__.py" else path.name
    return _with_subcommand(name, args[1:])


def this_command() -> str:
    return describe_command(sys.argv)


@dataclass(frozen=True)
class Holder:
    """The record of the command that holds the lock, as it advertises itself."""

    pid: int
    command: str
    state: str  # starting, running (url set), stopping
    url: str | None = None
    model: str | None = None  # the served GGUF's resolved path (for a --gguf known from the start)
    bundled: bool = False
    slots: int | None = None

    @property
    def who(self) -> str:
        return f"{self.command} (pid {self.pid})"

    def serves(self, chosen: Path | None) -> bool | None:
        """Whether it serves the model asked for (`chosen`, None: the bundled one); None while not known yet."""
        if chosen is None:
            if self.bundled:
                return True
            return None if self.model is None else Path(self.model).name in (Q4_NAME, Q8_NAME)
        if self.model is None:
            # The bundled model's file is only known once it is fetched; an old record names no path at all.
            return None if self.state == STARTING else True
        return Path(self.model) == chosen

    def model_name(self) -> str:
        return Path(self.model).name if self.model else "the bundled model"


def _server_lock() -> FileLock:
    # Not bound to a thread: it is taken and released on whichever thread runs the event loop, and a
    # per-thread lock (filelock's default) would ignore a release from another thread and stay held.
    return FileLock(str(cache_dir() / LOCK_NAME), thread_local=False)


def _state_path() -> Path:
    return cache_dir() / STATE_NAME


def read_holder() -> Holder | None:
    """The advertised record, if there is a readable one (it may be stale: check the lock and the pid)."""
    try:
        state = json.loads(_state_path().read_text())
        pid = int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(state, dict):
        return None

    def text(key: str) -> str | None:
        value = state.get(key)
        return value if isinstance(value, str) else None

    slots = state.get("slots")
    return Holder(
        pid=pid,
        # Records written before sharing came from `sot serve` only, with a URL and no state.
        command=_clean_command(text("command") or "sot serve"),
        state=text("state") or RUNNING,
        url=text("url"),
        model=text("model"),
        bundled=state.get("bundled") is True,
        slots=slots if isinstance(slots, int) else None,
    )


def _write_holder(holder: Holder) -> None:
    # Readers never take the lock: replace the file whole, so they never see half of one.
    path = _state_path()
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(json.dumps(asdict(holder)))
    partial.replace(path)


def _withdraw() -> None:
    _state_path().unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive, we just may not signal it
    return True


def _lock_holder_pid(path: Path) -> int | None:
    """The pid holding a flock on `path`, from /proc/locks (Linux); None where that cannot be told."""
    try:
        inode = str(path.stat().st_ino)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 9218 fe:00:16039944 0 EOF"; "1: -> FLOCK ..." lines are waiters.
        if len(fields) >= 6 and fields[1] != "->" and fields[5].rsplit(":", 1)[-1] == inode:
            with contextlib.suppress(ValueError):
                pid = int(fields[4])
                if pid > 0:
                    return pid
    return None


def _unrecorded_holder() -> str:
    pid = _lock_holder_pid(cache_dir() / LOCK_NAME)
    if pid is None:
        return "another process"
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return f"pid {pid}"
    return f"{describe_command([a for a in argv if a] or ['?'])} (pid {pid})"


async def advertised_url() -> str | None:
    """The URL of the running, healthy local server another command shares, if any (its health check has a deadline)."""
    holder = read_holder()
    if holder is None or holder.state != RUNNING or not holder.url or not _alive(holder.pid):
        return None
    return holder.url if await _healthy(holder.url) else None


async def _healthy(url: str) -> bool:
    return await healthy(url.removesuffix("/v1") + "/health")


# Claiming: use the running server, or take the lock and run one -----------------------------------


def _mismatch(holder: Holder, chosen: Path | None) -> LocalServerError:
    wanted = chosen.name if chosen is not None else "the bundled model"
    served = holder.model_name()
    share = "leave out --gguf to use it" if holder.serves(None) else f"give the same --gguf ({served}) to use it"
    return LocalServerError(
        f"{holder.who} runs the local server with {served}, not {wanted}, and one runs at a time: "
        f"{share}, stop that command, or give --base-url for another server"
    )


def _not_shared(serving: bool) -> LocalServerError:
    way = "then run sot serve again" if serving else "or give --base-url for another server"
    return LocalServerError(
        f"the local server is held by {_unrecorded_holder()}, which does not share it: wait for it to end "
        f"(or stop it), {way}"
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
    lock = _server_lock()
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
        if holder is None or not _alive(holder.pid):
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
                if await _healthy(holder.url):
                    logger.debug("using the local server of %s", holder.who)
                    return _Claim(holder=holder)
                if unhealthy_since is None:
                    unhealthy_since = time.monotonic()
                elif time.monotonic() - unhealthy_since > UNHEALTHY_PATIENCE_S:
                    raise LocalServerError(
                        f"the local server of {holder.who} is not answering its health check: "
                        "stop that command, or give --base-url for another server"
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
        slots = self.settings.slots if self.settings else None
        holder = Holder(os.getpid(), self.command, state, url, served, self.chosen is None, slots)
        _write_holder(holder)

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
                _withdraw()
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
        return now is None or (now.pid, now.url, now.state) != (holder.pid, holder.url, RUNNING) or not _alive(now.pid)

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
            if holder is None or (not self._withdrawn() and holder.url and await _healthy(holder.url)):
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
    claim = await _claim(config.chosen_model(), serving=True)
    assert claim.lock is not None
    ownership = _Ownership(claim.lock, config.chosen_model())
    try:
        server = await ownership.start(config, port)
        settings = ownership.settings
        assert settings is not None
        say(f"serving {settings.gguf.name} at {server.url} with {settings.slots} slots; Ctrl-C stops it")
        await anyio.sleep_forever()
    finally:
        await ownership.stop()
