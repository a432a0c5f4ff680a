"""The exception tree of sot.

Every error the library raises is a ``SotError``; lower-layer errors (httpx, stall deadlines, chunk shapes,
JSON) are mapped to it in one place, ``sot.backends._errors.map_error``::

    SotError
    ├── ConfigurationError          bad options, missing model, unreadable template directory
    ├── TemplateError               a prompt template failed to render
    ├── BackendError                a call to a model server failed (after its retries)
    │   ├── BackendConnectionError  refused, reset, DNS
    │   ├── BackendTimeoutError     a stream stalled, or the call's total deadline passed
    │   │   └── RequestTimeoutError 408: the server gave up waiting for the request
    │   ├── RateLimitError          429, or a Retry-After beyond our cap
    │   ├── AuthenticationError     401, 403
    │   ├── BadRequestError         400, 404, 422 and other 4xx: never retried
    │   │   └── ContextLengthError  the prompt and answer do not fit the model's context
    │   ├── ConflictError           409: retried
    │   ├── ServerError             5xx, or an error sent inside a stream
    │   └── ProtocolError           malformed JSON or chunk shapes, a stream cut before its end
    ├── LocalServerError            the embedded llama.cpp server could not be found or started
    ├── SkeletonError               no skeleton could be obtained
    └── PointError                  an expansion failed after its retries (names the point)

A failed skeleton or point call is raised as its stage *and* its cause: ``stage_error`` builds an
error that is both a ``PointError`` (or ``SkeletonError``) and the cause's class, so a rate-limited
expansion is caught by ``except sot.RateLimitError`` as well as by ``except sot.PointError``, and
its exit code is the cause's (the stage's, 9 or 10, where the cause has no code of its own). Every
error pickles with its attributes (batch workers, proxies).

Messages never carry headers, API keys or URLs (of a URL, only the host and port of a server nothing
listens at): the mapping builds them from status codes and sanitised server text only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def _rebuild(cls: type[SotError], args: tuple[Any, ...], state: dict[str, Any]) -> SotError:
    error = Exception.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class SotError(Exception):
    """Base of every error raised by sot.

    A message names the settings that fix it as the library spells them, quoted (``'base_url'``,
    ``'timeout'``), and lists them in ``options``; a front end respells them in its own terms with
    ``message_in`` (the CLI: ``--base-url``; the proxy: ``--upstream``), so each layer speaks to its caller.
    Text not sot's own comes first, before ``own_from`` (a point's title, a server's message): it is never
    respelt, whatever it quotes.
    """

    exit_code = 1
    cause_message: str | None = None  # a failed stage's cause, as it read (see stage_error)
    options: tuple[str, ...] = ()
    own_from = 0  # where sot's own words start in the message (what comes before is quoted as it came)
    cause_own_from = 0  # the same in cause_message

    def __init__(self, message: str = "", *, options: Iterable[str] = (), own_from: int = 0) -> None:
        super().__init__(message)
        if options:
            self.options = tuple(options)
        if own_from:
            self.own_from = own_from

    def message_in(self, spell: Callable[[str], str], message: str | None = None, own_from: int = 0) -> str:
        """This error's message (or `message`, e.g. its cause's, whose own words start at `own_from`) with
        each named option in sot's own words spelt by `spell`."""
        text, start = (str(self), self.own_from) if message is None else (message, own_from)
        return text[:start] + respell(text[start:], self.options, spell)

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take keyword arguments that Exception's default pickling drops.
        return (_rebuild, (type(self), self.args, self.__dict__))


class ConfigurationError(SotError):
    """Bad options, a missing model, an unreadable template directory."""

    exit_code = 2


class TemplateError(SotError):
    """A prompt template failed to render."""

    exit_code = 2


class BackendError(SotError):
    """A call to a model server failed (after its retries).

    ``status_code`` is the HTTP status (None for transport and stream failures), ``request_id`` the
    server's ``x-request-id`` / ``request-id`` header (quote it to the provider's support). Whether the
    one retry loop retries it is ``retryable`` (per class, overridden per instance where the cause
    decides: a refused connection is final on one server, and fails over where there are several).
    """

    exit_code = 3
    retryable = False
    request_id: str | None = None
    retry_after: float | None = None  # seconds the server asked us to wait (Retry-After), where it did
    # True where the setup is wrong, not the call (nothing listening at the address, no API there, /v1
    # missing, a refused key): the fix is a flag whichever call met it, so the CLI says it the same way
    # for every stage.
    setup_error = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        options: Iterable[str] = (),
        own_from: int = 0,
    ) -> None:
        super().__init__(message, options=options, own_from=own_from)
        self.status_code = status_code
        self.request_id = request_id
        self.retry_after = retry_after
        if retryable is not None:
            self.retryable = retryable


class BackendConnectionError(BackendError):
    """The connection was refused or reset, or the host was not found."""

    retryable = True


class BackendTimeoutError(BackendError):
    """A stream stalled (retried), or the call's total deadline passed while it was still producing (final)."""

    exit_code = 4
    retryable = True


class RequestTimeoutError(BackendTimeoutError):
    """408: the server gave up waiting for the request; retried."""


class RateLimitError(BackendError):
    """429, or a Retry-After beyond the cap."""

    exit_code = 5
    retryable = True

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = 429,
        retry_after: float | None = None,
        request_id: str | None = None,
        options: Iterable[str] = (),
        own_from: int = 0,
    ) -> None:
        super().__init__(
            message,
            status_code=status_code,
            request_id=request_id,
            retry_after=retry_after,
            options=options,
            own_from=own_from,
        )


class AuthenticationError(BackendError):
    """401 or 403: the key is missing, wrong or not allowed this model."""

    exit_code = 6
    setup_error = True


class BadRequestError(BackendError):
    """400, 404, 422 and other 4xx: the request itself is wrong; never retried.

    The server's parsed error body is kept for callers that adapt the request (all None when absent):
    ``server_message`` (redacted, one line), ``code`` (a string, integer codes included), ``param``
    (the field it names), ``error_type`` and ``loc`` (Mistral/FastAPI 422 ``detail[].loc``).
    """

    exit_code = 7
    # Set when the server refused a request field and the request was adapted (backends/_negotiate.py):
    # sot.calls then sends it again at once, the one exception to "never retried".
    adaptation: tuple[str, ...] = ()
    server_message: str | None = None
    code: str | None = None
    param: str | None = None
    error_type: str | None = None
    loc: tuple[str, ...] | None = None


class ContextLengthError(BadRequestError):
    """The prompt plus the requested answer do not fit the model's context window."""


class ConflictError(BackendError):
    """409: the server reports a conflicting concurrent request; retried."""

    retryable = True


class ServerError(BackendError):
    """5xx, or an error the server sent inside a stream."""

    retryable = True


class ProtocolError(BackendError):
    """A malformed response (bad JSON, a chunk of the wrong shape, a body over its cap), or a stream cut
    before its end; retried, except where the address is not an API at all (an HTML page)."""

    retryable = True


class LocalServerError(SotError):
    """The embedded llama.cpp server could not be found or started."""

    exit_code = 8


class SkeletonError(SotError):
    """No skeleton could be obtained."""

    exit_code = 9


class PointError(SotError):
    """An expansion failed after its retries; ``index`` and ``title`` name the point."""

    exit_code = 10
    index: int
    title: str

    def __init__(self, index: int, title: str, cause: BaseException) -> None:
        super().__init__(f"point {index + 1} ({title!r}) failed: {cause}")
        self.index = index
        self.title = title
        self.__cause__ = cause

    @property
    def cause(self) -> BaseException | None:
        """The error that failed the point (not kept across pickling: its message is in ours)."""
        return self.__cause__


_STAGED: dict[tuple[type[SotError], type[SotError]], type[SotError]] = {}


def respell(message: str, options: Iterable[str], spell: Callable[[str], str]) -> str:
    """`message` with every mention of the named options (quoted, as ``'base_url'``) spelt by `spell`."""
    for name in options:
        message = message.replace(f"'{name}'", spell(name))
    return message


def _staged_class(stage: type[SotError], cause: type[SotError]) -> type[SotError]:
    """The class that is both `stage` and `cause` (made once per pair), with the cause's exit code, or the
    stage's where the cause is of no kind more precise than ``SotError``."""
    if issubclass(cause, stage):
        return cause
    key = (stage, cause)
    if key not in _STAGED:
        name = f"{stage.__name__}[{cause.__name__}]"

        def reduce(self: SotError) -> tuple[Any, ...]:
            # The class exists only at run time: unpickling rebuilds it from its two parts.
            return (_rebuild_staged, (stage, cause, self.args, self.__dict__))

        exit_code = stage.exit_code if cause is SotError else cause.exit_code
        namespace = {"exit_code": exit_code, "cause_type": cause, "__module__": __name__, "__reduce__": reduce}
        _STAGED[key] = type(name, (stage, cause), namespace)
    return _STAGED[key]


def _rebuild_staged(
    stage: type[SotError], cause: type[SotError], args: tuple[Any, ...], state: dict[str, Any]
) -> SotError:
    return _rebuild(_staged_class(stage, cause), args, state)


def stage_error(stage: type[SotError], message: str, cause: BaseException, **attributes: Any) -> SotError:
    """`message` as an error of `stage` that keeps `cause`'s class, attributes and exit code."""
    cause_class = type(cause) if isinstance(cause, SotError) else SotError
    cls = _staged_class(stage, cause_class)
    error = Exception.__new__(cls)
    Exception.__init__(error, message)
    if isinstance(cause, SotError):
        error.__dict__.update(cause.__dict__)
    error.__dict__.update(attributes)
    # Kept apart from __cause__, which `raise ... from None` on the way up clears: the CLI says some
    # causes (a server nobody answers at) as they are, whichever stage met them.
    error.cause_message = str(cause)
    # The stage's words quote the point's title: sot's own words are the cause's, after them.
    error.cause_own_from = getattr(cause, "own_from", 0)
    error.own_from = len(message) - len(str(cause)) + error.cause_own_from
    error.__cause__ = cause
    return error


def point_error(index: int, title: str, cause: BaseException) -> SotError:
    """A failed expansion: a ``PointError`` naming the point, and still the cause's class."""
    return stage_error(PointError, f"point {index + 1} ({title!r}) failed: {cause}", cause, index=index, title=title)


def skeleton_error(cause: BaseException) -> SotError:
    """A failed skeleton call: a ``SkeletonError``, and still the cause's class."""
    return stage_error(SkeletonError, f"the skeleton call failed: {cause}", cause)
