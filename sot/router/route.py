"""The router's decision."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Route:
    """A router's decision: the mode, how sure it is (0.5-1), and why."""

    mode: Literal["sot", "sequential"]
    confidence: float
    reason: str
    features: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "features": list(self.features)}
