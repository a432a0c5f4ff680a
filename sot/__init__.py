"""sot: Skeleton-of-Thought orchestration for faster LLM answers.

Every public name is imported on first use (PEP 562), so ``import sot`` and a command that needs a few
of them pay only for those: start-up is most of a short command's time.
"""

import typing as _typing
from importlib import import_module as _import_module
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

if _typing.TYPE_CHECKING:
    from . import events as events
    from ._shape import SkeletonShape as SkeletonShape
    from .client import Client as Client
    from .client import ask as ask
    from .client import stream as stream
    from .errors import AuthenticationError as AuthenticationError
    from .errors import BackendConnectionError as BackendConnectionError
    from .errors import BackendError as BackendError
    from .errors import BackendTimeoutError as BackendTimeoutError
    from .errors import BadRequestError as BadRequestError
    from .errors import ConfigurationError as ConfigurationError
    from .errors import ConflictError as ConflictError
    from .errors import ContextLengthError as ContextLengthError
    from .errors import LocalServerError as LocalServerError
    from .errors import PointError as PointError
    from .errors import ProtocolError as ProtocolError
    from .errors import RateLimitError as RateLimitError
    from .errors import RequestTimeoutError as RequestTimeoutError
    from .errors import ServerError as ServerError
    from .errors import SkeletonError as SkeletonError
    from .errors import SotError as SotError
    from .errors import TemplateError as TemplateError
    from .options import Options as Options
    from .outline import SkeletonParser as SkeletonParser
    from .outline import parse_skeleton as parse_skeleton
    from .outline import split_title as split_title
    from .profiles import GenericProfile as GenericProfile
    from .profiles import PointJob as PointJob
    from .profiles import Profile as Profile
    from .profiles import profile_named as profile_named
    from .profiles import strip_echo as strip_echo
    from .result import Answer as Answer
    from .result import ExtraTokens as ExtraTokens
    from .result import Timings as Timings
    from .result import Usage as Usage
    from .router import Route as Route
    from .router import route as route

# Each public name and the module that defines it, imported on first use (the type checker reads the
# imports above; a test keeps the two equal).
_MODULE_OF = {
    "SkeletonShape": "._shape",
    "Client": ".client",
    "ask": ".client",
    "stream": ".client",
    "AuthenticationError": ".errors",
    "BackendConnectionError": ".errors",
    "BackendError": ".errors",
    "BackendTimeoutError": ".errors",
    "BadRequestError": ".errors",
    "ConfigurationError": ".errors",
    "ConflictError": ".errors",
    "ContextLengthError": ".errors",
    "LocalServerError": ".errors",
    "PointError": ".errors",
    "ProtocolError": ".errors",
    "RateLimitError": ".errors",
    "RequestTimeoutError": ".errors",
    "ServerError": ".errors",
    "SkeletonError": ".errors",
    "SotError": ".errors",
    "TemplateError": ".errors",
    "Options": ".options",
    "SkeletonParser": ".outline",
    "parse_skeleton": ".outline",
    "split_title": ".outline",
    "GenericProfile": ".profiles",
    "PointJob": ".profiles",
    "Profile": ".profiles",
    "profile_named": ".profiles",
    "strip_echo": ".profiles",
    "Answer": ".result",
    "ExtraTokens": ".result",
    "Timings": ".result",
    "Usage": ".result",
    "Route": ".router",
    "route": ".router",
}

# A library logs; the application decides what to show (the CLI: sot/_logging.py).
_getLogger("sot").addHandler(_NullHandler())


if _typing.TYPE_CHECKING:
    __version__: str
else:  # hidden from type checkers, which would read any misspelt name as Any through it

    def __getattr__(name: str) -> _typing.Any:
        if name == "__version__":  # importlib.metadata costs tens of ms: read the version only when asked
            from importlib.metadata import PackageNotFoundError, version

            try:
                return version("sot-llm")
            except PackageNotFoundError:  # running from a source tree that was never installed
                return "0.0.0"
        if name in _MODULE_OF:
            value = getattr(_import_module(_MODULE_OF[name], __name__), name)
        elif name.isidentifier() and _find_spec(f"{__name__}.{name}") is not None:  # sot.errors, sot.events ...
            value = _import_module(f".{name}", __name__)
        else:
            raise AttributeError(f"module 'sot' has no attribute {name!r}")
        globals()[name] = value  # later lookups find it without this hook
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
