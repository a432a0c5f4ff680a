"""Pairwise LLM-as-judge of SoT against sequential answers, each pair judged in both orders.

A verdict is ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie) on the judge's last line. When the two orders
disagree the pair counts as a tie, which cancels the judge's position bias. Results are appended
to their own JSONL with the same crash-safe writer as batch runs, and resume skips judged ids.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ..backends.base import Backend, ChatRequest
from ..calls import Caller
from ..errors import SotError
from ..options import RetryPolicy
from ..templates import Message, Prompts
from .records import open_results, read_records

JUDGE_TEMPLATE = "judge.j2"
_VERDICT = re.compile(r"\[\[([ABC])\]\]")


def parse_verdict(text: str) -> str | None:
    found = _VERDICT.findall(text)
    return found[-1] if found else None


def pairs_from(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(SoT record, sequential record) for every id answered without error in both modes."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        if record.get("error") is None:
            by_mode[str(record["mode"])][str(record["id"])] = record
    return [(by_mode["sot"][i], by_mode["sequential"][i]) for i in by_mode["sot"] if i in by_mode["sequential"]]


class Judge:
    def __init__(self, backend: Backend, prompts: Prompts, policy: RetryPolicy | None = None) -> None:
        self.backend = backend
        self.prompts = prompts
        self.caller = Caller(backend, policy or RetryPolicy())

    async def verdict(self, question: str, answer_a: str, answer_b: str) -> str | None:
        text = self.prompts.render(JUDGE_TEMPLATE, question=question, answer_a=answer_a, answer_b=answer_b)
        request = ChatRequest([Message("user", text)], max_tokens=400, temperature=0.0)
        outcome = await self.caller.call(request, purpose="judge")
        return parse_verdict(outcome.text)

    async def judge_pair(self, sot: dict[str, Any], sequential: dict[str, Any]) -> dict[str, Any]:
        question = str(sot["question"])
        first = await self.verdict(question, sot["text"], sequential["text"])  # A = SoT
        second = await self.verdict(question, sequential["text"], sot["text"])  # A = sequential
        as_winner = {("A", 1): "sot", ("B", 1): "sequential", ("A", 2): "sequential", ("B", 2): "sot"}
        w1 = as_winner.get((first or "", 1), "tie")
        w2 = as_winner.get((second or "", 2), "tie")
        return {
            "id": sot["id"],
            "mode": "judge",
            "category": sot.get("category"),
            "sot_first": first,
            "sequential_first": second,
            "winner": w1 if w1 == w2 else "tie",
            "judge_model": self.backend.model,
            "error": None,
        }


@dataclass
class JudgeSummary:
    judged: int
    skipped: int
    failed: int


async def run_judge(
    judge: Judge, results: str | Path, out: str | Path, *, concurrency: int, resume: bool, overwrite: bool = False
) -> JudgeSummary:
    pairs = pairs_from(read_records(results))
    writer, done = open_results(out, resume=resume, overwrite=overwrite)
    todo = [(s, q) for s, q in pairs if (str(s["id"]), "judge") not in done]
    summary = JudgeSummary(judged=0, skipped=len(pairs) - len(todo), failed=0)
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(sot: dict[str, Any], sequential: dict[str, Any]) -> None:
        async with limiter:
            try:
                record = await judge.judge_pair(sot, sequential)
            except SotError as exc:
                record = {"id": sot["id"], "mode": "judge", "category": sot.get("category"), "error": str(exc)}
                summary.failed += 1
        writer.append(record)
        summary.judged += 1

    try:
        async with anyio.create_task_group() as tg:
            for sot, sequential in todo:
                tg.start_soon(one, sot, sequential)
    finally:
        writer.close()
    return summary


def win_rates(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per category and overall: SoT wins, losses, ties, and net win rate (wins - losses) / judged."""
    table: dict[str, dict[str, float]] = defaultdict(lambda: {"judged": 0, "sot": 0, "sequential": 0, "tie": 0})
    for record in records:
        if record.get("error") is not None or record.get("mode") != "judge":
            continue
        for category in (str(record.get("category") or "uncategorized"), "overall"):
            row = table[category]
            row["judged"] += 1
            row[str(record["winner"])] += 1
    for row in table.values():
        row["net_win_rate"] = (row["sot"] - row["sequential"]) / row["judged"] if row["judged"] else 0.0
    return dict(sorted(table.items(), key=lambda item: (item[0] == "overall", item[0])))
