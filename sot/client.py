"""The Python API: a reusable ``Client`` (one connection pool across calls), ``ask`` and ``stream``."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Unpack

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from . import constants
from ._conversation import split_conversation
from .backends.base import Backend
from .backends.openai_compat import Dialect, OpenAICompatBackend, dialect_named
from .errors import ConfigurationError, SotError
from .events import Event
from .options import OptionOverrides, Options
from .orchestrator import Orchestrator
from .profiles import GENERIC, profile_named
from .result import Answer
from .router import chosen_router, make_router
from .router.load import Grants
from .templates import Message, Prompts

if TYPE_CHECKING:  # the local backend is imported only when used (llama.cpp, the model cache)
    from .backends.local import LocalBackend


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


async def discover_model(backend: OpenAICompatBackend, deadline_s: float) -> str:
    """The model a server serves, when it lists exactly one (llama.cpp, most vLLM setups)."""
    models = await backend.served_models(min(deadline_s, constants.DISCOVERY_TIMEOUT_S))
    if len(models) != 1:
        # A few of the names, so the fix can be copied; a hosted API may list hundreds.
        shown = ", ".join(backend.redact(name) for name in models[:3]) + (", …" if len(models) > 3 else "")
        listed = f": {shown}" if models else ""
        raise ConfigurationError(
            f"no model given ('model', or ${constants.ENV_MODEL}) and the server lists {len(models)} models{listed}; "
            "name one as 'model'",
            options=("model",),
        )
    return models[0]


class ClientArguments(OptionOverrides, total=False):
    """``Client``'s keyword arguments, for the one-shot ``sot.ask`` and ``sot.stream``."""

    base_url: str | Sequence[str] | None
    model: str | None
    api_key: str | None
    backend: Backend | None
    dialect: str | None
    gguf: str | None
    llama_server: str | None
    request_limit: int | None
    limiter: anyio.CapacityLimiter | None


# A chat conversation: {"role": ..., "content": ...} mappings (or Message), the user's question last.
Messages = Sequence[Mapping[str, Any] | Message]


class AnswerStream:
    """The events of one answer as it forms, as an async context manager (like httpx's ``stream()``).

    ::

        async with client.stream("How do I learn Rust?") as answer_events:
            async for event in answer_events:
                if isinstance(event, sot.events.AnswerText):
                    print(event.text, end="")
        print(answer_events.answer.timings.total_s)

    The block can be left at any event (``break``, ``return``, an exception): the calls still in flight
    are cancelled and their connections closed. A failed answer raises its ``SotError`` from the loop.
    After a complete answer, ``answer`` holds it.
    """

    def __init__(
        self, start: Callable[[], Awaitable[Orchestrator]], question: str, history: Sequence[Message] = ()
    ) -> None:
        self._start = start
        self._question = question
        self._history = tuple(history)
        self._error: SotError | None = None
        self.answer: Answer | None = None

    async def __aenter__(self) -> AnswerStream:
        orchestrator = await self._start()
        send, self._receive = anyio.create_memory_object_stream[Event](math.inf)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._produce, orchestrator, send)
        return self

    async def _produce(self, orchestrator: Orchestrator, send: MemoryObjectSendStream[Event]) -> None:
        async with send:
            try:
                self.answer = await orchestrator.run(self._question, send.send_nowait, self._history)
            except SotError as exc:
                self._error = exc

    @property
    def buffered(self) -> int:
        """Events already produced and not yet read: a consumer that writes to a socket can gather
        them into one write while it is behind."""
        return self._receive.statistics().current_buffer_used if hasattr(self, "_receive") else 0

    def __aiter__(self) -> AnswerStream:
        if not hasattr(self, "_group"):
            raise TypeError("use `async with client.stream(question) as events:` and iterate over `events`")
        return self

    async def __anext__(self) -> Event:
        try:
            try:
                # Events already produced are handed over without a trip through the event loop: a
                # token usually comes as two events, and a busy proxy relays thousands a second.
                return self._receive.receive_nowait()
            except anyio.WouldBlock:
                return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            if self._error is not None:
                raise self._error from None
            raise StopAsyncIteration from None

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        # Leaving early cancels the answer's calls; after a complete answer there is nothing left to cancel.
        # The producer raises nothing (it keeps its SotError for the loop), so the block's own exception,
        # if any, is the only one: let it through as it is, not wrapped in an ExceptionGroup.
        # The receiving end closes only after the producer's tasks are gone: a cancelled task still runs
        # to its next checkpoint, and an event it emits on the way must not meet a closed stream.
        self._group.cancel_scope.cancel()
        try:
            await self._group.__aexit__(None, None, None)
        finally:
            self._receive.close()
        return None


class Client:
    """Answers questions with Skeleton-of-Thought against one backend.

    With no ``base_url`` (argument or ``SOT_BASE_URL``) and no ``backend``, the embedded local
    backend (llama.cpp with the bundled model) is started on first use and stopped on close.
    """

    def __init__(
        self,
        base_url: str | Sequence[str] | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        backend: Backend | None = None,
        dialect: str | None = None,
        gguf: str | None = None,
        llama_server: str | None = None,
        request_limit: int | None = None,
        limiter: anyio.CapacityLimiter | None = None,
        api_key_from_env: bool = True,
        **options: Unpack[OptionOverrides],
    ) -> None:
        self.options = Options().updated(**options)
        self._prompts = Prompts(self.options.prompts_dir)
        self._backend = backend
        self._owned: list[Any] = []
        urls = [base_url] if isinstance(base_url, str) else list(base_url or [])
        env_urls = (_env(constants.ENV_BASE_URL) or "").replace(",", " ").split()
        self._base_urls = [u for u in urls if u] or env_urls
        self._model = model or _env(constants.ENV_MODEL)
        # A proxy forwarding its clients' keys turns the fallback off: a keyless client must not spend the operator's.
        from_env = _env(constants.ENV_API_KEY) or _env(constants.ENV_OPENAI_API_KEY) if api_key_from_env else None
        self._api_key = api_key or from_env
        self._dialect: Dialect = dialect_named(dialect or constants.DEFAULT_DIALECT)
        self._gguf = gguf
        self._llama_server = llama_server
        self._lock = anyio.Lock()
        # One bound on requests in flight across every answer of this client (batch runs), or across
        # several clients that share `limiter` (the proxy).
        self._limiter = limiter or (anyio.CapacityLimiter(request_limit) if request_limit else None)
        self._local: LocalBackend | None = None
        self._grants = Grants()  # load-aware fan-outs given to this client's answers still running
        if self.options.mode == "auto" and chosen_router(self.options.router) == "learned":
            from .router.learned import preload as preload_router

            preload_router()  # loads on a thread while the backend connects or starts

    def __repr__(self) -> str:
        return f"Client(backend={self._backend!r}, options={self.options!r})"

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def uses_local_backend(self) -> bool:
        """Whether answers come from the embedded local server (no base URL and no backend given)."""
        return self._backend is None and not self._base_urls

    @property
    def base_urls(self) -> list[str]:
        """The endpoints answers come from: the given base URLs, or the local server's once it started."""
        local_url = self._local.url if self._local is not None else None
        return list(self._base_urls) or ([local_url] if local_url else [])

    @property
    def api_key(self) -> str | None:
        """The API key sent upstream, if any (never logged or shown)."""
        return self._api_key

    async def backend(self) -> Backend:
        async with self._lock:
            if self._backend is None:
                self._backend = await self._make_backend()
            return self._backend

    async def _make_backend(self) -> Backend:
        if self._base_urls:
            backends = [
                OpenAICompatBackend(url, self._model or "", api_key=self._api_key, dialect=self._dialect)
                for url in self._base_urls
            ]
            if not self._model:
                try:
                    model = await discover_model(backends[0], self.options.timeout)
                except BaseException:
                    for made in backends:
                        await made.aclose()
                    raise
                for made in backends:
                    made.model = model
            if len(backends) == 1:
                backend: Backend = backends[0]
            else:
                from .backends.endpoints import EndpointPool

                # The fan-out splits evenly: a question's points stay on one server (its prefix cache)
                # until that server's share is full, then overflow to the others.
                share = -(-self.options.max_parallel // len(backends))
                backend = EndpointPool(backends, per_endpoint_limit=share)
            self._owned.append(backend)
        else:
            from .backends.local import LocalBackend, LocalConfig

            config = LocalConfig(gguf=self._gguf, binary=self._llama_server, slots=self.options.max_parallel)
            local = await LocalBackend.start(config)
            self._local = local
            self._owned.append(local)  # closes its backend, then stops its server
            backend = local.backend
        return backend

    async def router(self) -> Any:
        """The router these options select; only the LLM router needs a backend."""
        if self.options.router != "llm":
            return make_router(self.options, None, self._prompts)
        return make_router(self.options, await self.backend(), self._prompts)

    async def _orchestrator(self, overrides: OptionOverrides) -> Orchestrator:
        backend = await self.backend()  # first: starting the local backend may adjust options
        options = self.options.updated(**overrides)
        prompts = self._prompts if options.prompts_dir == self.options.prompts_dir else Prompts(options.prompts_dir)
        router = make_router(options, backend, prompts) if options.mode == "auto" else None
        recommended = self._local.profile if self._local is not None else None  # the backend's, where it names one
        profile = profile_named(options.profile or recommended or GENERIC)
        return Orchestrator(
            backend, options, prompts, router, limiter=self._limiter, profile=profile, grants=self._grants
        )

    async def ask(
        self, question: str | None = None, *, messages: Messages | None = None, **overrides: Unpack[OptionOverrides]
    ) -> Answer:
        """Answer `question`, or the last user turn of `messages` with the turns before it as context.

        ``messages`` is a chat conversation (``[{"role": "system", "content": ...}, {"role": "user", ...},
        {"role": "assistant", ...}, {"role": "user", ...}]``): the system prompt and earlier turns are sent
        before every skeleton, expansion and sequential prompt. Keyword arguments override this
        client's options for this call.
        """
        text, history = split_conversation(question, messages)
        orchestrator = await self._orchestrator(overrides)
        return await orchestrator.run(text, history=history)

    def stream(
        self, question: str | None = None, *, messages: Messages | None = None, **overrides: Unpack[OptionOverrides]
    ) -> AnswerStream:
        """The answer's events as it forms (the last is ``AnswerDone``): ``async with client.stream(q) as events``.

        ``messages`` as in ``ask``. Keyword arguments override this client's options for this call.
        See ``AnswerStream``.
        """
        text, history = split_conversation(question, messages)
        return AnswerStream(lambda: self._orchestrator(overrides), text, history)

    async def aclose(self) -> None:
        owned, self._owned = self._owned, []
        for resource in owned:
            await resource.aclose()


async def ask(question: str, **kwargs: Unpack[ClientArguments]) -> Answer:
    """One answer with a throwaway ``Client``; see ``Client`` for the keyword arguments."""
    async with Client(**kwargs) as client:
        return await client.ask(question)


@asynccontextmanager
async def stream(question: str, **kwargs: Unpack[ClientArguments]) -> AsyncIterator[AnswerStream]:
    """The events of one answer with a throwaway ``Client``: ``async with sot.stream(q, ...) as events``."""
    async with Client(**kwargs) as client, client.stream(question) as answer_events:
        yield answer_events
