"""sot: Skeleton-of-Thought orchestration for faster LLM answers."""

from logging import NullHandler as _NullHandler
from logging import getLogger as _getLogger

from . import (
    _source_tree,  # noqa: F401  (first: lets sot.backends resolve in a source checkout)
    events,
)
from ._shape import SkeletonShape
from .client import Client, ask, stream
from .errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
    ContextLengthError,
    LocalServerError,
    PointError,
    ProtocolError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    SkeletonError,
    SotError,
    TemplateError,
)
from .options import Options
from .result import Answer, Timings, Usage
from .router import Route, route
from .skeleton import SkeletonParser, parse_skeleton

# A library logs; the application decides what to show (the CLI: sot/_logging.py).
_getLogger("sot").addHandler(_NullHandler())


def __getattr__(name: str) -> str:
    # importlib.metadata costs tens of ms at start-up: read the version only when asked.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("sot-llm")
        except PackageNotFoundError:  # running from a source tree that was never installed
            return "0.0.0"
    raise AttributeError(f"module 'sot' has no attribute {name!r}")


__all__ = [
    "Answer",
    "AuthenticationError",
    "BackendConnectionError",
    "BackendError",
    "BackendTimeoutError",
    "BadRequestError",
    "Client",
    "ConfigurationError",
    "ConflictError",
    "ContextLengthError",
    "LocalServerError",
    "Options",
    "PointError",
    "ProtocolError",
    "RateLimitError",
    "RequestTimeoutError",
    "Route",
    "ServerError",
    "SkeletonError",
    "SkeletonParser",
    "SkeletonShape",
    "SotError",
    "TemplateError",
    "Timings",
    "Usage",
    "__version__",
    "ask",
    "events",
    "parse_skeleton",
    "route",
    "stream",
]
