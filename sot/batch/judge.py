"""Pairwise LLM-as-judge of SoT against sequential answers, each pair judged in both orders.

Answers are untrusted: each sits between marker lines carrying a random code made for that call
(``secrets``), so answer text cannot close its own block or open the other's, and verdict tokens
inside answers are broken up before the judge sees them. A verdict is ``[[A]]``, ``[[B]]`` or
``[[C]]`` (tie) alone on the last line of the judge's reply (only the reply is read, never the
prompt with the answers). When the two orders disagree the pair counts as a tie, which cancels the
judge's position bias; a reply without a readable verdict makes the pair ``unparsed``, counted
apart, never as a tie. Results are appended to their own JSONL with the same crash-safe writer as
batch runs, and resume skips judged ids.
"""

from __future__ import annotations

import re
import secrets
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ..backends.base import Backend, ChatRequest
from ..calls import Caller
from ..errors import ConfigurationError, SotError
from ..options import RetryPolicy
from ..templates import Message, Prompts
from .records import load_records, open_results
from .runner import describe_failure

JUDGE_TEMPLATE = "judge.j2"
_VERDICT = re.compile(r"\[\[([ABC])\]\]")


def parse_verdict(reply: str) -> str | None:
    """The verdict alone on the reply's last non-empty line; None when it is absent or ambiguous."""
    lines = [line for line in reply.splitlines() if line.strip()]
    found = set(_VERDICT.findall(lines[-1])) if lines else set()
    return found.pop() if len(found) == 1 else None


def defang(text: str) -> str:
    """Untrusted text that cannot spell a verdict token ([[A]]) or a doubled bracket."""
    return str(text).replace("[[", "[ [").replace("]]", "] ]")


def fresh_nonce(*texts: str) -> str:
    """A random code for one judge prompt's markers, found in none of the texts it delimits."""
    while True:
        nonce = secrets.token_hex(8)
        if not any(nonce in text for text in texts):
            return nonce


def pairs_from(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(SoT record, sequential record) for every id answered without error in both modes."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        answered = isinstance(record.get("text"), str) and isinstance(record.get("question"), str)
        if record.get("error") is None and answered:
            by_mode[str(record["mode"])][str(record["id"])] = record
    return [(by_mode["sot"][i], by_mode["sequential"][i]) for i in by_mode["sot"] if i in by_mode["sequential"]]


class Judge:
    def __init__(self, backend: Backend, prompts: Prompts, policy: RetryPolicy | None = None) -> None:
        self.backend = backend
        self.prompts = prompts
        self.caller = Caller(backend, policy or RetryPolicy())

    async def verdict(self, question: str, answer_a: str, answer_b: str) -> str | None:
        question, answer_a, answer_b = defang(question), defang(answer_a), defang(answer_b)
        nonce = fresh_nonce(question, answer_a, answer_b)
        text = self.prompts.render(JUDGE_TEMPLATE, question=question, answer_a=answer_a, answer_b=answer_b, nonce=nonce)
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
        winner = "unparsed" if first is None or second is None else w1 if w1 == w2 else "tie"
        return {
            "id": sot["id"],
            "mode": "judge",
            "category": sot.get("category"),
            "sot_first": first,
            "sequential_first": second,
            "winner": winner,
            "judge_model": self.backend.model,
            "error": None,
        }


@dataclass
class JudgeSummary:
    pairs: int
    judged: int
    skipped: int
    failed: int = 0  # the judge call failed (an error record; re-run by --resume)
    unparsed: int = 0  # the judge answered without a readable verdict

    @property
    def all_failed(self) -> bool:
        return self.judged > 0 and self.failed + self.unparsed == self.judged


async def run_judge(
    judge: Judge, results: str | Path, out: str | Path, *, concurrency: int, resume: bool, overwrite: bool = False
) -> JudgeSummary:
    pairs = pairs_from(load_records(results).records)
    if not pairs:
        raise ConfigurationError(
            f"nothing to judge: {Path(results).name} has no id answered without error in both sot and sequential mode"
        )
    writer, done = open_results(out, resume=resume, overwrite=overwrite)
    todo = [(s, q) for s, q in pairs if (str(s["id"]), "judge") not in done]
    summary = JudgeSummary(pairs=len(pairs), judged=0, skipped=len(pairs) - len(todo))
    limiter = anyio.CapacityLimiter(concurrency)
    fatal: list[SotError] = []

    async def one(sot: dict[str, Any], sequential: dict[str, Any], scope: anyio.CancelScope) -> None:
        async with limiter:
            try:
                record = await judge.judge_pair(sot, sequential)
            except Exception as exc:
                error_type, message = describe_failure(exc)
                record = {
                    "id": sot["id"],
                    "mode": "judge",
                    "category": sot.get("category"),
                    "error": message,
                    "error_type": error_type,
                }
        try:
            await writer.append(record)
        except SotError as exc:  # the judgements file itself failed (a full disk): stop the run
            fatal.append(exc)
            scope.cancel()
            return
        summary.judged += 1
        summary.failed += record["error"] is not None
        summary.unparsed += record.get("winner") == "unparsed"

    try:
        async with anyio.create_task_group() as tg:
            for sot, sequential in todo:
                tg.start_soon(one, sot, sequential, tg.cancel_scope)
    finally:
        writer.close()
    if fatal:
        raise fatal[0]
    return summary


def win_rates(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per category and overall: SoT wins, losses, ties, unparsed, and net win rate (wins - losses) / judged.

    ``judged`` counts pairs with a verdict in both orders; unparsed pairs are counted apart.
    """
    columns = ("judged", "sot", "sequential", "tie", "unparsed")
    table: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(columns, 0))
    for record in records:
        winner = record.get("winner")
        if record.get("error") is not None or record.get("mode") != "judge" or winner not in columns[1:]:
            continue
        for category in (str(record.get("category") or "uncategorized"), "overall"):
            row = table[category]
            row["judged"] += winner != "unparsed"
            row[str(winner)] += 1
    for row in table.values():
        row["net_win_rate"] = (row["sot"] - row["sequential"]) / row["judged"] if row["judged"] else 0.0
    return dict(sorted(table.items(), key=lambda item: (item[0] == "overall", item[0])))
