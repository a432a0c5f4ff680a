"""Hand the harness's pending prompts to stand-in writers: each gets a share of the prompts and a brief.

A stand-in (a person, or a helper session of a strong model) answers every prompt of its share as the
model would, each as a fresh call, and writes the answers where the harness's replay finds them:
``STORE/answers_WRITER.jsonl`` for the answer model's prompts, ``STORE/judge_replies_WRITER.jsonl`` for
a judge panel's (``pending_judge_PANEL.jsonl``; the panel's writers are named PANEL1, PANEL2...).

Prompts are dealt out question by question, to at least as many writers as a question has prompts, so
the sections of one answer, or a pair's two orders, come from different calls as they would from a real
model. A prompt in a writer's share is that writer's until its answers file exists; delete the share
of a writer who will not answer to hand its prompts out again.

Which kinds of prompt a run hands out, and to whom, is the operator's choice: the measurements in
eval/results took sequential answers, plans, sections and each judge panel from writers who wrote
nothing else.

    python eval/quality/standin.py --store STORE --kinds sequential --writers w1,w2,w3
    python eval/quality/standin.py --store STORE --kinds skeleton --writers p1,p2
    python eval/quality/standin.py --store STORE --kinds expand --writers s1,...,s8   (after the plans;
        as many writers as the longest plan has sections)
    python eval/quality/standin.py --store STORE --pending pending_judge_a.jsonl --writers a1,a2,a3,a4

Each writer's share is ``STORE/share_WRITER.jsonl`` and its brief, the whole instruction it is given,
``STORE/brief_WRITER.md`` (from ``standin_brief.md``); both stay with the store as the record of who
wrote what from what.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _store import answer_files, is_judge, judge_panel, read_jsonl, reply_files, write_jsonl, writer_file, written

HERE = Path(__file__).resolve().parent
BRIEF = HERE / "standin_brief.md"


def deal(rows: list[dict[str, Any]], writers: int, seed: str) -> list[list[dict[str, Any]]]:
    """Rows dealt round-robin, question after question: with at least as many writers as a question has
    rows, they go to different writers. Each question's rows are shuffled first, so no writer's share
    follows a pattern (all of one judging order, say)."""
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


def unanswered(store: Path, pending: Path, kinds: set[str] | None) -> list[dict[str, Any]]:
    """The pending file's prompts of these kinds that no file of the store answers and no writer holds."""
    if not pending.is_file():
        raise SystemExit(f"--pending: no {pending} (a file name in --store, written by harness.py run or judge)")
    rows = read_jsonl(pending)
    present = {str(r.get("kind")) for r in rows}
    if kinds is not None and not kinds & present:
        raise SystemExit(f"--kinds: {pending} holds {sorted(present) or 'nothing'}, not {sorted(kinds)}")
    panel = judge_panel(pending)
    answered = written(answer_files(store) if panel is None else reply_files(store, panel))
    taken = {row["key"] for row in answered} | _held(store, pending)
    left = [r for r in rows if (kinds is None or r["kind"] in kinds) and r["key"] not in taken]
    if not left:
        raise SystemExit(f"nothing left to answer in {pending}: every prompt is answered or in a writer's share")
    return left


def _held(store: Path, pending: Path) -> set[str]:
    """The prompts in the shares of this pending file's writers (its panel's judges, or the answer model's
    stand-ins) who have not written their answers file yet."""
    panel = judge_panel(pending)
    held: set[str] = set()
    for share in sorted(store.glob("share_*.jsonl")):
        writer, rows = share.stem.removeprefix("share_"), read_jsonl(share)
        ours = is_judge(panel, writer) if panel is not None else all(r.get("kind") != "judge" for r in rows)
        if ours and not writer_file(store, pending, writer).exists():
            held |= {row["key"] for row in rows}
    return held


def check_writers(store: Path, pending: Path, rows: list[dict[str, Any]], writers: list[str]) -> None:
    """Writers that fit: named for their panel, new to the store, enough for each question's prompts to
    come from different calls, and no more than there are prompts."""
    panel = judge_panel(pending)
    strangers = [w for w in writers if panel is not None and not is_judge(panel, w)]
    if strangers:
        raise SystemExit(f"--writers: a judge of panel {panel} is named {panel}1, {panel}2...: not {strangers}")
    taken = [w for w in writers if any(p.exists() for p in _files_of(store, pending, w))]
    if taken:
        raise SystemExit(f"--writers: {taken} already have a share or answers in this store; give new names")
    most = max(Counter(str(r.get("question_id", "?")) for r in rows).values())
    if not most <= len(writers) <= len(rows):
        raise SystemExit(
            f"--writers: give {most} to {len(rows)}: a question has {most} prompt(s), each for a different writer"
        )


def _files_of(store: Path, pending: Path, writer: str) -> list[Path]:
    return [store / f"share_{writer}.jsonl", store / f"brief_{writer}.md", writer_file(store, pending, writer)]


def scratch(store: Path, writer: str) -> Path:
    """A folder of the writer's own: writers of different stores share names (s1, a1...) and may run at once,
    and stores may share a name (full52 in two places)."""
    where = store.resolve()
    digest = hashlib.sha256(str(where).encode()).hexdigest()[:8]
    return Path(tempfile.gettempdir()) / "sot_standin" / f"{where.name}-{digest}_{writer}"


def hand_out(store: Path, pending: Path, kinds: set[str] | None, writers: list[str], seed: int = 7) -> list[Path]:
    """Write each writer's share and brief; return the briefs' paths."""
    rows = unanswered(store, pending, kinds)
    check_writers(store, pending, rows, writers)
    briefs = []
    for writer, share in zip(writers, deal(rows, len(writers), seed=f"{seed}:{pending.name}"), strict=True):
        share_path, brief_path, answers = _files_of(store, pending, writer)
        write_jsonl(share_path, share)
        brief_path.write_text(
            BRIEF.read_text().format(
                share=share_path.resolve(), answers=answers.resolve(), writer=writer, scratch=scratch(store, writer)
            )
        )
        briefs.append(brief_path)
        print(f"{writer}: {len(share)} prompt(s), brief {brief_path}")
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
