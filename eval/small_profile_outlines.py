"""The bundled model's profile keeps the points it kept before its rules moved behind the profile seam.

`record` asks the embedded model (SmolLM2-135M, its profile's grammar, temperature 0) for the outline of
every outside question (eval/prompts/quality_outside_*.jsonl) and stores the raw text. `compare` parses
each stored outline with the small profile's reader and with the parser of an older checkout (run in a
child process from that checkout, so the two never share a module), and writes the points of both and
every difference. `--check` (no model, no older checkout) re-parses the stored outlines and fails where
the profile's points changed: a rule moved or pruned shows here.

    python eval/small_profile_outlines.py record
    git worktree add /tmp/sot-before 3d438b8
    python eval/small_profile_outlines.py compare --before /tmp/sot-before
    python eval/small_profile_outlines.py check
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from sot import SkeletonShape, constants
from sot.backends.base import ChatRequest, Constraint
from sot.backends.local import LocalBackend, LocalConfig
from sot.backends.small_model import SmallModelProfile
from sot.calls import Caller
from sot.options import RetryPolicy
from sot.templates import Prompts

HERE = Path(__file__).resolve().parent
STORE = HERE / "results" / "small_profile" / "outlines.jsonl"
SUMMARY = HERE / "results" / "small_profile.md"
PROFILE = SmallModelProfile()
SHAPE = SkeletonShape(max_points=constants.DEFAULT_MAX_POINTS, kept_points=PROFILE.kept_points(10))
# The parser of an older checkout, as its orchestrator ran it for the embedded model.
_BEFORE = """
import json, sys
from sot import SkeletonShape
from sot.skeleton import SkeletonParser
shape = SkeletonShape(max_points=10, kept_points=5)
for line in sys.stdin:
    row = json.loads(line)
    parser = SkeletonParser(shape=shape, strict=True, question=row["question"])
    parser.feed(row["raw"])
    parser.finish()
    print(json.dumps(parser.points))
"""


def questions() -> list[dict[str, str]]:
    rows = []
    for path in sorted((HERE / "prompts").glob("quality_outside_*.jsonl")):
        name = path.stem.removeprefix("quality_outside_").upper()
        rows += [{"set": name, "question": json.loads(line)["question"]} for line in path.read_text().splitlines()]
    return rows


def points_now(row: dict[str, Any]) -> list[str]:
    reader = PROFILE.outline_reader(SHAPE, row["question"])
    reader.feed(row["raw"])
    reader.finish()
    return list(reader.points)


async def _outline(local: LocalBackend, request: ChatRequest, question: str) -> str:
    """The outline's text as the orchestrator reads it: through sot's own retry loop, and closed once the
    profile's reader has every point it keeps (the server stops writing lines that would be dropped)."""
    reader = PROFILE.outline_reader(SHAPE, question)

    def restart(_: int) -> None:
        nonlocal reader
        reader = PROFILE.outline_reader(SHAPE, question)

    def feed(text: str) -> None:
        reader.feed(text)

    outcome = await Caller(local.backend, RetryPolicy()).call(
        request,
        purpose="skeleton",
        require_text=False,
        on_delta=feed,
        on_restart=restart,
        enough=lambda: reader.full,
    )
    return outcome.text


async def record() -> None:
    prompts = Prompts()
    local = await LocalBackend.start(LocalConfig(slots=2))
    todo = questions()
    rows: list[dict[str, Any]] = [{} for _ in todo]

    async def worker(start: int) -> None:
        for i in range(start, len(todo), 2):  # two at once: the server's two slots
            row = todo[i]
            request = ChatRequest(
                prompts.skeleton(row["question"], SHAPE, PROFILE.style(brief=False).outline_template),
                max_tokens=constants.SKELETON_MAX_TOKENS,
                temperature=0,
                constraint=Constraint(gbnf=SHAPE.gbnf(), regex=SHAPE.regex()),
            )
            rows[i] = row | {"raw": await _outline(local, request, row["question"])}
            print(f"{i + 1} {row['set']}: {rows[i]['raw'].splitlines()[:1]}", flush=True)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker, 0)
            tg.start_soon(worker, 1)
    finally:
        await local.aclose()
    STORE.parent.mkdir(parents=True, exist_ok=True)
    STORE.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def compare(before: Path) -> None:
    rows = [json.loads(line) for line in STORE.read_text().splitlines()]
    feed = "".join(json.dumps(r) + "\n" for r in rows)
    done = subprocess.run(
        [sys.executable, "-c", _BEFORE], input=feed, capture_output=True, text=True, cwd=before, check=True
    )
    old = [json.loads(line) for line in done.stdout.splitlines()]
    changed = []
    for row, was in zip(rows, old, strict=True):
        row["points_before"], row["points"] = was, points_now(row)
        if row["points"] != was:
            changed.append(row)
    STORE.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    kept = sum(len(r["points"]) for r in rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=before, capture_output=True, text=True)
    lines = [
        "# The bundled model's points before and after its rules moved behind the profile seam",
        "",
        f"{len(rows)} outside questions (eval/prompts/quality_outside_*.jsonl, sets A-AR), each outline written",
        "once by the embedded SmolLM2-135M (Q4_1, llama.cpp, its grammar, temperature 0) and stored raw in",
        "eval/results/small_profile/outlines.jsonl. Parsed by the parser before the move (sot/skeleton.py at",
        f"{commit.stdout.strip() or before.name}, strict, as the orchestrator ran it) and by the small profile: "
        f"{kept} points kept,",
        f"**{len(changed)} outline(s) parsed differently**.",
        "",
        *[f"- {r['set']}: {r['question']!r}: {r['points_before']} -> {r['points']}" for r in changed],
        "",
        "`python eval/small_profile_outlines.py check` re-parses the stored outlines (no model needed).",
    ]
    SUMMARY.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def check() -> int:
    rows = [json.loads(line) for line in STORE.read_text().splitlines()]
    changed = [r for r in rows if points_now(r) != r["points"]]
    for row in changed:
        print(f"{row['set']}: {row['question']!r}: {row['points']} -> {points_now(row)}")
    print(f"{len(rows) - len(changed)} of {len(rows)} outlines give the stored points")
    return 1 if changed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["record", "compare", "check"])
    parser.add_argument("--before", type=Path, help="compare: an older checkout (a git worktree)")
    args = parser.parse_args()
    if args.command == "record":
        anyio.run(record)
    elif args.command == "compare":
        compare(args.before)
    else:
        sys.exit(check())


if __name__ == "__main__":
    main()
