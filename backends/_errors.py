"""Errors of an OpenAI-compatible server as sot's: the one place where HTTP statuses, httpx, stall and
stream errors become ``sot.errors`` exceptions, each with the fix where there is one, and never a
header, a key or a URL (only the host and port of a server that cannot be reached)."""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Mapping
from typing import TypeVar

import httpx

from sot.errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    BadRequestError,
    ConflictError,
    ContextLengthError,
    ProtocolError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)

from . import _sse
from ._chunks import ErrorBody, error_body
from ._redact import redact

_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"})
_CONTEXT_TEXT = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|max_model_len|n_ctx"
    r"|exceeds? the (available )?(context|maximum)",
    re.IGNORECASE,
)
_CONTEXT_FIX = (
    "lower 'max_tokens' / 'point_max_tokens' or shorten the question, or give the server a larger context "
    "(llama-server --ctx-size, vLLM --max-model-len)"
)
_NOT_AN_API = "the address answered with a web page (HTML), not an OpenAI-compatible API: check 'base_url'"
# One line for a base URL without its API path, whichever request met it first (a chat call, or the
# model list asked for when no model is given): the fix does not depend on the options.
_ADD_V1 = (
    "HTTP 404: nothing serves an OpenAI-compatible API at this address; such servers serve it under /v1: "
    "add /v1 to the end of 'base_url'"
)
# A 404 that talks about a model is about the model (DeepSeek's API has no /v1), not the address.
_ABOUT_A_MODEL = re.compile(r"(?<![/\w])models?\b", re.IGNORECASE)  # not the path "/models"
_REQUEST_ID = re.compile(r"[^A-Za-z0-9._:-]")


class HttpStatus(Exception):
    """A non-2xx reply (internal: ``map_error`` turns it into sot's error)."""

    def __init__(self, status: int, headers: httpx.Headers, body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.body = body


class StreamError(Exception):
    """A top-level ``error`` in a 200 stream (internal)."""

    def __init__(self, error: ErrorBody, headers: httpx.Headers) -> None:
        super().__init__(error.message)
        self.error = error
        self.headers = headers


class NotAnApi(Exception):
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


def names_api_version(path: str) -> bool:
    """Whether a base URL's path names an API version (``/v1``, ``/api/v2``): a 404 without one asks for it."""
    return re.search(r"/v\d", path) is not None


def looks_like_html(body: bytes, content_type: str) -> bool:
    return "html" in content_type.lower() or body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))


def _status_error(exc: HttpStatus, secrets: tuple[str | None, ...], base_path: str) -> BackendError:
    status = exc.status
    rid = request_id(exc.headers)
    retry_after = parse_retry_after(exc.headers)
    html = looks_like_html(exc.body, exc.headers.get("content-type", ""))
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
        message = f"authentication failed (HTTP {status}): check 'api_key' / $SOT_API_KEY{suffix}"
        return AuthenticationError(message, status_code=status, request_id=rid, options=("api_key",))
    if status == 429:
        message = f"rate limited ({where}){suffix}"
        return RateLimitError(message, status_code=status, retry_after=retry_after, request_id=rid)
    error: BackendError
    if 300 <= status < 400:
        message = (
            f"the server redirected the request (HTTP {status}); sot does not follow redirects: give the final "
            f"address as 'base_url'{suffix}"
        )
        error = at_address(BadRequestError(message, status_code=status))
    elif status == 408:
        error = RequestTimeoutError(f"the server timed out the request ({where}){suffix}", status_code=status)
    elif status == 409:
        error = ConflictError(f"the server reported a conflict ({where}){suffix}", status_code=status)
    elif status >= 500:
        message = f"server error ({where}){suffix}"
        return ServerError(message, status_code=status, retry_after=retry_after, request_id=rid)
    elif status == 404 and not names_api_version(base_path) and not _about_a_model(parsed):
        error = at_address(BadRequestError(f"{_ADD_V1}{suffix}", status_code=status))
    elif html:
        error = at_address(BadRequestError(f"{_NOT_AN_API} (HTTP {status}){suffix}", status_code=status))
    elif status == 404 and not as_json:
        message = f"HTTP 404: nothing serves chat completions at this address: check 'base_url'{suffix}"
        error = at_address(BadRequestError(message, status_code=status))
    elif parsed is not None and (parsed.code in _CONTEXT_CODES or _CONTEXT_TEXT.search(parsed.message)):
        error = _too_long(where, suffix, status)
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


def _too_long(where: str, suffix: str, status: int) -> ContextLengthError:
    said = f"the prompt and the answer do not fit the model's context ({where}): "
    # own_from: the server's words are quoted as they came
    return ContextLengthError(
        f"{said}{_CONTEXT_FIX}{suffix}",
        status_code=status,
        options=("max_tokens", "point_max_tokens"),
        own_from=len(said),
    )


def at_address(error: _Error) -> _Error:
    """A setup error, whose message names base_url (the address to check), whichever call met it."""
    error.setup_error = True
    error.options = (*error.options, "base_url")
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


def map_error(
    exc: BaseException, secrets: tuple[str | None, ...] = (), base_path: str = "/v1", url: httpx.URL | None = None
) -> BackendError:
    """Map a lower-layer error to sot's tree; the message names no header or key, and of `url` only its host
    (and port), where no server answers there."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, HttpStatus):
        return _status_error(exc, secrets, base_path)
    if isinstance(exc, StreamError):
        error = exc.error
        rid = request_id(exc.headers)
        message = redact(error.message, *secrets) or "no message"
        code = error.code or "no code"
        text = f"the server sent an error inside the stream ({code}: {message}); its partial answer was dropped"
        if error.status == 429:
            return RateLimitError(text, status_code=None, request_id=rid)
        return ServerError(text, status_code=error.status, request_id=rid)
    if isinstance(exc, _sse.Stalled):
        return BackendTimeoutError(
            f"the server sent nothing for {exc.seconds:g} s (a stalled stream; 'stall_timeout')",
            options=("stall_timeout",),
        )
    if isinstance(exc, NotAnApi):
        return at_address(ProtocolError(_NOT_AN_API, retryable=False))
    if isinstance(exc, httpx.TimeoutException):
        return BackendTimeoutError(
            "the server did not accept the connection in time: check 'base_url' and the network", options=("base_url",)
        )
    if isinstance(exc, httpx.ConnectError) and _refused(exc):
        where = _address(url) if url is not None else "the server's address"
        return at_address(
            BackendConnectionError(
                f"nothing is listening at {where} (connection refused); "
                "check 'base_url' and that the server is running",
                retryable=False,
            )
        )
    if isinstance(exc, httpx.ConnectError) and _unresolved(exc):
        host = f"the host name {url.host}" if url is not None else "the server's host name"
        return at_address(BackendConnectionError(f"{host} could not be resolved; check 'base_url'", retryable=False))
    if isinstance(exc, httpx.RemoteProtocolError):
        return ProtocolError("the server closed the stream before the answer was complete")
    if isinstance(exc, httpx.TransportError):
        return BackendConnectionError("could not connect to the server, or the connection was reset")
    if isinstance(exc, ValueError):  # json.JSONDecodeError
        return ProtocolError("the server sent a malformed response (not JSON)")
    return BackendError(f"unexpected backend failure: {type(exc).__name__}")
