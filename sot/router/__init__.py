"""Routing: which questions SoT answers and which go to sequential decoding.

Three routers behind one async `route(question) -> Route`: the learned one (the default, offline,
loaded lazily), the rules (regular-expression cues, no load at all) and the LLM one (asks the backend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends.base import Backend
from ..errors import ConfigurationError
from ..options import Options
from ..templates import Prompts
from .decision import Route
from .learned import LearnedRouter, route_learned
from .llm import LLMRouter
from .rules import route as route_rules

if TYPE_CHECKING:
    from ..calls import Caller


def route(question: str, threshold: float | None = None) -> Route:
    """Decide with the default (learned) router; the first call loads its model."""
    return route_learned(question, threshold)


class RulesRouter:
    """The cue-table router, behind the same async interface as the others."""

    async def route(self, question: str, caller: Caller | None = None) -> Route:
        return route_rules(question)


Router = LearnedRouter | RulesRouter | LLMRouter


def make_router(options: Options, backend: Backend | None, prompts: Prompts) -> Router:
    """The router `options.router` names; only the LLM router needs a backend."""
    if options.router == "llm":
        if backend is None:
            raise ConfigurationError("the LLM router needs a backend: give --base-url, or use --router learned")
        return LLMRouter(backend, prompts)
    if options.router == "rules":
        return RulesRouter()
    return LearnedRouter()


__all__ = [
    "LLMRouter",
    "LearnedRouter",
    "Route",
    "Router",
    "RulesRouter",
    "make_router",
    "route",
    "route_learned",
    "route_rules",
]
