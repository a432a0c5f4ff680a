"""How plain answers on the embedded model end: at their end, cut before a loop, or at the token limit.

Asks each prompt of ``--data`` (default eval/prompts/loop_prompts.jsonl: poems, stories, comparisons and
lists, the kind that send the bundled 135M model into loops) with ``--mode sequential`` at temperature
0, through the embedded server as `sot ask` runs it, and records per answer how it ended (the finish the
server gave, whether sot cut a loop, whether the answer says it was cut), whether its text ends
mid-word, its length and its time. Writes eval/results/loops.md and .json.

    python eval/bench_loops.py [--data FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Any

import _bench_common as bench
import anyio

import sot

DATA = bench.HERE / "prompts" / "loop_prompts.jsonl"
# A text ends on a whole word where its last character closes a sentence, a line, a quote or a bracket.
_WHOLE_END = re.compile(r"""[.!?…:;)\]"'”’*_`\n]\s*$""")


def row_of(prompt: dict[str, Any], answer: sot.Answer) -> dict[str, Any]:
    call = answer.calls[-1]
    return {
        "id": prompt["id"],
        "category": prompt["category"],
        "finish_reason": call.finish_reason,
        "looped": call.looped,
        "truncated": answer.truncated,
        "ends_mid_sentence": not _WHOLE_END.search(answer.text),
        "chars": len(answer.text),
        "seconds": round(answer.timings.total_s, 2),
        "tail": answer.text[-80:],
    }


async def main(args: argparse.Namespace) -> None:
    prompts = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    prompts = prompts[: args.limit] if args.limit else prompts
    rows = []
    async with sot.Client(mode="sequential", temperature=0, router="rules") as client:
        for prompt in prompts:
            rows.append(row_of(prompt, await client.ask(prompt["question"])))
            print(json.dumps(rows[-1]), flush=True)
    # An answer whose cut is unstated: it ends mid-sentence and says nothing of having been cut.
    unstated = [r["id"] for r in rows if r["ends_mid_sentence"] and not r["truncated"]]
    summary = {
        "machine": bench.machine(),
        "prompts": len(rows),
        "looped_and_cut": sum(r["looped"] for r in rows),
        "at_token_limit": sum(r["finish_reason"] == "length" for r in rows),
        "truncated_stated": sum(r["truncated"] for r in rows),
        "ends_mid_sentence": sum(r["ends_mid_sentence"] for r in rows),
        "cut_unstated": unstated,
        "median_seconds": statistics.median(r["seconds"] for r in rows),
        "rows": rows,
    }
    out = bench.HERE / "results"
    (out / "loops.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    (out / "loops.md").write_text(markdown(summary))
    print(markdown(summary))


def markdown(s: dict[str, Any]) -> str:
    m = s["machine"]
    lines = [
        "# How plain answers end on the embedded model (issue 32)",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores. SmolLM2-135M (its profile: llama.cpp's DRY sampler asked),",
        f"`--mode sequential --temperature 0`, {s['prompts']} prompts of eval/prompts/loop_prompts.jsonl.",
        "",
        f"- loops seen and cut where they began: {s['looped_and_cut']}",
        f"- answers stopped by the token limit: {s['at_token_limit']}",
        f"- answers that say they were cut (`truncated` in --json, one stderr line): {s['truncated_stated']}",
        f"- answers ending mid-sentence: {s['ends_mid_sentence']}; of them with the cut unstated: "
        f"{len(s['cut_unstated'])} {s['cut_unstated'] or ''}",
        f"- median time per answer: {s['median_seconds']} s",
        "",
        "| id | category | finish | looped | truncated | mid-sentence | chars | s | how it ends |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in s["rows"]:
        tail = r["tail"].replace("\n", " ").replace("|", "\\|")
        lines.append(
            f"| {r['id']} | {r['category']} | {r['finish_reason']} | {r['looped']} | {r['truncated']} | "
            f"{r['ends_mid_sentence']} | {r['chars']} | {r['seconds']} | …{tail} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--limit", type=int, default=0)
    anyio.run(main, parser.parse_args())
