"""Errors as OpenAI's API shapes them: ``{"error": {"message", "type", "param", "code"}}`` and a status.

Messages come from ``SotError``s, which never carry URLs, headers or keys (sot/errors.py).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendTimeoutError,
    BadRequestError,
    ConfigurationError,
    LocalServerError,
    ProtocolError,
    RateLimitError,
    ServerError,
    SotError,
)
from .settings import proxy_flag
from .translate import SOT_FIELDS


def in_proxy_terms(exc: SotError) -> str:
    """`exc`'s message in the proxy's flags."""
    return exc.message_in(proxy_flag)


def request_field(name: str) -> str:
    """A library option's name as a request body spells it (``sot.max_points``, ``temperature``)."""
    return f"sot.{name}" if name in SOT_FIELDS or name == "outline" else name


def in_client_terms(exc: SotError) -> str:
    """`exc`'s message for the client that sent the request: a bad value it sent names its body field,
    anything else the proxy's flags (its operator's to fix)."""
    return exc.message_in(request_field if isinstance(exc, ConfigurationError) else proxy_flag)


_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error"}


def error_type(status: int) -> str:
    """OpenAI's error type for a status."""
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return _TYPES.get(status, "invalid_request_error")


def error_body(message: str, status: int, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}


def status_of(exc: SotError) -> tuple[int, str | None, dict[str, str]]:
    """(HTTP status, OpenAI error code, extra headers) for an error of an answer."""
    if isinstance(exc, RateLimitError):
        wait = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(max(1, math.ceil(wait)))} if wait else {}
        return 429, "rate_limit_exceeded", headers
    if isinstance(exc, AuthenticationError):
        return exc.status_code if exc.status_code in (401, 403) else 401, "invalid_api_key", {}
    if isinstance(exc, BadRequestError):
        status = exc.status_code if exc.status_code and 400 <= exc.status_code < 500 else 400
        return status, None, {}
    if isinstance(exc, ConfigurationError):
        return 400, None, {}
    if isinstance(exc, BackendTimeoutError):
        return 504, "upstream_timeout", {}
    if isinstance(exc, BackendConnectionError | ServerError | ProtocolError):
        return 502, "upstream_error", {}
    if isinstance(exc, LocalServerError):
        return 503, "backend_unavailable", {}
    return 500, None, {}
