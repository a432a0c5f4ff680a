"""Features of a prompt for the learned router: static embeddings, the rules' cues, structure.

The embeddings are WordLlama's 256-dimension token vectors (MIT), read by path from the files its
wheel installs (its own loader looks for the tokenizer elsewhere and then tries the network): a
mean over the whole prompt and one over its first sentence, where the request usually sits.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import constants
from ..errors import ConfigurationError
from .rules import CUES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_FIRST_SENTENCE = re.compile(r"^.*?(?:[.?!。？！](?=\s|$)|\n|$)", re.S)
_QUESTION = re.compile(r"[?？]")
_DIGIT = re.compile(r"\d")
_OPERATOR = re.compile(r"[=+*/^<>×÷√∫∑%$€]")
_FENCE = re.compile(r"```|^\s{4}\S", re.M)
_ENUMERATED = re.compile(r"^\s*(?:\d+[.)]|[a-z][.)]|[-*•])\s", re.M | re.I)
_QUOTED = re.compile(r"[\"“”«»]")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_NON_ASCII_LETTER = re.compile(r"[à-ÿÀ-ß]")

STRUCTURE = (
    "log_chars",
    "log_lines",
    "questions",
    "sentences",
    "digits",
    "operators",
    "code",
    "enumerated",
    "quoted",
    "cjk",
    "accented",
    "rules_score",
)


@dataclass(frozen=True)
class Embeddings:
    tokenizer: Any  # tokenizers.Tokenizer
    vectors: NDArray[np.float16]

    def mean(self, text: str) -> NDArray[np.float32]:
        import numpy as np

        ids = self.tokenizer.encode(text, add_special_tokens=False).ids[: constants.ROUTER_MAX_TOKENS]
        if not ids:
            return np.zeros(self.vectors.shape[1], dtype=np.float32)
        pooled = self.vectors[ids].astype(np.float32).mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        unit: NDArray[np.float32] = pooled / norm if norm > 0 else pooled
        return unit


def _wordllama_dir() -> Path:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise ConfigurationError(
            "the learned router needs the wordllama package: pip install wordllama, or set 'router' to rules",
            options=("router",),
        )
    return Path(spec.origin).parent


def load_embeddings() -> Embeddings:
    """Read the packaged tokenizer and token vectors; nothing is fetched."""
    import numpy as np
    from tokenizers import Tokenizer

    root = _wordllama_dir()
    tokenizer_file = root / "tokenizers" / constants.ROUTER_TOKENIZER_FILE
    weights_file = root / "weights" / constants.ROUTER_WEIGHTS_FILE
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        with weights_file.open("rb") as f:
            header_len = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(header_len))
        (tensor,) = [v for k, v in header.items() if k != "__metadata__"]
        start, end = tensor["data_offsets"]
        raw = np.memmap(weights_file, dtype=np.uint8, mode="r", offset=8 + header_len + start, shape=(end - start,))
    except (OSError, ValueError, KeyError, Exception) as exc:
        raise ConfigurationError(
            f"cannot read wordllama's packaged files ({type(exc).__name__}): reinstall wordllama, "
            "or set 'router' to rules",
            options=("router",),
        ) from None
    vectors = np.frombuffer(raw, dtype=np.float16).reshape(tensor["shape"])
    return Embeddings(tokenizer, vectors)


def first_sentence(text: str) -> str:
    match = _FIRST_SENTENCE.match(text.strip())
    return match.group(0) if match else text


def cue_names() -> tuple[str, ...]:
    return tuple(f"cue:{cue.name}" for cue in CUES)


def feature_names(dim: int) -> tuple[str, ...]:
    return tuple(f"emb:{i}" for i in range(dim)) + tuple(f"head:{i}" for i in range(dim)) + cue_names() + STRUCTURE


def lexical(text: str) -> tuple[list[float], tuple[str, ...]]:
    """The rules' cues (each as 0/1) and structural counts, squashed to similar ranges."""
    matched = [cue for cue in CUES if cue.pattern.search(text)]
    names = {cue.name for cue in matched}
    cues = [1.0 if cue.name in names else 0.0 for cue in CUES]
    score = sum(cue.weight for cue in matched)
    sentences = len(re.findall(r"[.?!。？！](?:\s|$)", text)) + 1
    structure = [
        math.log1p(len(text)) / 8,
        math.log1p(text.count("\n")) / 3,
        min(len(_QUESTION.findall(text)), 6) / 3,
        min(sentences, 12) / 6,
        min(len(_DIGIT.findall(text)), 30) / 15,
        min(len(_OPERATOR.findall(text)), 10) / 5,
        1.0 if _FENCE.search(text) else 0.0,
        min(len(_ENUMERATED.findall(text)), 6) / 3,
        min(len(_QUOTED.findall(text)), 4) / 2,
        1.0 if _CJK.search(text) else 0.0,
        1.0 if _NON_ASCII_LETTER.search(text) else 0.0,
        max(-8.0, min(8.0, score)) / 4,
    ]
    return cues + structure, tuple(cue.name for cue in matched)


def vector(text: str, embeddings: Embeddings) -> tuple[NDArray[np.float32], tuple[str, ...]]:
    import numpy as np

    text = text[: constants.ROUTER_MAX_CHARS]
    extra, matched = lexical(text)
    parts = [embeddings.mean(text), embeddings.mean(first_sentence(text)), np.asarray(extra, dtype=np.float32)]
    return np.concatenate(parts), matched
