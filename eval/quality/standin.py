"""Hand the harness's pending prompts to stand-in writers: each gets a share of the prompts and a brief.

A stand-in (a person, or a helper session of a strong model) answers every prompt of its share as the
model would, each as a fresh call, and writes the answers where the harness's replay finds them:
``STORE/answers_WRITER.jsonl`` for the answer model's prompts, ``STORE/judge_replies_WRITER.jsonl`` for
a judge panel's (``pending_judge_PANEL.jsonl``; the panel's writers are named PANEL1, PANEL2...).

Prompts are dealt out question by question, so no writer gets two prompts of one question while
another writer has fewer: the sections of one answer, or a pair's two orders, come from different
calls as they would from a real model. Which kinds of prompt a run hands out, and to whom, is the
operator's choice: the measurements in eval/results took sequential answers, plans, sections and each
judge panel from writers who wrote nothing else.

    python eval/quality/standin.py --store STORE --kinds sequential --writers w1,w2,w3
    python eval/quality/standin.py --store STORE --kinds skeleton --writers p1,p2
    python eval/quality/standin.py --store STORE --kinds expand --writers s1,s2,s3,s4   (after the plans)
    python eval/quality/standin.py --store STORE --pending pending_judge_a.jsonl --writers a1,a2,a3,a4

Each writer's share is ``STORE/share_WRITER.jsonl`` and its brief, the whole instruction it is given,
``STORE/brief_WRITER.md`` (from ``standin_brief.md``); both stay with the store as the record of who
wrote what from what.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BRIEF = HERE / "standin_brief.md"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def deal(rows: list[dict[str, Any]], writers: int, seed: str) -> list[list[dict[str, Any]]]:
    """Rows dealt round-robin, question after question: a question's rows go to different writers, in a
    shuffled order, so no writer's share follows a pattern (all of one judging order, say)."""
    by_question: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_question[str(row.get("question_id", "?"))].append(row)
    shares: list[list[dict[str, Any]]] = [[] for _ in range(writers)]
    dealt, rng = 0, random.Random(seed)
    for question in sorted(by_question):
        rng.shuffle(by_question[question])
        for row in by_question[question]:
            shares[dealt % writers].append(row)
            dealt += 1
    return shares


def answers_file(store: Path, pending: Path, writer: str) -> Path:
    judged = pending.name.startswith("pending_judge_")
    return store / (f"judge_replies_{writer}.jsonl" if judged else f"answers_{writer}.jsonl")


def hand_out(store: Path, pending: Path, kinds: set[str] | None, writers: list[str], seed: int = 7) -> list[Path]:
    """Write each writer's share and brief; return the briefs' paths."""
    if not pending.is_file():
        raise SystemExit(f"--pending: no {pending} (a file name in --store, written by harness.py run or judge)")
    rows = [r for r in read_jsonl(pending) if kinds is None or r["kind"] in kinds]
    if not rows:
        raise SystemExit(f"nothing pending in {pending}" + (f" of kind {sorted(kinds)}" if kinds else ""))
    if len(writers) > len(rows):
        raise SystemExit(f"--writers: {len(writers)} writers for {len(rows)} prompt(s); give at most {len(rows)}")
    if pending.name.startswith("pending_judge_"):
        panel = pending.stem.removeprefix("pending_judge_")
        strangers = [w for w in writers if not (w.startswith(panel) and w[len(panel) :].isdigit())]
        if strangers:
            raise SystemExit(f"--writers: a judge of panel {panel} is named {panel}1, {panel}2...: not {strangers}")
    taken = [w for w in writers if answers_file(store, pending, w).exists()]
    if taken:
        raise SystemExit(f"--writers: {taken} already wrote in this store; a new share needs new writers")
    briefs = []
    for writer, share in zip(writers, deal(rows, len(writers), seed=f"{seed}:{pending.name}"), strict=True):
        share_path = store / f"share_{writer}.jsonl"
        share_path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in share))
        brief = BRIEF.read_text().format(
            share=share_path.resolve(), answers=answers_file(store, pending, writer).resolve(), writer=writer
        )
        briefs.append(store / f"brief_{writer}.md")
        briefs[-1].write_text(brief)
        print(f"{writer}: {len(share)} prompt(s), brief {briefs[-1]}")
    return briefs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--pending", default="pending.jsonl", help="the pending file, in the store")
    parser.add_argument(
        "--kinds", help="only these kinds of prompt, comma-separated: skeleton (plans), expand (sections), sequential"
    )
    parser.add_argument("--writers", required=True, help="the writers' names, comma-separated")
    parser.add_argument("--seed", type=int, default=7, help="the shuffle within each question")
    args = parser.parse_args()
    kinds = set(args.kinds.split(",")) if args.kinds else None
    writers = [w.strip() for w in args.writers.split(",") if w.strip()]
    if len(set(writers)) != len(writers) or not writers:
        raise SystemExit("--writers: give each writer once, e.g. --writers w1,w2,w3")
    hand_out(args.store, args.store / args.pending, kinds, writers, args.seed)


if __name__ == "__main__":
    main()
