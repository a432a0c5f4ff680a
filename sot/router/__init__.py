"""Routing: which questions SoT answers and which go to sequential decoding."""

from __future__ import annotations

from typing import Any

from ..backends.base import Backend
from ..options import Options


def make_router(options: Options, backend: Backend) -> Any:
    """No router yet: auto means SoT."""
    return None
