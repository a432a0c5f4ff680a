"""Routing: which questions SoT answers and which go to sequential decoding."""

from __future__ import annotations

from ..backends.base import Backend
from ..options import Options
from ..templates import Prompts
from .llm import LLMRouter
from .route import Route
from .rules import route


class RulesRouter:
    """The default router, behind the same async interface as the LLM router."""

    async def route(self, question: str) -> Route:
        return route(question)


def make_router(options: Options, backend: Backend, prompts: Prompts) -> RulesRouter | LLMRouter:
    if options.router == "llm":
        return LLMRouter(backend, prompts)
    return RulesRouter()


__all__ = ["LLMRouter", "Route", "RulesRouter", "make_router", "route"]
