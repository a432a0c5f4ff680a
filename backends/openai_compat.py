"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, SGLang, hosted APIs).

Plain httpx on a client we own (one pool for every call of a backend): the request body is built by
``build_body``, the SSE body is read by ``backends/_sse.py`` (line endings, size caps, bounded
decompression) and every chunk parsed once by ``backends/_chunks.py``. sot's retry loop in
``sot.calls`` is the only one. ``_map_error`` is the one place where HTTP statuses, httpx, stall and
stream errors become ``sot.errors`` exceptions, each with the fix where there is one, and never a header,
a key or a URL (only the host and port of a server that cannot be reached).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import replace
from typing import Any, Literal, TypeVar

import anyio

from sot import constants
from sot.errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
    ContextLengthError,
    ProtocolError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)

from . import _sse
from ._chunks import ErrorBody, StreamChunk, error_body, parse_chunk, parse_completion
from ._httpx import httpx
from ._negotiate import Negotiator
from ._pool import upstream_client
from ._probe import ProbeFailed, get_reply
from ._reasoning import ChunkFilter
from ._redact import redact
from .base import ChatChunk, ChatRequest

Dialect = Literal["openai", "llama.cpp", "vllm"]
__all__ = ["Dialect", "OpenAICompatBackend", "build_body", "parse_retry_after", "redact"]

_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"})
_CONTEXT_TEXT = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|max_model_len|n_ctx"
    r"|exceeds? the (available )?(context|maximum)",
    re.IGNORECASE,
)
_CONTEXT_FIX = (
    "lower --max-tokens / --point-max-tokens or shorten the question, or give the server a larger context "
    "(llama-server --ctx-size, vLLM --max-model-len)"
)
_NOT_AN_API = "the address answered with a web page (HTML), not an OpenAI-compatible API: check --base-url"
# One line for a base URL without its API path, whichever request met it first (a chat call, or the
# model list asked for when no --model is given): the fix does not depend on the flags.
_ADD_V1 = (
    "HTTP 404: nothing serves an OpenAI-compatible API at this address; such servers serve it under /v1: "
    "add /v1 to the end of --base-url"
)
# A 404 that talks about a model is about the model (DeepSeek's API has no /v1), not the address.
_ABOUT_A_MODEL = re.compile(r"(?<![/\w])models?\b", re.IGNORECASE)  # not the path "/models"
_REQUEST_ID = re.compile(r"[^A-Za-z0-9._:-]")


class _HttpStatus(Exception):
    """A non-2xx reply (internal: ``_map_error`` turns it into sot's error)."""

    def __init__(self, status: int, headers: httpx.Headers, body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.body = body


class _StreamError(Exception):
    """A top-level ``error`` in a 200 stream (internal)."""

    def __init__(self, error: ErrorBody, headers: httpx.Headers) -> None:
        super().__init__(error.message)
        self.error = error
        self.headers = headers


class _NotAnApi(Exception):
    pass


def _seconds(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date).

    Garbage, negative, NaN, infinite and past dates count as absent: the normal backoff applies.
    """
    if not headers:
        return None
    raw_ms = (headers.get("retry-after-ms") or "").strip()
    if raw_ms:
        wait_ms = _seconds(raw_ms)
        if wait_ms is not None:
            return wait_ms / 1000.0
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    wait = _seconds(raw)
    if wait is not None:
        return wait
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    remaining = parsed.timestamp() - time.time() if parsed is not None else -1.0
    return remaining if remaining > 0 else None


def request_id(headers: Mapping[str, str] | None) -> str | None:
    """The server's id for this request (``x-request-id`` / ``request-id``), cleaned and capped."""
    if not headers:
        return None
    raw = headers.get("x-request-id") or headers.get("request-id") or ""
    cleaned = _REQUEST_ID.sub("", raw)[:100]
    return cleaned or None


def _looks_like_html(body: bytes, content_type: str) -> bool:
    return "html" in content_type.lower() or body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))


def _status_error(exc: _HttpStatus, secrets: tuple[str | None, ...], base_path: str) -> BackendError:
    status = exc.status
    rid = request_id(exc.headers)
    retry_after = parse_retry_after(exc.headers)
    html = _looks_like_html(exc.body, exc.headers.get("content-type", ""))
    parsed: ErrorBody | None = None
    as_json = False  # the server's own JSON error: a 404 then means a missing model, not a missing /v1
    if not html:
        try:
            parsed = error_body(json.loads(exc.body)) if exc.body else None
            as_json = parsed is not None
        except ValueError:
            text = exc.body.decode("utf-8", "replace").strip()
            parsed = ErrorBody(message=text) if text else None
    detail = redact(parsed.message, *secrets) if parsed and parsed.message else ""
    where = f"HTTP {status}" + (f": {detail}" if detail else "")
    suffix = f" [request id {rid}]" if rid else ""
    if status in (401, 403):
        # No server text here: providers echo (parts of) the key they rejected.
        message = f"authentication failed (HTTP {status}): check --api-key / $SOT_API_KEY{suffix}"
        return AuthenticationError(message, status_code=status, request_id=rid)
    if status == 429:
        message = f"rate limited ({where}){suffix}"
        return RateLimitError(message, status_code=status, retry_after=retry_after, request_id=rid)
    error: BackendError
    if 300 <= status < 400:
        message = (
            f"the server redirected the request (HTTP {status}); sot does not follow redirects: give the final "
            f"address as --base-url{suffix}"
        )
        error = _at_address(BadRequestError(message, status_code=status))
    elif status == 408:
        error = RequestTimeoutError(f"the server timed out the request ({where}){suffix}", status_code=status)
    elif status == 409:
        error = ConflictError(f"the server reported a conflict ({where}){suffix}", status_code=status)
    elif status >= 500:
        message = f"server error ({where}){suffix}"
        return ServerError(message, status_code=status, retry_after=retry_after, request_id=rid)
    elif status == 404 and not re.search(r"/v\d", base_path) and not _about_a_model(parsed):
        error = _at_address(BadRequestError(f"{_ADD_V1}{suffix}", status_code=status))
    elif html:
        error = _at_address(BadRequestError(f"{_NOT_AN_API} (HTTP {status}){suffix}", status_code=status))
    elif status == 404 and not as_json:
        message = f"HTTP 404: nothing serves chat completions at this address: check --base-url{suffix}"
        error = _at_address(BadRequestError(message, status_code=status))
    elif parsed is not None and (parsed.code in _CONTEXT_CODES or _CONTEXT_TEXT.search(parsed.message)):
        message = f"the prompt and the answer do not fit the model's context ({where}): {_CONTEXT_FIX}{suffix}"
        error = ContextLengthError(message, status_code=status)
    else:
        error = BadRequestError(f"request rejected ({where}){suffix}", status_code=status)
    error.request_id = rid
    if isinstance(error, BadRequestError) and parsed is not None:
        error.server_message = detail
        error.code = parsed.code
        error.param = parsed.param
        error.error_type = parsed.error_type
        error.loc = parsed.loc
    if retry_after is not None:
        error.retry_after = retry_after
    return error


_Error = TypeVar("_Error", bound=BackendError)


def _at_address(error: _Error) -> _Error:
    error.setup_error = True
    return error


def _about_a_model(parsed: ErrorBody | None) -> bool:
    if parsed is None:
        return False
    return any(_ABOUT_A_MODEL.search(text) for text in (parsed.message, parsed.code or "", parsed.param or ""))


def _address(url: httpx.URL) -> str:
    """HOST:PORT of a base URL: what to check when nothing answers there (never its user info, path or query,
    which may carry credentials)."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return f"{host}:{port}" if port else host


def _refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _unresolved(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "name or service not known" in text or "nodename nor servname" in text or "name resolution" in text


def _map_error(
    exc: BaseException, secrets: tuple[str | None, ...] = (), base_path: str = "/v1", url: httpx.URL | None = None
) -> BackendError:
    """Map a lower-layer error to sot's tree; the message names no header or key, and of `url` only its host
    (and port), where no server answers there."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, _HttpStatus):
        return _status_error(exc, secrets, base_path)
    if isinstance(exc, _StreamError):
        error = exc.error
        rid = request_id(exc.headers)
        message = redact(error.message, *secrets) or "no message"
        code = error.code or "no code"
        text = f"the server sent an error inside the stream ({code}: {message}); its partial answer was dropped"
        if error.status == 429:
            return RateLimitError(text, status_code=None, request_id=rid)
        return ServerError(text, status_code=error.status, request_id=rid)
    if isinstance(exc, _sse.Stalled):
        return BackendTimeoutError(f"the server sent nothing for {exc.seconds:g} s (a stalled stream; --stall-timeout)")
    if isinstance(exc, _NotAnApi):
        return _at_address(ProtocolError(_NOT_AN_API, retryable=False))
    if isinstance(exc, httpx.TimeoutException):
        return BackendTimeoutError("the server did not accept the connection in time: check --base-url and the network")
    if isinstance(exc, httpx.ConnectError) and _refused(exc):
        where = _address(url) if url is not None else "the server's address"
        return _at_address(
            BackendConnectionError(
                f"nothing is listening at {where} (connection refused); check --base-url and that the server is "
                "running",
                retryable=False,
            )
        )
    if isinstance(exc, httpx.ConnectError) and _unresolved(exc):
        host = f"the host name {url.host}" if url is not None else "the server's host name"
        return _at_address(BackendConnectionError(f"{host} could not be resolved; check --base-url", retryable=False))
    if isinstance(exc, httpx.RemoteProtocolError):
        return ProtocolError("the server closed the stream before the answer was complete")
    if isinstance(exc, httpx.TransportError):
        return BackendConnectionError("could not connect to the server, or the connection was reset")
    if isinstance(exc, ValueError):  # json.JSONDecodeError
        return ProtocolError("the server sent a malformed response (not JSON)")
    return BackendError(f"unexpected backend failure: {type(exc).__name__}")


def _checked_url(base_url: str) -> httpx.URL:
    """The base URL, refused at once where it cannot be one (a bare host:port is the usual slip)."""
    fix = "--base-url must be an http:// or https:// address, e.g. http://127.0.0.1:8080/v1"
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL:
        raise ConfigurationError(fix) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(fix)
    return url


# Each server's documented guard against loops: llama.cpp's DRY sampler ("don't repeat yourself": it
# penalises a token that would extend a sequence already in the text, at its documented base and length),
# and vLLM's repetition penalty. A server that refuses a field has it negotiated away (backends/_negotiate.py).
_REPETITION_GUARD: dict[str, dict[str, Any]] = {
    "llama.cpp": {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2},
    "vllm": {"repetition_penalty": 1.1},
}


def build_body(
    request: ChatRequest, model: str, dialect: Dialect = "openai", extra: Mapping[str, Any] | None = None
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


def _chat_chunk(chunk: StreamChunk) -> ChatChunk:
    """A parsed chunk as the backend's ``ChatChunk``, reasoning apart (``ChunkFilter`` splits ``<think>`` text)."""
    return ChatChunk(text=chunk.text, finish_reason=chunk.finish_reason, usage=chunk.usage, reasoning=chunk.reasoning)


class OpenAICompatBackend:
    """Streams chat completions from one OpenAI-compatible endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dialect: Dialect = "openai",
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
        verify: ssl.SSLContext | bool = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if url.scheme == "http" else True
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
        return _map_error(exc, self._secrets, self._base_path, self._url)

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

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
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
        except _HttpStatus as exc:
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
        except (httpx.HTTPError, ValueError, _StreamError, _sse.Stalled, _NotAnApi) as exc:
            raise self._map_error(exc) from None

    async def _read(self, response: httpx.Response, stall: float, answer_only: ChunkFilter) -> AsyncIterator[ChatChunk]:
        encoding = response.headers.get("content-encoding", "")
        if response.status_code >= 300:
            bounded = _sse.BoundedBody(response.aiter_raw(), encoding, constants.MAX_ERROR_BODY_BYTES)
            body = bytearray()
            try:
                with anyio.move_on_after(stall):
                    async for piece in bounded.chunks():
                        body += piece
            except (ProtocolError, httpx.ReadTimeout):
                pass  # an over-long or stalled error body: its first part is enough for the message
            raise _HttpStatus(response.status_code, response.headers, bytes(body))
        content_type = response.headers.get("content-type", "").lower()
        bounded = _sse.BoundedBody(response.aiter_raw(), encoding, constants.MAX_RESPONSE_BYTES)
        if "html" in content_type:
            raise _NotAnApi()
        if content_type.startswith("application/json"):
            # A server that ignores stream=true answers with one completion object.
            try:
                with anyio.fail_after(stall):
                    raw = await bounded.read()
            except TimeoutError:
                raise _sse.Stalled(stall) from None
            if _looks_like_html(raw, ""):
                raise _NotAnApi()
            parsed = parse_completion(json.loads(raw))
            if parsed.error is not None:
                raise _StreamError(parsed.error, response.headers)
            chunk = answer_only(_chat_chunk(parsed))
            if chunk is not None:
                yield chunk
            return
        finished = False
        events = _sse.events(bounded.chunks(), stall_s=stall)
        async for data in events:
            if data.strip() == "[DONE]":
                finished = True  # some servers end with [DONE] and never send a finish_reason
                # Read to the body's end (briefly) so the connection goes back to the pool.
                with anyio.move_on_after(min(stall, 1.0)):
                    try:
                        async for _ in events:
                            pass
                    except (httpx.HTTPError, _sse.Stalled, ProtocolError):
                        pass  # the answer is whole; whatever follows [DONE] only costs the connection
                break
            for payload in _payloads(data):
                parsed = parse_chunk(payload)
                if parsed.error is None and parsed.finish_reason == "error":
                    parsed = replace(parsed, error=ErrorBody(message="the answer ended with finish_reason 'error'"))
                if parsed.error is not None:
                    raise _StreamError(parsed.error, response.headers)
                finished = finished or parsed.finish_reason is not None
                chunk = answer_only(_chat_chunk(parsed))
                if chunk is not None:
                    yield chunk
                if answer_only.stopped:  # a stop the server refused, applied here: cut, close the stream
                    return
        if finished and (tail := answer_only.end()) is not None:
            yield tail  # text held back (a partial tag or stop string) when [DONE] came without a finish
        if not finished:
            if _looks_like_html(bounded.head, ""):
                raise _NotAnApi()
            if not bounded.total:
                raise ProtocolError("the server answered with an empty body")
            raise ProtocolError("the stream ended before the answer was complete")

    async def served_models(self, deadline_s: float) -> list[str]:
        """The ids ``GET /models`` lists, all within `deadline_s` (a trickling reply cannot hold us).

        Where the address or the key is wrong (nothing listening, a page without the API, 401), the error is
        the one a chat call would meet: the same line and exit code whether or not a model was given.
        """
        unlisted = f"no model given (--model / ${constants.ENV_MODEL}) and the server's model list is unavailable"
        try:
            reply = await get_reply(self._http, self.base_url + "/models", deadline_s=deadline_s)
        except ProbeFailed as exc:
            if isinstance(exc.cause, httpx.TransportError):
                raise self._map_error(exc.cause) from None
            raise ConfigurationError(f"{unlisted}: {exc}; check --base-url and --timeout") from None
        status = reply.status
        html = _looks_like_html(reply.body, reply.headers.get("content-type", ""))
        no_api_path = status == 404 and not re.search(r"/v\d", self._base_path)
        if status in (401, 403) or 300 <= status < 400 or no_api_path or (html and status >= 400):
            raise self._map_error(_HttpStatus(status, reply.headers, reply.body))
        if html:
            raise self._map_error(_NotAnApi())
        try:
            payload = json.loads(reply.body) if reply.body else None
        except ValueError:
            payload = None
        data = payload.get("data") if isinstance(payload, dict) else None
        if status != 200 or not isinstance(data, list):
            raise ConfigurationError(f"{unlisted} (HTTP {status}): name the model with --model")
        return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str | int)]

    async def aclose(self) -> None:
        await self._http.aclose()


def _payloads(data: str) -> list[Any]:
    """The JSON values of one event's data: usually one; a server that omits the blank line between
    events gets its data lines read one by one."""
    try:
        return [json.loads(data)]
    except ValueError:
        if "\n" not in data:
            if data.lstrip()[:1] == "<":
                raise _NotAnApi() from None
            raise ProtocolError("the server sent a malformed chunk (not JSON)") from None
    values: list[Any] = []
    for line in data.split("\n"):
        if line.strip() and line.strip() != "[DONE]":
            try:
                values.append(json.loads(line))
            except ValueError:
                raise ProtocolError("the server sent a malformed chunk (not JSON)") from None
    return values
