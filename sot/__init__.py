"""sot: Skeleton-of-Thought orchestration for faster LLM answers.

Every public name is imported on first use (PEP 562), so ``import sot`` and a command that needs a few
of them pay only for those: start-up is most of a short command's time.
"""

from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec
from logging import NullHandler as _NullHandler
from logging import getLogger as _getLogger
from typing import TYPE_CHECKING, Any

if _find_spec(f"{__name__}.backends") is None:
    # setuptools installs the top-level backends/ and prompts/ inside the package: its source folder alone
    # (first on the path in a checkout's root) lacks them.
    raise ImportError(
        f"sot was imported from its source folder ({__path__[0]}), which lacks sot.backends: "
        "install it (pip install .) and run Python from another folder"
    )

if TYPE_CHECKING:
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

# Each public name and the module that defines it (the type checker reads the imports above).
_ERRORS = (
    "AuthenticationError BackendConnectionError BackendError BackendTimeoutError BadRequestError "
    "ConfigurationError ConflictError ContextLengthError LocalServerError PointError ProtocolError "
    "RateLimitError RequestTimeoutError ServerError SkeletonError SotError TemplateError"
)
_HOME = {
    "._shape": "SkeletonShape",
    ".client": "Client ask stream",
    ".errors": _ERRORS,
    ".options": "Options",
    ".outline": "SkeletonParser parse_skeleton split_title",
    ".profiles": "GenericProfile PointJob Profile profile_named strip_echo",
    ".result": "Answer ExtraTokens Timings Usage",
    ".router": "Route route",
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names.split()}

# A library logs; the application decides what to show (the CLI: sot/_logging.py).
_getLogger("sot").addHandler(_NullHandler())


def __getattr__(name: str) -> Any:
    if name == "events":
        return _import_module(".events", __name__)
    if name == "__version__":  # importlib.metadata costs tens of ms: read the version only when asked
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("sot-llm")
        except PackageNotFoundError:  # running from a source tree that was never installed
            return "0.0.0"
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'sot' has no attribute {name!r}")
    value = getattr(_import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = sorted([*_MODULE_OF, "__version__", "events"])
