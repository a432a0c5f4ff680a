"""sot: Skeleton-of-Thought orchestration for faster LLM answers."""

from importlib.util import find_spec as _find_spec
from logging import NullHandler as _NullHandler
from logging import getLogger as _getLogger

if _find_spec(f"{__name__}.backends") is None:
    # setuptools installs the top-level backends/ and prompts/ inside the package: its source folder alone
    # (first on the path in a checkout's root) lacks them.
    raise ImportError(
        f"sot was imported from its source folder ({__path__[0]}), which lacks sot.backends: "
        "install it (pip install .) and run Python from another folder"
    )

from . import events
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
from .outline import SkeletonParser, parse_skeleton, split_title
from .profiles import GenericProfile, PointJob, Profile, profile_named, strip_echo
from .result import Answer, ExtraTokens, Timings, Usage
from .router import Route, route

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
    "ExtraTokens",
    "GenericProfile",
    "LocalServerError",
    "Options",
    "PointError",
    "PointJob",
    "Profile",
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
    "profile_named",
    "route",
    "split_title",
    "stream",
    "strip_echo",
]
