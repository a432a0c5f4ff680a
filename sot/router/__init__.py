"""Routing: which questions SoT answers and which go to sequential decoding.

Three routers behind one async `route(question) -> Route`: the learned one (offline, loaded lazily; its
packages are the router extra), the rules (regular-expression cues, no load at all) and the LLM one
(asks the backend). The default, "auto", is the learned one where it is installed, else the rules.
The routers' modules are imported on first use: compiling the cue table and the feature extractors
costs start-up time that a `--mode sequential` answer never needs.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import ConfigurationError
from .decision import Route

if TYPE_CHECKING:
    from ..backends.base import Backend
    from ..calls import Caller
    from ..options import Options
    from ..templates import Prompts
    from .learned import LearnedRouter, route_learned
    from .llm import LLMRouter
    from .rules import route as route_rules

_LAZY = {
    "LearnedRouter": (".learned", "LearnedRouter"),
    "route_learned": (".learned", "route_learned"),
    "LLMRouter": (".llm", "LLMRouter"),
    "route_rules": (".rules", "route"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module, __name__), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def route(question: str, threshold: float | None = None) -> Route:
    """Decide with the default (learned) router; the first call loads its model."""
    from .learned import route_learned

    return route_learned(question, threshold)


class RulesRouter:
    """The cue-table router, behind the same async interface as the others."""

    async def route(self, question: str, caller: Caller | None = None) -> Route:
        from .rules import route as route_rules

        return route_rules(question)


if TYPE_CHECKING:
    Router: TypeAlias = LearnedRouter | RulesRouter | LLMRouter


@functools.cache
def learned_installed() -> bool:
    """Whether the learned router's packages (the router extra) are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("numpy", "tokenizers", "wordllama"))


def chosen_router(name: str) -> str:
    """The router a name stands for: "auto" is the learned one where installed, else the rules."""
    if name != "auto":
        return name
    return "learned" if learned_installed() else "rules"


def make_router(options: Options, backend: Backend | None, prompts: Prompts) -> Router:
    """The router `options.router` names; only the LLM router needs a backend."""
    if options.router == "llm":
        if backend is None:
            raise ConfigurationError(
                "the LLM router needs a backend: give 'base_url', or set 'router' to learned",
                options=("base_url", "router"),
            )
        from .llm import LLMRouter

        return LLMRouter(backend, prompts)
    if chosen_router(options.router) == "rules":
        return RulesRouter()
    from .learned import LearnedRouter

    return LearnedRouter()


__all__ = [
    "LLMRouter",
    "LearnedRouter",
    "Route",
    "RulesRouter",
    "chosen_router",
    "learned_installed",
    "make_router",
    "route",
    "route_learned",
    "route_rules",
]
