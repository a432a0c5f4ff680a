"""``sot proxy``: Skeleton-of-Thought behind an OpenAI-compatible endpoint.

Point any OpenAI client's base URL at it: chat completions are answered through the orchestrator
(the router decides per request), everything SoT cannot serve goes upstream untouched.

The server stack (Starlette, uvicorn) is the ``proxy`` extra: the names below are imported on first
use, so the proxy's settings and flags can be read without it.
"""

import typing as _typing
from importlib import import_module as _import_module

if _typing.TYPE_CHECKING:
    from .app import create_app as create_app
    from .server import BackgroundProxy as BackgroundProxy
    from .server import serve as serve
    from .settings import ProxySettings as ProxySettings

_MODULE_OF = {"create_app": ".app", "BackgroundProxy": ".server", "serve": ".server", "ProxySettings": ".settings"}

if not _typing.TYPE_CHECKING:  # hidden from type checkers, which would read any misspelt name as Any through it

    def __getattr__(name: str) -> _typing.Any:
        if name not in _MODULE_OF:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_import_module(_MODULE_OF[name], __name__), name)
        globals()[name] = value  # later lookups find it without this hook
        return value


__all__ = ["BackgroundProxy", "ProxySettings", "create_app", "serve"]
