"""Quality check: what a reader sees in SoT answers from the embedded local model.

For every `sot_suitable` question (vicuna80 by default, or any JSONL with `question`) it asks the
embedded backend in SoT and in sequential mode, with the CLI's defaults, and rates what the SoT
answers show:

- cut points: a skeleton point that ends inside a phrase ("... into small") or a point that carries
  on the previous one ("actionable steps ...", starting lowercase or with a connective);
- leaks: an expansion that shows the tool's own prompt (its instructions, the `[ ]` delimiters, the
  "Point:" / "Question:" labels, or a filler that answers the prompt, "The answer to your question is");
- lead-in colons: an expansion that ends on ":" (an empty "Sure, here is ...:");
- repeated points: two points of one answer that say the same;
- short answers: fewer than 3 points (a fallback to sequential counts);
- tokens: SoT vs sequential completion tokens.

The detectors are written from the defects seen in real answers, independently of the cleaner in
sot/orchestrator.py, so they measure it rather than repeat it.

    python eval/bench_quality.py [--data FILE] [--limit N] [--sequential N] [--name quality_bench] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import sot
from sot.backends.small_model._outline import DANGLING_WORDS
from sot.templates import EXPAND_SMALL, Prompts

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "vicuna80.jsonl"

# A phrase does not end on these words ("break them down into small" is cut; "... into habits" is not):
# the parser's function words, and adverbs that wait for what they modify.
_DANGLING = DANGLING_WORDS | {"just", "even", "being", "entire", "whole", "nor", "no", "per", "neither"}
_NUMBER_END = re.compile(r"(?:\d[-–]\d?|[,;]\s*\d[\d.,%]*)$")
_CONNECTIVE = re.compile(r"^(?:and|or|but|nor|so|because|which|that|who|while|then|than|as|with|to|of|for|by)\b", re.I)
_LEAK_MARKS = (
    re.compile(r"[\[\]]"),
    re.compile(r"</?(?:point|outline|question)>", re.I),
    re.compile(r"^\s*(?:point|question|outline|answer)\s*\d*\s*:", re.I | re.M),
    re.compile(r"\bexplain this point\b", re.I),
    re.compile(r"\b1\s*-\s*3 sentences\b", re.I),
    re.compile(r"\bdo not list other points\b", re.I),
    re.compile(r"\bthe answer has these parts\b", re.I),
    re.compile(r"\bthe answer to (?:your|the) question is\b", re.I),
    re.compile(
        r"\bhere is (?:the|my) (?:answer|explanation) (?:to|of|for) (?:this|the|your) (?:point|question)\b", re.I
    ),
)
_WORD = re.compile(r"[a-z0-9']+")


def cut_flags(points: list[str]) -> list[bool]:
    """For each point: does it end inside a phrase, or carry on the point before it?"""
    flags = [False] * len(points)
    for i, point in enumerate(points):
        words = _WORD.findall(point.lower())
        if not words or point.rstrip().endswith(("…", "-", ",", "(", "/", "&")) or words[-1] in _DANGLING:
            flags[i] = True
        # An aside never closed ("(E.g"), a number broken off ("even just 30-4", "; 12").
        if point.count("(") > point.count(")") or _NUMBER_END.search(point):
            flags[i] = True
        if i and (point[:1].islower() or _CONNECTIVE.match(point)):
            flags[i] = True
    return flags


def leaks(expansion: str, instructions: list[str]) -> list[str]:
    """What of the tool's own prompt an expansion shows (empty if nothing)."""
    found = [m.group(0) for pattern in _LEAK_MARKS if (m := pattern.search(expansion))]
    text = " ".join(_WORD.findall(expansion.lower()))
    for sentence in instructions:
        words = _WORD.findall(sentence.lower())
        for j in range(len(words) - 4):
            gram = " ".join(words[j : j + 5])
            if gram in text:
                found.append(gram)
                break
    return found


def repeated_pairs(points: list[str]) -> int:
    """Pairs of points that say the same (same words, or one's words inside the other's)."""
    bags = [set(_WORD.findall(p.lower())) - _DANGLING for p in points]
    count = 0
    for i in range(len(bags)):
        for j in range(i + 1, len(bags)):
            a, b = bags[i], bags[j]
            if a and b and (a == b or (min(len(a), len(b)) >= 2 and (a <= b or b <= a))):
                count += 1
    return count


def instruction_sentences() -> list[str]:
    """The fixed sentences of the expansion prompt (what an echo would repeat)."""
    # The embedded model's profile's prompt, built the one way every prompt is (its variables included).
    return [s for s in Prompts().expansion_instructions(EXPAND_SMALL) if len(s.split()) >= 5]


def score(answer: sot.Answer, instructions: list[str]) -> dict[str, Any]:
    points = answer.points if answer.mode == "sot" else []
    expansions = answer.expansions if answer.mode == "sot" else []
    cuts = cut_flags(points)
    leaked = {i: found for i, e in enumerate(expansions) if (found := leaks(e, instructions))}
    colons = [i for i, e in enumerate(expansions) if e.rstrip().endswith(":")]
    return {
        "mode": answer.mode,
        "points": points,
        "cut": [p for p, c in zip(points, cuts, strict=True) if c],
        "leaks": {str(i): v for i, v in leaked.items()},
        "lead_in_colon": colons,
        "repeated_pairs": repeated_pairs(points),
        "expansions": expansions,
        "shared_prefix_fraction": answer.shared_prefix_fraction,
        "sot_tokens": answer.usage.completion_tokens,
        "sot_s": round(answer.timings.total_s, 3),
    }


async def main(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("sot_suitable", True)][: args.limit or None]
    instructions = instruction_sentences()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"{args.name}.rows.jsonl").unlink(missing_ok=True)
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    # The CLI's defaults on the embedded backend (its sampling too), one seed per question. The
    # deadline is raised: a busy machine is slow, and slowness is not what this measures.
    options: dict[str, Any] = {"timeout": args.timeout}
    if args.base_url:  # a llama.cpp server already running the bundled model (`sot serve`)
        options.update(base_url=args.base_url, model="m", dialect="llama.cpp")
    async with sot.Client(**options) as client:
        for i, row in enumerate(rows):
            question = row.get("question") or row["prompt"]
            raw: list[str] = []  # the skeleton as the model wrote it (the last attempt)
            try:
                async with client.stream(question, mode="sot", seed=args.seed + i) as answer_events:
                    async for event in answer_events:
                        if isinstance(event, sot.events.SkeletonDelta):
                            raw.append(event.text)
                        elif isinstance(event, sot.events.SkeletonRestarted):
                            raw.clear()
                        elif isinstance(event, sot.events.AnswerDone):
                            sot_answer = event.answer
            except sot.SotError as exc:
                errors.append({"id": row.get("question_id", row.get("id", i)), "error": str(exc)})
                print(json.dumps(errors[-1]), flush=True)
                continue
            rec = {"id": row.get("question_id", row.get("id", i)), "question": question}
            rec.update(score(sot_answer, instructions))
            rec["skeleton_raw"] = "".join(raw)
            rec["sequential_tokens"] = rec["sequential_s"] = None
            if args.sequential is None or i < args.sequential:
                seq_answer = await client.ask(question, mode="sequential", seed=args.seed + i)
                rec["sequential_tokens"] = seq_answer.usage.completion_tokens
                rec["sequential_s"] = round(seq_answer.timings.total_s, 3)
            results.append(rec)
            with (Path(args.out) / f"{args.name}.rows.jsonl").open("a") as rows_file:
                rows_file.write(json.dumps(rec, ensure_ascii=False) + "\n")
            print(json.dumps({k: rec[k] for k in ("id", "points", "cut", "leaks", "lead_in_colon")}), flush=True)
    summary = summarise(results)
    summary.update(
        errors=errors, data=Path(args.data).name, seed=args.seed, machine=machine(), commit=args.label or commit()
    )
    write(Path(args.out), args.name, summary, results)


def rescore(path: Path, args: argparse.Namespace) -> None:
    """Score a saved run again with these detectors (so runs made at different times compare alike)."""
    saved = json.loads(path.read_text())
    instructions = instruction_sentences()
    for row in saved["rows"]:
        points, expansions = row["points"], row["expansions"]
        cuts = cut_flags(points)
        row["cut"] = [p for p, c in zip(points, cuts, strict=True) if c]
        row["leaks"] = {str(i): found for i, e in enumerate(expansions) if (found := leaks(e, instructions))}
        row["lead_in_colon"] = [i for i, e in enumerate(expansions) if e.rstrip().endswith(":")]
        row["repeated_pairs"] = repeated_pairs(points)
    summary = summarise(saved["rows"])
    keep = ("errors", "data", "seed", "machine", "commit")
    summary.update({k: saved[k] for k in keep})
    write(Path(args.out), args.name, summary, saved["rows"])


def write(out: Path, name: str, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps({**summary, "rows": rows}, indent=1, ensure_ascii=False))
    (out / f"{name}.md").write_text(markdown(summary, rows))
    (out / f"{name}.rows.jsonl").unlink(missing_ok=True)
    print(markdown(summary, rows))


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    points = sum(len(r["points"]) for r in rows)
    expansions = sum(len(r["expansions"]) for r in rows)
    paired = [r for r in rows if r["sequential_tokens"]]
    ratio = [r["sot_tokens"] / r["sequential_tokens"] for r in paired]
    return {
        "questions": len(rows),
        "points": points,
        "cut_point_rate": round(sum(len(r["cut"]) for r in rows) / max(points, 1), 3),
        "leak_rate": round(sum(len(r["leaks"]) for r in rows) / max(expansions, 1), 3),
        "lead_in_colon_rate": round(sum(len(r["lead_in_colon"]) for r in rows) / max(expansions, 1), 3),
        "answers_with_repeated_points": sum(1 for r in rows if r["repeated_pairs"]),
        "answers_under_3_points": sum(1 for r in rows if len(r["points"]) < 3),
        "fallbacks_to_sequential": sum(1 for r in rows if r["mode"] != "sot"),
        "median_points": statistics.median(len(r["points"]) for r in rows) if rows else 0,
        "paired_questions": len(paired),
        "median_sot_tokens": statistics.median(r["sot_tokens"] for r in paired) if paired else None,
        "median_sequential_tokens": statistics.median(r["sequential_tokens"] for r in paired) if paired else None,
        "median_token_ratio_sot_over_sequential": round(statistics.median(ratio), 3) if ratio else None,
        "median_shared_prefix_fraction": statistics.median(
            [r["shared_prefix_fraction"] for r in rows if r["shared_prefix_fraction"] is not None] or [0]
        ),
    }


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    import os

    return f"{cpu}, {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE, check=False
        )
        return out.stdout.strip()
    except OSError:
        return ""


def markdown(s: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        f"# SoT answer quality on the embedded model ({s['data']}, {s['questions']} questions)",
        "",
        f"Commit {s['commit']}, seed {s['seed']}+i, CLI defaults. Machine: {s['machine']}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| points cut mid-phrase | {s['cut_point_rate']:.1%} of {s['points']} |",
        f"| expansions leaking prompt text | {s['leak_rate']:.1%} |",
        f"| expansions ending on a lead-in colon | {s['lead_in_colon_rate']:.1%} |",
        f"| answers with repeated points | {s['answers_with_repeated_points']} |",
        f"| answers under 3 points (fallbacks: {s['fallbacks_to_sequential']}) | {s['answers_under_3_points']} |",
        f"| median points | {s['median_points']} |",
        f"| median completion tokens SoT / sequential ({s['paired_questions']} questions with both) "
        + (
            f"| {s['median_sot_tokens']} / {s['median_sequential_tokens']} "
            f"(median ratio {s['median_token_ratio_sot_over_sequential']}) |"
            if s["paired_questions"]
            else "| not measured |"
        ),
        f"| median shared prefix fraction | {s['median_shared_prefix_fraction']:.3f} |",
        f"| questions that failed (not scored) | {len(s['errors'])} |",
        "",
        "Defects found:",
        "",
    ]
    for r in rows:
        for p in r["cut"]:
            lines.append(f"- {r['id']} cut point: `{p}`")
        for i, found in r["leaks"].items():
            lines.append(f"- {r['id']} leak in point {int(i) + 1}: {found}: `{r['expansions'][int(i)][:100]}`")
        for i in r["lead_in_colon"]:
            lines.append(f"- {r['id']} lead-in colon in point {i + 1}: `{r['expansions'][i][-100:]}`")
        if r["repeated_pairs"]:
            lines.append(f"- {r['id']} repeated points: {r['points']}")
        if len(r["points"]) < 3:
            lines.append(f"- {r['id']} {len(r['points'])} point(s), mode {r['mode']}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-url", default=None, help="a running llama.cpp server with the bundled model")
    parser.add_argument("--timeout", type=float, default=600.0, help="deadline of each call attempt (s)")
    parser.add_argument("--sequential", type=int, default=None, help="answer only the first N sequentially too")
    parser.add_argument("--name", default="quality_bench")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--label", default="", help="what code was measured (default: the git commit)")
    parser.add_argument("--rescore", default=None, help="score a saved results JSON again instead of asking")
    started = time.perf_counter()
    arguments = parser.parse_args()
    if arguments.rescore:
        rescore(Path(arguments.rescore), arguments)
    else:
        anyio.run(main, arguments)
    print(f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
