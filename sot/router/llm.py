"""An optional router that asks a model to classify, like the SoT paper's prompted router."""

from __future__ import annotations

import re
from typing import Literal

from ..backends.base import Backend, ChatRequest
from ..calls import Caller
from ..errors import SotError
from ..options import RetryPolicy
from ..templates import Message, Prompts
from .decision import Route
from .rules import route as rules_route

ROUTE_TEMPLATE = "route.j2"


class LLMRouter:
    """Asks `backend` yes/no; falls back to the rules when the reply is unclear or the call fails."""

    def __init__(self, backend: Backend, prompts: Prompts, policy: RetryPolicy | None = None) -> None:
        self.backend = backend
        self.prompts = prompts
        self.policy = policy or RetryPolicy(max_retries=1, timeout_s=30.0)

    async def route(self, question: str, caller: Caller | None = None) -> Route:
        """Ask the model; with the answer's `caller`, the call shares its clock and request limit."""
        if not question.strip():
            return rules_route(question)
        text = self.prompts.render(ROUTE_TEMPLATE, question=question)
        request = ChatRequest([Message("user", text)], max_tokens=3, temperature=0.0)
        try:
            own = (
                Caller(self.backend, self.policy, origin=caller.origin, limiter=caller.limiter)
                if caller is not None
                else Caller(self.backend, self.policy)
            )
            outcome = await own.call(request, purpose="route")
        except SotError as exc:
            fallback = rules_route(question)
            return Route(
                fallback.mode, fallback.confidence, f"LLM router failed ({exc}); {fallback.reason}", ("rules",)
            )
        word = re.findall(r"[a-z]+", outcome.text.lower())
        if word and word[0] in ("yes", "no"):
            mode: Literal["sot", "sequential"] = "sot" if word[0] == "yes" else "sequential"
            why = "independent points" if mode == "sot" else "needs sequential thought"
            return Route(mode, 0.8, f"LLM router ({self.backend.model}): {why}", ("llm",), (outcome.record,))
        fallback = rules_route(question)
        reason = f"LLM router reply unclear; {fallback.reason}"
        return Route(fallback.mode, fallback.confidence, reason, ("rules",), (outcome.record,))
