"""A quality store's files: how they are named and read, for harness.py and standin.py alike.

answers_WRITER.jsonl          the answer model's stand-ins (plans, sections, sequential answers)
pending.jsonl                 the answer model's prompts still to answer
results.jsonl                 whole answers, `sot batch` records
pending_judge_PANEL.jsonl     a judge panel's prompts still to answer
judge_replies_PANELn.jsonl    the panel's judges (PANEL is lower-case letters, n a number)
judged_PANEL.jsonl            the panel's verdicts, `sot judge` records
share_WRITER.jsonl, brief_WRITER.md   what each stand-in was given
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PANEL = re.compile(r"[a-z]+")
_PENDING_JUDGE = re.compile(rf"pending_judge_({PANEL.pattern})\.jsonl")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A JSONL file's rows ([] if it does not exist); a row that is no JSON object stops the run, named."""
    rows = []
    for number, line in enumerate(path.read_text().splitlines() if path.exists() else [], 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path}, line {number}: not JSON ({exc.msg}); rewrite that row") from None
            if not isinstance(rows[-1], dict):
                raise SystemExit(f"{path}, line {number}: not a JSON object; rewrite that row")
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def answer_files(store: Path) -> list[Path]:
    return sorted(store.glob("answers*.jsonl"))


def reply_files(store: Path, panel: str) -> list[Path]:
    """The panel's judges' files: judge_replies_a1.jsonl is panel a's, judge_replies_ab1.jsonl is not."""
    files = store.glob("judge_replies_*.jsonl")
    return sorted(p for p in files if is_judge(panel, p.name.removeprefix("judge_replies_").removesuffix(".jsonl")))


def judge_panel(pending: Path) -> str | None:
    """The panel whose prompts a pending file holds (None: the answer model's)."""
    found = _PENDING_JUDGE.fullmatch(pending.name)
    return found.group(1) if found else None


def is_judge(panel: str, writer: str) -> bool:
    """Whether `writer` is a judge of `panel`: the panel's letters and a number (a1, a2...)."""
    return re.fullmatch(rf"{re.escape(panel)}[0-9]+", writer) is not None


def writer_file(store: Path, pending: Path, writer: str) -> Path:
    """Where a writer handed prompts from `pending` writes its answers."""
    judged = judge_panel(pending) is not None
    return store / (f"judge_replies_{writer}.jsonl" if judged else f"answers_{writer}.jsonl")


def written(files: list[Path]) -> list[dict[str, Any]]:
    """The answer rows of these files; a row without its fields, or two answers to one prompt that
    differ, stop the run, named (which one counted would otherwise be the files' order)."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, tuple[str, str]] = {}  # key: its answer, and where it was read
    for path in files:
        for number, row in enumerate(read_jsonl(path), 1):
            key, answer = row.get("key"), row.get("answer")
            here = f"{path} row {number}"
            if not isinstance(key, str) or not isinstance(answer, str):
                raise SystemExit(f'{here}: an answer needs "key" and "answer" (strings)')
            first, there = seen.setdefault(key, (answer, here))
            if first != answer:
                raise SystemExit(f"{there} and {here} answer prompt {key} differently: delete one of them")
            rows.append(row)
    return rows
