"""The exception tree of sot.

Every error the library raises is a ``SotError``; lower-layer errors (openai SDK, httpx, anyio,
JSON) are mapped to it in one place, ``sot.backends.openai_compat._map_error``::

    SotError
    ├── ConfigurationError          bad options, missing model, unreadable template directory
    ├── TemplateError               a prompt template failed to render
    ├── BackendError                a call to a model server failed (after its retries)
    │   ├── BackendConnectionError  refused, reset, DNS
    │   ├── BackendTimeoutError     the call's total deadline passed (stalls included)
    │   ├── RateLimitError          429, or a Retry-After beyond our cap
    │   ├── AuthenticationError     401, 403
    │   ├── BadRequestError         400, 404, 422 and other 4xx: never retried
    │   ├── ServerError             5xx
    │   └── ProtocolError           malformed JSON, a stream cut before its end
    ├── LocalServerError            the embedded llama.cpp server could not be found or started
    ├── SkeletonError               no skeleton could be obtained
    └── PointError                  an expansion failed after its retries (names the point)

Messages never carry URLs, headers or API keys: the mapping builds them from status codes and
sanitised server text only.
"""

from __future__ import annotations


class SotError(Exception):
    """Base of every error raised by sot."""

    exit_code = 1


class ConfigurationError(SotError):
    exit_code = 2


class TemplateError(SotError):
    exit_code = 2


class BackendError(SotError):
    exit_code = 3
    retryable = False

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class BackendConnectionError(BackendError):
    retryable = True


class BackendTimeoutError(BackendError):
    exit_code = 4
    retryable = True


class RateLimitError(BackendError):
    exit_code = 5
    retryable = True

    def __init__(self, message: str, *, status_code: int | None = 429, retry_after: float | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


class AuthenticationError(BackendError):
    exit_code = 6


class BadRequestError(BackendError):
    exit_code = 7


class ServerError(BackendError):
    retryable = True

    def __init__(self, message: str, *, status_code: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


class ProtocolError(BackendError):
    retryable = True


class LocalServerError(SotError):
    exit_code = 8


class SkeletonError(SotError):
    exit_code = 9


class PointError(SotError):
    exit_code = 10

    def __init__(self, index: int, title: str, cause: BaseException) -> None:
        super().__init__(f"point {index + 1} ({title!r}) failed: {cause}")
        self.index = index
        self.title = title
        self.cause = cause
