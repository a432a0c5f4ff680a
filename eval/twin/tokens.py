"""Tokens without a tokenizer, and a prefix cache over them.

A token is a word of up to 8 letters or digits, or an 8-character piece of a longer one, or one
punctuation mark, each with the whitespace before it: "the" and "planning" are one token,
"management" two, "(about" two. English prose comes out at 1.25-1.45 tokens a word, a little above
Llama-3's tokenizer (about 1.2-1.3; its tokens average about 4 characters), and joining a text's
tokens gives the text back, so answers stream token by token.

The prefix cache works as vLLM's automatic prefix caching does: a prompt is cut into blocks of 16
tokens, each block named by a hash of itself and every block before it, and a new prompt skips the
prefill of its leading blocks already seen. Only whole blocks are shared, and the least recently
used blocks are forgotten past a capacity.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

_TOKEN = re.compile(r"\s*(?:\w{1,8}|[^\w\s])")


def tokenize(text: str) -> list[str]:
    """The text's tokens; ``"".join(tokenize(t))`` is `t` without its trailing whitespace."""
    return _TOKEN.findall(text)


def count(text: str) -> int:
    return len(_TOKEN.findall(text))


def message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of OpenAI's typed content."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def chat_prompt(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tokens a chat template would make of `messages`: a role marker before each turn, and the
    marker of the assistant's turn at the end (as Llama-3's template adds the generation prompt)."""
    tokens: list[str] = []
    for message in messages:
        tokens.append(f"<|{message.get('role', 'user')}|>")
        tokens.extend(tokenize(message_text(message.get("content"))))
        tokens.append("<|eot|>")
    tokens.append("<|assistant|>")
    return tokens


class PrefixCache:
    """Which prompt blocks the server has already prefilled."""

    def __init__(self, block_tokens: int = 16, capacity_blocks: int = 100_000) -> None:
        self.block_tokens = block_tokens
        self.capacity_blocks = capacity_blocks
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self.queries = 0  # prompt tokens looked up
        self.hits = 0  # of them, found

    def _hashes(self, tokens: Sequence[str]) -> list[int]:
        chained, out = 0, []
        for start in range(0, len(tokens) - self.block_tokens + 1, self.block_tokens):
            chained = hash((chained, tuple(tokens[start : start + self.block_tokens])))
            out.append(chained)
        return out

    def admit(self, tokens: Sequence[str]) -> int:
        """How many of the prompt's leading tokens were cached; the prompt's blocks are cached from now on."""
        hashes = self._hashes(tokens)
        cached_blocks = 0
        for h in hashes:
            if h not in self._blocks:
                break
            cached_blocks += 1
        for h in hashes:
            self._blocks[h] = None
            self._blocks.move_to_end(h)
        while len(self._blocks) > self.capacity_blocks:
            self._blocks.popitem(last=False)
        # A prompt wholly cached still computes its last token (vLLM does the same): that gives the logits.
        cached = min(cached_blocks * self.block_tokens, max(len(tokens) - 1, 0))
        self.queries += len(tokens)
        self.hits += cached
        return cached

    def clear(self) -> None:
        self._blocks.clear()
