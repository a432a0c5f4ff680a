"""The router's decision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..result import CallRecord


@dataclass(frozen=True)
class Route:
    """A router's decision: the mode, how sure it is (0.5-1), and why."""

    mode: Literal["sot", "sequential"]
    confidence: float
    reason: str
    features: tuple[str, ...] = ()
    # Model calls the router made (the LLM router's): they belong to the answer's calls and usage.
    calls: tuple[CallRecord, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "confidence": self.confidence,
            "reason": self.reason,
            "features": list(self.features),
        }
