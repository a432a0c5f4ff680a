"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, SGLang, hosted APIs).

Plain httpx on a client we own (one pool for every call of a backend): the request body is built by
``build_body``, the SSE body is read by ``backends/_sse.py`` (line endings, size caps, bounded
decompression) and every chunk parsed once by ``backends/_chunks.py``. sot's retry loop in
``sot.calls`` is the only one. Every failure becomes a ``sot.errors`` exception in one place,
``backends/_errors.py``.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import anyio
import httpx

from sot import constants
from sot.errors import (
    BackendError,
    BadRequestError,
    ConfigurationError,
    ContextLengthError,
)

from . import _sse
from ._errors import (
    HttpStatus,
    NotAnApi,
    StreamError,
    looks_like_html,
    map_error,
    names_api_version,
    parse_retry_after,
)
from ._negotiate import Negotiator
from ._pool import upstream_client
from ._reasoning import ChunkFilter
from ._redact import redact
from ._response import completion, error_status, events
from .base import ChatChunk, ChatRequest

if TYPE_CHECKING:
    from ._load import LoadMonitor, LoadReading

Dialect = Literal["openai", "llama.cpp", "vllm"]
__all__ = ["Dialect", "OpenAICompatBackend", "build_body", "parse_retry_after", "redact"]


def dialect_named(name: str) -> Dialect:
    """`name` as a ``Dialect``, or a ConfigurationError naming the choices."""
    allowed = get_args(Dialect)
    if name not in allowed:
        raise ConfigurationError(f"'dialect' must be one of {', '.join(allowed)}, not {name!r}", options=("dialect",))
    return cast(Dialect, name)


def _checked_url(base_url: str) -> httpx.URL:
    """The base URL, refused at once where it cannot be one (a bare host:port is the usual slip)."""
    fix = "'base_url' must be an http:// or https:// address, e.g. http://127.0.0.1:8080/v1"
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL:
        raise ConfigurationError(fix, options=("base_url",)) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(fix, options=("base_url",))
    return url


# Each server's documented guard against loops: llama.cpp's DRY sampler ("don't repeat yourself": it
# penalises a token that would extend a sequence already in the text, at its documented base and length),
# and vLLM's repetition penalty. A server that refuses a field has it negotiated away (backends/_negotiate.py).
_REPETITION_GUARD: dict[str, dict[str, Any]] = {
    "llama.cpp": {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2},
    "vllm": {"repetition_penalty": 1.1},
}


def build_body(
    request: ChatRequest,
    model: str,
    dialect: Dialect = constants.DEFAULT_DIALECT,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of one streamed chat completion request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.seed is not None:
        body["seed"] = request.seed
    if request.stop:
        body["stop"] = list(request.stop)
    if request.frequency_penalty is not None:
        body["frequency_penalty"] = request.frequency_penalty
    if request.guard_repetition:
        body |= _REPETITION_GUARD.get(dialect, {})
    constraint = request.constraint
    if constraint is not None and dialect == "llama.cpp" and constraint.gbnf:
        body["grammar"] = constraint.gbnf
    elif constraint is not None and dialect == "vllm" and constraint.regex:
        # vLLM >= 0.12 reads structured outputs here; the old guided_* fields are gone.
        body["structured_outputs"] = {"regex": constraint.regex}
    return {**body, **(extra or {})}


class OpenAICompatBackend:
    """Streams chat completions from one OpenAI-compatible endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dialect: Dialect = constants.DEFAULT_DIALECT,
        name: str | None = None,
        max_connections: int = constants.POOL_MAX_CONNECTIONS,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.dialect: Dialect = dialect
        self.name = name or ("openai-compatible" if dialect == "openai" else dialect)
        self._extra_body = dict(extra_body or {})
        url = _checked_url(base_url)
        # User info in the URL becomes Basic auth: the URL we keep (and httpx logs) never holds it.
        auth = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
        self._secrets: tuple[str | None, ...] = (api_key, url.username or None, url.password or None)
        self._url = url.copy_with(username=None, password=None)
        self.base_url = str(self._url).rstrip("/")
        self._base_path = url.path
        self.negotiator = Negotiator(self.base_url, model)  # what this server accepts, learned per process
        headers = {"Accept-Encoding": "gzip, deflate", "Accept": "text/event-stream, application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # The connect timeout only; reads are bounded by the stall deadline and sot.calls' total deadline.
        # A plain-HTTP endpoint never uses TLS (redirects are not followed): skip loading the CA bundle
        # (tens of ms at start-up) with a context that would verify, and so refuse, anything all the same.
        # Over https one context serves the streams and the load client: loading the CA bundle takes tens of ms.
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if url.scheme == "http" else httpx.create_ssl_context()
        self._open_calls = 0
        self._auth, self._verify = auth, verify  # for the load client, made on the first load reading
        self._monitor: LoadMonitor | None = None
        self._http = upstream_client(
            max_connections,
            verify,
            timeout=httpx.Timeout(None, connect=constants.CONNECT_TIMEOUT_S),
            headers=headers,
            auth=auth,
            follow_redirects=False,
        )

    def redact(self, text: str) -> str:
        """Server text as one line that is safe to show: no URL, and nothing of this backend's key or user info."""
        return redact(text, *self._secrets)

    def _map_error(self, exc: BaseException) -> BackendError:
        return map_error(exc, self._secrets, self._base_path, self._url)

    def __repr__(self) -> str:
        return f"OpenAICompatBackend(name={self.name!r}, model={self.model!r}, dialect={self.dialect!r})"

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        """The whole JSON body of this request, before negotiation."""
        return build_body(request, self.model, self.dialect, {**self._reasoning_body(request), **self._extra_body})

    def _reasoning_body(self, request: ChatRequest) -> dict[str, Any]:
        """The documented knobs that turn thinking down; whatever a server refuses is negotiated away."""
        if request.reasoning == "low":
            return {"reasoning_effort": "low"}
        if request.reasoning != "off":
            return {}
        off: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}  # vLLM, SGLang, llama.cpp
        if self.dialect == "openai":
            # OpenAI, Gemini and Ollama's /v1 read "none"; models that take less are stepped down to what they take.
            off["reasoning_effort"] = "none"
        return off

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The non-standard fields this request sends (public for tests and dry runs)."""
        standard = build_body(request, self.model, "openai")
        return {k: v for k, v in self.build_body(request).items() if k not in standard or standard[k] != v}

    @property
    def in_flight(self) -> int:
        """sot's calls open to this endpoint now, every answer's together."""
        return self._open_calls

    async def load(self) -> LoadReading | None:
        """How busy the server is, where it publishes it (vLLM's /metrics, llama.cpp's /slots or /metrics):
        read at most once a second however many answers ask, on a small client of its own so the reading
        never queues behind this endpoint's streams; None where it publishes nothing."""
        if self._monitor is None:
            from ._load import LOAD_READ_TIMEOUT_S, LoadMonitor  # only load-aware answers read load: kept off start-up

            http = _load_client(self._http.headers.get("Authorization"), self._auth, self._verify, LOAD_READ_TIMEOUT_S)
            self._monitor = LoadMonitor(http, self.base_url)
        return await self._monitor.read()

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        self._open_calls += 1  # sot's calls open to this endpoint (its load when the server says none)
        try:
            stall = request.stall_timeout or constants.DEFAULT_STALL_TIMEOUT_S
            original = self.build_body(request)
            prepared = self.negotiator.prepare(original)
            if prepared.adaptations:
                yield ChatChunk(adaptations=prepared.adaptations)
            body = json.dumps(prepared.body, ensure_ascii=False).encode()
            try:
                outgoing = self._http.build_request(
                    "POST",
                    self.base_url + "/chat/completions",
                    content=body,
                    headers={"Content-Type": "application/json"},
                    # Silence on the socket is a stall; a keep-alive-only trickle is caught by _sse.events.
                    timeout=httpx.Timeout(None, connect=constants.CONNECT_TIMEOUT_S, read=stall),
                )
                try:
                    with anyio.fail_after(stall):
                        response = await self._http.send(outgoing, stream=True)
                except TimeoutError:
                    raise _sse.Stalled(stall) from None
                try:
                    async for chunk in self._read(response, stall, ChunkFilter(prepared.client_stop)):
                        yield chunk
                finally:
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
            except HttpStatus as exc:
                error = self._map_error(exc)
                # A refused field is adapted; a real 400 (context too long, a bad model) never is.
                if (
                    isinstance(error, BadRequestError)
                    and not isinstance(error, ContextLengthError)
                    and exc.status in (400, 422)
                ):
                    try:
                        refusal = json.loads(exc.body)
                    except ValueError:
                        refusal = None
                    adapted = self.negotiator.learn(exc.status, refusal, original, prepared.body)
                    error.adaptation = tuple(adapted)  # non-empty: sot.calls sends it again at once, adapted
                raise error from None
            except httpx.ReadTimeout:
                raise self._map_error(_sse.Stalled(stall)) from None
            except (httpx.HTTPError, ValueError, StreamError, _sse.Stalled, NotAnApi) as exc:
                raise self._map_error(exc) from None
        finally:
            self._open_calls -= 1

    async def _read(self, response: httpx.Response, stall: float, answer_only: ChunkFilter) -> AsyncIterator[ChatChunk]:
        encoding = response.headers.get("content-encoding", "")
        if response.status_code >= 300:
            raise await error_status(response, encoding, stall)
        content_type = response.headers.get("content-type", "").lower()
        bounded = _sse.BoundedBody(response.aiter_raw(), encoding, constants.MAX_RESPONSE_BYTES)
        if "html" in content_type:
            raise NotAnApi()
        if content_type.startswith("application/json"):
            # A server that ignores stream=true answers with one completion object.
            chunk = answer_only(await completion(response, bounded, stall))
            if chunk is not None:
                yield chunk
            return
        async for chunk in events(response, bounded, stall, answer_only):
            yield chunk

    async def served_models(self, deadline_s: float) -> list[str]:
        """The ids ``GET /models`` lists, all within `deadline_s` (a trickling reply cannot hold us).

        Where the address or the key is wrong (nothing listening, a page without the API, 401), the error is
        the one a chat call would meet: the same line and exit code whether or not a model was given.
        """
        from ._probe import ProbeFailed, get_reply, model_ids  # only where no model was named

        unlisted = f"no model given ('model', or ${constants.ENV_MODEL}) and the server's model list is unavailable"
        try:
            reply = await get_reply(self._http, self.base_url + "/models", deadline_s=deadline_s)
        except ProbeFailed as exc:
            if isinstance(exc.cause, httpx.TransportError):
                raise self._map_error(exc.cause) from None
            raise ConfigurationError(
                f"{unlisted}: {exc}; check 'base_url' and 'timeout'", options=("model", "base_url", "timeout")
            ) from None
        status = reply.status
        html = looks_like_html(reply.body, reply.headers.get("content-type", ""))
        no_api_path = status == 404 and not names_api_version(self._base_path)
        if status in (401, 403) or 300 <= status < 400 or no_api_path or (html and status >= 400):
            raise self._map_error(HttpStatus(status, reply.headers, reply.body))
        if html:
            raise self._map_error(NotAnApi())
        try:
            payload = json.loads(reply.body) if reply.body else None
        except ValueError:
            payload = None
        data = payload.get("data") if isinstance(payload, dict) else None
        if status != 200 or not isinstance(data, list):
            raise ConfigurationError(f"{unlisted} (HTTP {status}): name the model as 'model'", options=("model",))
        return model_ids(data)

    async def aclose(self) -> None:
        try:
            await self._http.aclose()
        finally:
            if self._monitor is not None:
                with anyio.CancelScope(shield=True):
                    await self._monitor.aclose()


def _load_client(
    authorization: str | None, auth: httpx.Auth | None, verify: ssl.SSLContext | bool, timeout_s: float
) -> httpx.AsyncClient:
    headers = {"Authorization": authorization} if authorization else {}
    return httpx.AsyncClient(
        headers=headers,
        auth=auth,
        verify=verify,
        follow_redirects=False,
        limits=httpx.Limits(max_connections=2),
        timeout=httpx.Timeout(timeout_s),
    )
