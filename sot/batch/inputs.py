"""Prompt sets: FastChat question.jsonl (turns), JSONL with question|prompt, or one prompt per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigurationError


@dataclass(frozen=True)
class Prompt:
    id: str
    question: str
    category: str | None = None


def _from_row(row: dict[str, object], number: int, turn: int) -> Prompt:
    text: object = row.get("question") or row.get("prompt")
    turns = row.get("turns")
    if text is None and isinstance(turns, list) and turns:
        if turn >= len(turns):
            raise ConfigurationError(f"row {number}: has no turn {turn + 1}")
        text = turns[turn]
    if not isinstance(text, str) or not text.strip():
        raise ConfigurationError(f"row {number}: needs question, prompt or turns")
    ident = row.get("id", row.get("question_id", number))
    category = row.get("category")
    return Prompt(str(ident), text.strip(), str(category) if category is not None else None)


def read_prompts(path: str | Path, *, turn: int = 0) -> list[Prompt]:
    """All prompts of a set; ids must be unique (they key the results)."""
    source = Path(path)
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {source}: {exc.strerror}") from None
    prompts = list(_parse(lines, source.suffix.lower() in (".jsonl", ".json", ".ndjson"), turn))
    if not prompts:
        raise ConfigurationError(f"{source} has no prompts: nothing to answer")
    seen: set[str] = set()
    for prompt in prompts:
        if prompt.id in seen:
            raise ConfigurationError(f"duplicate id {prompt.id!r} in {source}")
        seen.add(prompt.id)
    return prompts


def _parse(lines: list[str], jsonl: bool, turn: int) -> Iterator[Prompt]:
    number = 0
    for line in lines:
        if not line.strip():
            continue
        number += 1
        if jsonl:
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigurationError(f"row {number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ConfigurationError(f"row {number}: needs a JSON object with question, prompt or turns")
            yield _from_row(row, number, turn)
        else:
            yield Prompt(str(number), line.strip())
