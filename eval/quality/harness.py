"""SoT against the same model's own answer, blind, in both orders, without an API key or a GPU.

A strong model is stood in for by people (or helper sessions) who answer the exact prompts sot sends:

1. ``run``: a replay server (OpenAI-compatible, on 127.0.0.1) answers every prompt it has an answer
   for in ``STORE/answers_*.jsonl`` and records every other prompt in ``STORE/pending.jsonl``; each
   question is asked in SoT and sequential mode. Run it, have the writers answer the pending prompts
   (``STORE/answers_WRITER.jsonl``: ``key``, ``kind``, ``question_id``, ``answer``, ``writer``;
   ``eval/quality/standin.py`` deals the prompts out by kind: ``skeleton``, the plans; ``expand``, their
   sections; ``sequential``, the model's own answers), and run it again: the plans come first, then their
   sections' prompts, until every answer is whole. Whole answers go to ``STORE/results.jsonl``
   in `sot batch`'s record format, so `sot judge` can judge them with a real model too.
2. ``judge --panel a``: each question's two answers judged by `sot judge` itself (its prompt, in both
   orders, and its reading of the verdict), against the same replay: the panel's judges answer the prompts
   recorded in ``STORE/pending_judge_a.jsonl`` into ``STORE/judge_replies_a1.jsonl``, ``_a2``...; run it again
   and the panel's verdicts are in ``STORE/judged_a.jsonl``. ``eval/quality/standin.py`` deals any pending
   file out to writers, with the brief each is given.
3. ``score``: the net win rate (SoT wins - losses over judgements, a question judged in both orders by
   one panel; two orders that disagree are a tie, as in `sot judge`), by category, and the cost: each
   answer's critical path (the plan up to a section's line, and the next one's heading where the section
   waited for it, or all of the plan for a run with ``--no-pipeline``, plus that section: what must be
   written one token after another) and total tokens, against the sequential answer's. Tokens are counted
   as words and punctuation marks (no tokenizer: ratios). Stores judged before ``judge`` existed hold
   ``pairs`` (``STORE/pairs.jsonl``, blind pairs in both orders, key in ``pairs_key.jsonl``) and the
   verdicts read from them (``STORE/verdicts_PANELn.jsonl``: ``pair``, ``verdict`` A/B/C, ``judge``);
   ``score`` reads either kind (a store holding both is refused) and keeps its report in ``STORE/score.json``.

Against a real endpoint the same questions go through ``sot batch --modes sot,sequential`` and
``sot judge`` (the net win rate; the critical path needs the plan's text, which only the replay keeps).

    python eval/quality/harness.py run --store STORE --questions QUESTIONS.jsonl [--brief] [--no-pipeline]
    python eval/quality/standin.py --store STORE --kinds skeleton --writers p1,p2,p3
    python eval/quality/harness.py judge --store STORE --panel a
    python eval/quality/harness.py score --store STORE
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

import sot
from sot.profiles import FULL

sys.path.append(str(Path(__file__).resolve().parents[1]))  # eval/, for _bench_common (this file runs from eval/quality)
from _bench_common import reach_test_fakes

reach_test_fakes()
from _fakes import FakeServer, Reply, SeenRequest  # noqa: E402
from _store import PANEL, answer_files, read_jsonl, reply_files, write_jsonl, written  # noqa: E402

from sot.batch.judge import Judge, JudgeEndpoint, JudgeSummary, pairs_from, parse_verdict, run_judge  # noqa: E402
from sot.errors import SotError  # noqa: E402
from sot.options import RetryPolicy  # noqa: E402
from sot.templates import Prompts  # noqa: E402

_TOKEN = re.compile(r"\w+|[^\w\s]")
_OUTCOMES = ("sot", "sequential", "tie", "unparsed", "failed")  # a judged question's, as `sot judge` records it


def tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def key_of(messages: list[dict[str, Any]]) -> str:
    """A prompt's identity: its messages, roles and text, nothing else of the request."""
    canonical = json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class Replay:
    """The replay server's handler: stored answers, and the prompts still to answer. ``kind`` names the
    prompts where the request's own shape does not (a judge's)."""

    def __init__(self, files: list[Path], kind: str | None = None) -> None:
        self.answers = {row["key"]: row["answer"] for row in written(files)}
        self.pending: dict[str, dict[str, Any]] = {}
        self.missed: list[str] = []  # every prompt asked without an answer, repeats included
        self.kind = kind
        self._question: dict[str, str] = {}

    def __call__(self, request: SeenRequest) -> Reply:
        messages = request.body.get("messages") or []
        key = key_of(messages)
        if key in self.answers:
            return Reply(self.answers[key])
        self.missed.append(key)
        self.pending.setdefault(key, {"key": key, "kind": self.kind or request.kind, "messages": messages})
        return Reply(status=400, error_body={"error": {"message": "no answer written for this prompt yet"}})

    @contextlib.contextmanager
    def asking(self, question_id: str) -> Iterator[None]:
        """The prompts missed inside belong to this question (its id goes with them to the writers)."""
        before = len(self.missed)
        try:
            yield
        finally:
            for key in self.missed[before:]:
                self._question.setdefault(key, question_id)

    def pending_rows(self) -> list[dict[str, Any]]:
        return [row | {"question_id": self._question.get(key, "?")} for key, row in self.pending.items()]


async def _answer(client: sot.Client, row: dict[str, Any], mode: str, brief: bool) -> dict[str, Any]:
    answer = await client.ask(row["question"], mode=mode)
    pipelined = mode == "sot" and answer.pipelined
    failed = answer.failed_points or (mode == "sot" and answer.mode != "sot")
    record = {"id": row["id"], "mode": mode, "category": row["category"], "question": row["question"]}
    return record | {
        "text": answer.text,
        "points": answer.points,
        "expansions": answer.expansions,
        "pipelined": pipelined,
        # Each section also waited for the next one's heading (its critical path counts it); the harness
        # asks the generic profile, so its style decides.
        "sees_next_heading": pipelined and not brief and FULL.sees_next_heading,
        "error": "incomplete" if failed else None,
    }


async def run(store: Path, questions: Path, brief: bool, pipeline: bool) -> None:
    rows = read_jsonl(questions)
    replay = Replay(answer_files(store))
    results = []
    with FakeServer(replay, model="writer") as server:
        options: dict[str, Any] = {"model": "writer", "allow_partial": True, "max_retries": 0}
        options |= {"brief": brief, "pipeline": pipeline}
        async with sot.Client(base_url=server.url, router="rules", **options) as client:
            for row in rows:
                for mode in ("sot", "sequential"):
                    with (
                        replay.asking(str(row["id"])),
                        contextlib.suppress(sot.SotError),
                    ):  # its first prompt is pending
                        results.append(await _answer(client, row, mode, brief))
    pending = replay.pending_rows()
    write_jsonl(store / "pending.jsonl", pending)
    whole = [r for r in results if r["error"] is None]
    _forget_verdicts_on_change(store, whole)
    write_jsonl(store / "results.jsonl", whole)
    print(f"{len(whole)} of {2 * len(rows)} answers whole; {len(pending)} prompt(s) pending in {store}/pending.jsonl")


def _forget_verdicts_on_change(store: Path, whole: list[dict[str, Any]]) -> None:
    """Verdicts on answers that are no longer the store's go (`judge` gives the new ones theirs)."""
    if read_jsonl(store / "results.jsonl") == whole:
        return
    for path in sorted(store.glob("judged_*.jsonl")):
        path.unlink()
        print(f"the answers changed: removed {path} (run `judge` again)")


def stable_nonce(*texts: str) -> str:
    """A judge prompt's marker code derived from its texts: the same prompt on every run, so its recorded
    reply is found again (`sot judge` draws a random one)."""
    seed = "\0".join(texts)
    while True:
        nonce = hashlib.sha256(seed.encode()).hexdigest()[:16]
        if not any(nonce in text for text in texts):
            return nonce
        seed += "\0"


async def judge(store: Path, panel: str) -> None:
    """One panel's verdicts through `sot judge` itself: its prompts, its reading of a reply, its records
    (``STORE/judged_PANEL.jsonl``). The panel's judges answer the prompts in
    ``STORE/pending_judge_PANEL.jsonl`` into ``STORE/judge_replies_PANELn.jsonl``."""
    results = store / "results.jsonl"
    pairs = pairs_from(read_jsonl(results))
    if not pairs:
        raise SystemExit(f"{results} has no question answered whole in both modes yet: finish `run` first")
    replay = Replay(reply_files(store, panel), kind="judge")
    out = store / f"judged_{panel}.jsonl"
    with FakeServer(replay, model="judge") as server:
        backend = await JudgeEndpoint(server.url, "judge").connect()
        try:
            judge_ = Judge(backend, Prompts(), RetryPolicy(max_retries=0), nonce=stable_nonce)
            await _ask_both_orders(judge_, replay, pairs)
            summary = None
            if not replay.pending:
                summary = await run_judge(judge_, results, out, concurrency=4, resume=False, overwrite=True)
                if replay.pending:  # `sot judge` itself asked what the first pass did not: no verdicts yet
                    summary = None
        finally:
            await backend.aclose()
    if summary is None:
        out.unlink(missing_ok=True)  # verdicts on other answers, or on fewer of them: not this panel's now
    pending = replay.pending_rows()
    write_jsonl(store / f"pending_judge_{panel}.jsonl", pending)
    print(f"panel {panel}: {len(pending)} judge prompt(s) pending in {store}/pending_judge_{panel}.jsonl")
    if summary is not None:
        _report(summary, store, panel, out)


async def _ask_both_orders(judge_: Judge, replay: Replay, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Ask every pair in both orders, so that one pass records all of a panel's prompts (`sot judge` asks
    the second order only once the first has a verdict)."""
    for sot_record, sequential in pairs:
        for first, second in ((sot_record, sequential), (sequential, sot_record)):
            before = len(replay.missed)
            with replay.asking(str(sot_record["id"])):
                try:
                    await judge_.verdict(sot_record["question"], first["text"], second["text"])
                except SotError:
                    if len(replay.missed) == before:
                        raise  # not a prompt still to answer: a real failure


def _report(summary: JudgeSummary, store: Path, panel: str, out: Path) -> None:
    print(f"panel {panel}: {summary.judged} question(s) judged in both orders; verdicts in {out}")
    if summary.unparsed or summary.failed:
        unread = [
            f"{path.name} row {number}"
            for path in reply_files(store, panel)
            for number, row in enumerate(read_jsonl(path), 1)
            if parse_verdict(str(row.get("answer", ""))) is None
        ]
        raise SystemExit(
            f"panel {panel}: {summary.unparsed} question(s) without a readable verdict, {summary.failed} failed "
            f"(see {out}); a reply must end with [[A]], [[B]] or [[C]] alone on its last line: "
            f"have its judge rewrite {', '.join(unread) or 'it'}"
        )


def pairs(store: Path, seed: int) -> None:
    by_id: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in read_jsonl(store / "results.jsonl"):
        by_id[record["id"]][record["mode"]] = record
    shown, key = [], []
    for qid_, modes in sorted(by_id.items()):
        if set(modes) != {"sot", "sequential"}:
            continue
        for first, second in (("sot", "sequential"), ("sequential", "sot")):
            question = modes["sot"]["question"]
            shown.append({"question": question, "A": modes[first]["text"], "B": modes[second]["text"]})
            key.append({"id": qid_, "category": modes["sot"]["category"], "A": first, "B": second})
    shuffled = list(range(len(shown)))
    random.Random(seed).shuffle(shuffled)  # judges see no pattern in which order comes first
    write_jsonl(store / "pairs.jsonl", [{"pair": f"p{n:03d}"} | shown[i] for n, i in enumerate(shuffled)])
    write_jsonl(store / "pairs_key.jsonl", [{"pair": f"p{n:03d}"} | key[i] for n, i in enumerate(shuffled)])
    print(f"{len(shown)} pairs in {store}/pairs.jsonl")


def _outcome(first: str, second: str) -> str:
    return first if first == second else "tie"


def score(store: Path) -> dict[str, Any]:
    read_from_pairs, judged = sorted(store.glob("verdicts_*.jsonl")), sorted(store.glob("judged_*.jsonl"))
    if read_from_pairs and judged:
        raise SystemExit(
            f"{store} holds verdicts read from blind pairs (verdicts_*) and from `sot judge` (judged_*): "
            "a store is judged one way; move one kind to a store of its own"
        )
    outcomes = _pair_outcomes(store, read_from_pairs) if read_from_pairs else _judged_outcomes(judged)
    report: dict[str, Any] = {"by_category": {}, "cost": cost(store)}
    every = [o for os_ in outcomes.values() for o in os_]
    for name, found in [("all", every), *sorted(outcomes.items())]:
        wins, losses = found.count("sot"), found.count("sequential")
        unread, failed = found.count("unparsed"), found.count("failed")
        judgements = len(found) - unread - failed  # a question judged in both orders by one panel
        report["by_category"][name] = (
            {
                "judgements": judgements,
                "sot": wins,
                "sequential": losses,
                "tie": found.count("tie"),
                "net_win_rate": round((wins - losses) / judgements, 3) if judgements else None,
            }
            | ({"unparsed": unread} if unread else {})
            | ({"failed": failed} if failed else {})
        )
    print(json.dumps(report, indent=2))
    return report


def _pair_outcomes(store: Path, files: list[Path]) -> dict[str, list[str]]:
    """Outcome per category from verdicts on blind pairs (each file one judge, one order per question)."""
    key = {row["pair"]: row for row in read_jsonl(store / "pairs_key.jsonl")}
    by_judge: dict[str, dict[str, str]] = defaultdict(dict)
    for path in files:
        panel = path.stem.removeprefix("verdicts_").rstrip("0123456789")  # verdicts_a1 and _a2: panel a
        for row in read_jsonl(path):
            pair = key[row["pair"]]
            winner = {"A": pair["A"], "B": pair["B"]}.get(row["verdict"], "tie")
            by_judge[f"{panel}:{pair['id']}"][pair["A"]] = winner  # keyed by which answer came first
    outcomes: dict[str, list[str]] = defaultdict(list)
    categories = {row["id"]: row["category"] for row in key.values()}
    for judged, orders in by_judge.items():
        if len(orders) == 2:
            outcomes[categories[judged.split(":")[1]]].append(_outcome(orders["sot"], orders["sequential"]))
    return outcomes


def _judged_outcomes(files: list[Path]) -> dict[str, list[str]]:
    """Outcome per category from `sot judge` records, a failed call's as "failed", as `sot judge` names them."""
    outcomes: dict[str, list[str]] = defaultdict(list)
    for path in files:
        for record in read_jsonl(path):
            winner = record.get("winner") if record.get("error") is None else "failed"
            category = str(record.get("category") or "uncategorized")
            outcomes[category].append(winner if winner in _OUTCOMES else "unparsed")
    return outcomes


def cost(store: Path) -> dict[str, Any]:
    """Critical path and total tokens of each SoT answer, over its sequential answer's tokens."""
    answers = {row["key"]: row for row in written(answer_files(store))}
    records = read_jsonl(store / "results.jsonl")
    sequential = {r["id"]: tokens(r["text"]) for r in records if r["mode"] == "sequential"}
    plans = {row["question_id"]: row["answer"] for row in answers.values() if row.get("kind") == "skeleton"}
    paths, totals = [], []
    sot_tokens = [tokens(r["text"]) for r in records if r["mode"] == "sot"]
    for record in (r for r in records if r["mode"] == "sot" and r["id"] in sequential and r["id"] in plans):
        plan = plans[record["id"]]
        upto = [_waited_for(plan, record, i) for i in range(len(record["expansions"]))]
        path = max(upto[i] + tokens(body) for i, body in enumerate(record["expansions"]))
        total = tokens(plan) + sum(tokens(body) for body in record["expansions"])
        paths.append(path / sequential[record["id"]])
        totals.append(total / sequential[record["id"]])
    return {
        "answers": len(paths),
        "critical_path_over_sequential_median": round(statistics.median(paths), 3) if paths else None,
        "total_over_sequential_median": round(statistics.median(totals), 3) if totals else None,
        "sot_tokens_median": statistics.median(sot_tokens) if sot_tokens else None,
        "sequential_tokens_median": statistics.median(sequential.values()) if sequential else None,
    }


def _waited_for(plan: str, record: dict[str, Any], index: int) -> int:
    """Tokens of the plan a section waited for: up to its own line, and the next one's heading where it
    waited for that (all of the plan, for the last section, which starts as the plan ends). Sections not
    pipelined (``--no-pipeline``) waited for the whole plan; records marked ``plan_lists`` (full22's plans
    in two lists, measured and not shipped), for their description line."""
    points = record["points"]
    if not record.get("pipelined", True):
        return tokens(plan)
    if record.get("plan_lists", False):
        return _plan_described(plan, index)
    if not record.get("sees_next_heading", False):
        return _plan_upto(plan, points[index])
    if index + 1 < len(points):
        return _plan_upto(plan, points[index]) + tokens(f"{index + 2}. {points[index + 1]}:")
    return tokens(plan)


def _plan_described(plan: str, index: int) -> int:
    """Tokens of a plan in two lists up to the end of point `index`'s description line: the line in the
    second list that starts with its number (the second time that number starts a line)."""
    lines = plan.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if re.match(rf"\s*(?:\*\*)?{index + 1}[.):]", line)]
    end = starts[1] if len(starts) > 1 else len(lines) - 1
    return tokens("".join(lines[: end + 1]))


def _plan_upto(plan: str, title: str) -> int:
    """Tokens of the plan up to the end of the line that names `title` (the whole plan if none does; a
    title the parser capped is found by what it kept)."""
    lines = plan.splitlines(keepends=True)
    kept = title.removesuffix("…")
    found = next((i for i, line in enumerate(lines) if kept in " ".join(line.split())), len(lines) - 1)
    return tokens("".join(lines[: found + 1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["run", "judge", "pairs", "score"])
    parser.add_argument("--store", type=Path, required=True, help="the run's folder (a new one for a new run)")
    parser.add_argument("--questions", type=Path, help="run: the questions (JSONL: id, category, question)")
    parser.add_argument("--brief", action="store_true", help="run: the brief prompts (the paper's short points)")
    parser.add_argument("--no-pipeline", action="store_true", help="run: every section waits for the whole plan")
    parser.add_argument("--panel", default="a", help="judge: the panel, lower-case letters (its judges: a1, a2...)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.command == "run":
        if args.questions is None or not args.questions.is_file():
            parser.error(f"run needs --questions FILE (JSONL rows: id, category, question): not {args.questions}")
        anyio.run(run, args.store, args.questions, args.brief, not args.no_pipeline)
    elif args.command == "judge":
        if not PANEL.fullmatch(args.panel):
            parser.error("--panel is lower-case letters, e.g. a (its judges are a1, a2...)")
        anyio.run(judge, args.store, args.panel)
    elif args.command == "pairs":
        pairs(args.store, args.seed)
    else:
        if not any(args.store.glob("judged_*.jsonl")) and not any(args.store.glob("verdicts_*.jsonl")):
            parser.error(f"no verdicts in {args.store}: judge it first (harness.py judge --store STORE --panel a)")
        report = score(args.store)
        (args.store / "score.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
