"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, SGLang, hosted APIs).

Calls go through the ``openai`` SDK with its own retries off (``max_retries=0``): sot's retry
loop in ``sot.calls`` is the only one. The SDK runs on an ``httpx.AsyncClient`` we own, so one
connection pool serves every call of a client. ``_map_error`` is the one place where SDK, httpx
and JSON errors become ``sot.errors`` exceptions.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Literal

import httpx
import openai

from sot import constants
from sot.errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    BadRequestError,
    ProtocolError,
    RateLimitError,
    ServerError,
)
from sot.result import Usage

from ._negotiate import Negotiator
from ._reasoning import ChunkFilter
from .base import ChatChunk, ChatRequest

Dialect = Literal["openai", "llama.cpp", "vllm"]
_URL = re.compile(r"\b\w+://\S+")
_PLACEHOLDER_KEY = "sot-no-key"


def redact(text: str, secret: str | None) -> str:
    """Drop URLs and the secret from server-provided text; keep it to one short line."""
    if secret:
        text = text.replace(secret, "***")
    text = _URL.sub("<url>", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:200]


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(raw) if raw else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _server_message(exc: openai.APIStatusError, secret: str | None) -> str:
    body: Any = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return redact(str(message), secret)
    return ""


def _map_error(exc: BaseException, secret: str | None) -> BackendError:
    """Map a lower-layer error to sot's tree; the message names no URL, header or key."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _server_message(exc, secret)
        message = f"HTTP {status}" + (f": {detail}" if detail else "")
        retry_after = parse_retry_after(exc.response.headers if exc.response is not None else None)
        if status in (401, 403):
            # No server text here: providers echo (parts of) the key they rejected.
            return AuthenticationError(f"authentication failed (HTTP {status})", status_code=status)
        if status == 429:
            return RateLimitError(f"rate limited ({message})", status_code=status, retry_after=retry_after)
        if status in constants.RETRYABLE_STATUS:
            return ServerError(f"server error ({message})", status_code=status, retry_after=retry_after)
        if status >= 500:
            return ServerError(f"server error ({message})", status_code=status)
        return BadRequestError(f"request rejected ({message})", status_code=status)
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        return BackendTimeoutError("the server did not answer in time")
    if isinstance(exc, httpx.RemoteProtocolError):
        return ProtocolError("the server closed the stream before the answer was complete")
    if isinstance(exc, openai.APIConnectionError | httpx.TransportError):
        return BackendConnectionError("could not connect to the server, or the connection was reset")
    if isinstance(exc, ValueError):  # json.JSONDecodeError, malformed SSE payloads
        return ProtocolError("the server sent a malformed response")
    if isinstance(exc, openai.APIError):
        return ProtocolError(f"the server sent an error in the stream: {redact(exc.message, secret)}")
    return BackendError(f"unexpected backend failure: {type(exc).__name__}")


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    completion_details = raw.get("completion_tokens_details")
    thought = completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else None
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        cached_tokens=int(cached or 0),
        reasoning_tokens=int(thought or 0),
    )


def _parse_completion(payload: Any) -> ChatChunk:
    """A whole (non-streamed) chat completion as one chunk."""
    if not isinstance(payload, dict) or payload.get("error"):
        raise ProtocolError("the server sent an error instead of a completion")
    choices = payload.get("choices") or [{}]
    message = choices[0].get("message") or {}
    return ChatChunk(
        text=message.get("content") or "",
        finish_reason=choices[0].get("finish_reason") or "stop",
        usage=_usage(payload.get("usage")),
        reasoning=str(message.get("reasoning_content") or message.get("reasoning") or ""),
    )


def _parse_event(line: str, secret: str | None) -> ChatChunk | None:
    """One SSE line of a chat completion stream; None for comments, blanks and [DONE]."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if not data or data == "[DONE]":
        return None
    payload = json.loads(data)  # ValueError: malformed, mapped to ProtocolError
    if not isinstance(payload, dict):
        raise ValueError("event is not an object")
    error = payload.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise ProtocolError(f"the server sent an error in the stream: {redact(str(message), secret)}")
    usage = _usage(payload.get("usage"))
    choices = payload.get("choices") or []
    if not choices:
        return ChatChunk(usage=usage) if usage is not None else None
    choice = choices[0]
    delta = choice.get("delta") or {}
    text = delta.get("content") or ""
    reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
    finish = choice.get("finish_reason")
    if not (text or reasoning or finish or usage is not None):
        return None
    return ChatChunk(text=text, finish_reason=finish, usage=usage, reasoning=str(reasoning))


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
        self.negotiator = Negotiator(base_url, model)  # what this server accepts, learned per process
        self.dialect: Dialect = dialect
        self.name = name or ("openai-compatible" if dialect == "openai" else dialect)
        self._secret = api_key
        self._extra_body = dict(extra_body or {})
        # Read timeouts reset on every chunk; the real deadline is enforced per call in sot.calls.
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(None, connect=constants.CONNECT_TIMEOUT_S),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=constants.POOL_KEEPALIVE),
        )
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or _PLACEHOLDER_KEY,
            max_retries=0,
            http_client=self._http,
        )
        # The SDK imports its resource modules on first use (~0.7 s); pay that here, not inside the
        # first answer's timings.
        self._create = self._client.chat.completions.with_streaming_response.create

    def __repr__(self) -> str:
        return f"OpenAICompatBackend(name={self.name!r}, model={self.model!r}, dialect={self.dialect!r})"

    def _constraint_body(self, request: ChatRequest) -> dict[str, Any]:
        constraint = request.constraint
        if constraint is None:
            return {}
        if self.dialect == "llama.cpp" and constraint.gbnf:
            return {"grammar": constraint.gbnf}
        if self.dialect == "vllm" and constraint.regex:
            # vLLM >= 0.12 reads structured outputs here; the old guided_* fields are gone.
            return {"structured_outputs": {"regex": constraint.regex}}
        return {}

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
        """The extra, non-standard fields this request sends (public for tests and dry runs)."""
        return {**self._extra_body, **self._reasoning_body(request), **self._constraint_body(request)}

    def full_body(self, request: ChatRequest) -> dict[str, Any]:
        """The whole request body before negotiation."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.frequency_penalty is not None:
            kwargs["frequency_penalty"] = request.frequency_penalty
        return {**kwargs, **self.request_body(request)}

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        original = self.full_body(request)
        prepared = self.negotiator.prepare(original)
        body = dict(prepared.body)
        # The SDK takes the standard core as arguments and sends the rest as it is.
        kwargs = {name: body.pop(name) for name in ("model", "messages", "stream")}
        kwargs["extra_body"] = body
        answer_only = ChunkFilter(prepared.client_stop)  # thinking apart; a stop the server refused, applied here
        if prepared.adaptations:
            yield ChatChunk(adaptations=prepared.adaptations)
        finished = False
        try:
            # The SDK builds the request and raises per status; we read the SSE body ourselves, to its
            # very end: the SDK stops at [DONE] and closes an unfinished body, which makes httpx drop
            # the connection, so every call would pay a new connection (and TLS handshake).
            async with self._create(**kwargs) as response:
                if response.headers.get("content-type", "").startswith("application/json"):
                    # A server that ignores stream=true answers with one completion object.
                    whole = answer_only(_parse_completion(json.loads(await response.read())))
                    if whole is not None:
                        yield whole
                    return
                async for line in response.iter_lines():
                    if line.startswith("data:") and line[5:].strip() == "[DONE]":
                        finished = True  # some servers end with [DONE] and never send a finish_reason
                        continue
                    chunk = _parse_event(line, self._secret)
                    if chunk is None:
                        continue
                    finished = finished or chunk.finish_reason is not None
                    filtered = answer_only(chunk)
                    if filtered is not None:
                        yield filtered
                    if answer_only.stopped:  # the emulated stop: cut here, close the stream
                        return
                if not answer_only.stopped and (tail := answer_only.end()) is not None:
                    yield tail  # what was held back when a stream ends with [DONE] alone
        except openai.APIStatusError as exc:
            error = _map_error(exc, self._secret)
            adapted = self.negotiator.learn(exc.status_code, exc.body, original, prepared.body)
            if adapted and isinstance(error, BadRequestError):
                error.adaptation = tuple(adapted)  # sot.calls sends it again at once, adapted
            raise error from None
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:
            raise _map_error(exc, self._secret) from None
        if not finished:
            raise ProtocolError("the stream ended before the answer was complete")

    async def aclose(self) -> None:
        await self._client.close()
        await self._http.aclose()
