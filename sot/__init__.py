"""sot: Skeleton-of-Thought orchestration for faster LLM answers."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path as _Path

# Installed, setuptools' package-dir puts backends/ and prompts/ inside this package. Run in place from a
# source checkout (`python -m sot` in the repo root), they sit beside it: let sot.backends and sot.prompts
# resolve there too, so a checkout behaves like the install.
_here = _Path(__file__).resolve().parent
if not (_here / "backends").is_dir() and (_here.parent / "backends" / "__init__.py").is_file():
    __path__.append(str(_here.parent))

from . import events
from .client import Client, ask, stream
from .errors import (
    AuthenticationError,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    BadRequestError,
    ConfigurationError,
    LocalServerError,
    PointError,
    ProtocolError,
    RateLimitError,
    ServerError,
    SkeletonError,
    SotError,
    TemplateError,
)
from .options import Options
from .result import Answer, Timings, Usage
from .router import Route, route
from .skeleton import SkeletonParser, parse_skeleton

try:
    __version__ = version("sot-llm")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "Answer",
    "AuthenticationError",
    "BackendConnectionError",
    "BackendError",
    "BackendTimeoutError",
    "BadRequestError",
    "Client",
    "ConfigurationError",
    "LocalServerError",
    "Options",
    "PointError",
    "ProtocolError",
    "RateLimitError",
    "Route",
    "ServerError",
    "SkeletonError",
    "SkeletonParser",
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
