"""The default router: logistic regression over embeddings, the rules' cues and structure.

The model is plain numbers in router_model.json (weights, a Platt calibration and the decision
threshold), written by eval/router/train.py; at run time it needs only numpy and WordLlama's
packaged files. Everything loads once, on first use or in the background (`preload`), so
importing sot stays fast.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Literal

from .. import constants
from ..errors import ConfigurationError
from . import _features
from .decision import Route

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ..calls import Caller

log = logging.getLogger("sot.router.learned")
_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True)
class Model:
    weights: NDArray[np.float32]
    bias: float
    platt_a: float
    platt_b: float
    threshold: float
    embeddings: _features.Embeddings

    def p_sot(self, features: NDArray[np.float32]) -> float:
        margin = float(features @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, self.platt_a * margin + self.platt_b))))


def _read_model() -> Model:
    import numpy as np

    try:
        raw = resources.files("sot.router").joinpath(constants.ROUTER_MODEL_FILE).read_text(encoding="utf-8")
        spec = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"cannot read the router model ({type(exc).__name__}): reinstall sot-llm, or set 'router' to rules",
            options=("router",),
        ) from None
    embeddings = _features.load_embeddings()
    weights = np.asarray(spec["weights"], dtype=np.float32)
    expected = len(_features.feature_names(embeddings.vectors.shape[1]))
    if weights.shape != (expected,):
        raise ConfigurationError("the router model does not match this version: re-run eval/router/train.py")
    return Model(
        weights,
        float(spec["bias"]),
        float(spec["platt_a"]),
        float(spec["platt_b"]),
        float(spec["threshold"]),
        embeddings,
    )


_lock = threading.Lock()
_model: Model | None = None


def model() -> Model:
    """The shipped model, loaded once per process (thread-safe)."""
    global _model
    with _lock:
        if _model is None:
            _model = _read_model()
        return _model


def preload() -> None:
    """Load the model on a daemon thread so that it is ready when the first prompt arrives."""
    if _model is not None:
        return

    def load() -> None:
        try:
            model()
        except ConfigurationError as exc:  # raised again, to the caller, on first use
            log.debug("router preload failed: %s", exc)

    threading.Thread(target=load, name="sot-router-load", daemon=True).start()


def route_learned(question: str, threshold: float | None = None) -> Route:
    """Decide with the learned model; `threshold` on P(SoT-suitable) overrides the shipped one."""
    if len(_WORD_CHAR.findall(question[:200])) < 3:
        return Route("sequential", 1.0, "empty or one-word prompt: nothing to outline", ())
    m = model()
    features, cues = _features.vector(question, m.embeddings)
    p = m.p_sot(features)
    cut = m.threshold if threshold is None else threshold
    mode: Literal["sot", "sequential"] = "sot" if p >= cut else "sequential"
    confidence = round(p if mode == "sot" else 1.0 - p, 3)
    what = "an answer of independent points" if mode == "sot" else "needs sequential thought"
    shown = f"; cues {', '.join(cues[:3])}" if cues else ""
    reason = f"{what} (learned: P(SoT-suitable) {p:.2f} {'>=' if mode == 'sot' else '<'} {cut:.2f}{shown})"
    return Route(mode, confidence, reason, cues)


class LearnedRouter:
    """The learned router behind the async interface the orchestrator calls."""

    def __init__(self, threshold: float | None = None, *, background: bool = True) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ConfigurationError(f"router threshold must be between 0 and 1, not {threshold}")
        self.threshold = threshold
        if background:
            preload()

    async def route(self, question: str, caller: Caller | None = None) -> Route:
        if _model is None:  # the first call waits for the load without blocking the event loop
            import anyio.to_thread

            await anyio.to_thread.run_sync(model)
        return route_learned(question, self.threshold)
