"""`sot report` on data it did not write: markup in categories, hand-edited and broken records."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests_support import SOT

import sot
from sot.batch.report import md_text


def record(i: int, mode: str, category: object, total: float = 2.0, **extra) -> dict[str, object]:
    base = {
        "id": f"q{i}",
        "mode": mode,
        "category": category,
        "question": f"Question {i}?",
        "text": f"Answer {i}",
        "error": None,
        "timings": {"total_s": total if mode == "sot" else total * 1.5, "first_token_s": 0.2},
        "usage": {"completion_tokens": 40},
    }
    base.update(extra)
    return base


def report(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}  # wide enough that no cell wraps
    command = [SOT, "report", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


HOSTILE = ["[/bold]", "[link=https://evil.example]click[/link]", "<script>alert(1)</script> | x", "\x1b]52;c;aGk=\x07"]


def test_markup_and_html_in_categories_stay_text_everywhere(tmp_path: Path) -> None:
    rows = [record(i, mode, HOSTILE[i % 4]) for i in range(8) for mode in ("sot", "sequential")]
    out = tmp_path / "r.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shown = report(str(out))
    assert shown.returncode == 0, shown.stderr
    assert "[/bold]" in shown.stdout and "[link=https://evil.example]click[/link]" in shown.stdout
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    md = out.with_suffix(".report.md").read_text()
    assert "<script>" not in md and "&lt;script&gt;" in md and "[link=" not in md
    # Every table row keeps its column count: a '|' in a category is escaped, not a new cell.
    table_rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert {line.replace("\\|", "").count("|") for line in table_rows[:10]} == {12}
    chart = out.with_suffix(".report.html").read_text()
    assert "<script>" not in chart and "&lt;script&gt;" in chart
    assert md_text("a_b*c") == "a\\_b\\*c"


def test_hand_edited_records_are_counted_and_warned_about_never_a_traceback(tmp_path: Path) -> None:
    good = [record(i, mode, "tips") for i in range(4) for mode in ("sot", "sequential")]
    lines = [json.dumps(r) for r in good]
    lines += [
        "this is not json",
        json.dumps([1, 2, 3]),
        json.dumps({"mode": "sot"}),  # no id
        json.dumps(record(9, "sot", "tips", timings="fast")),
        json.dumps(record(10, "sot", "tips", usage={"completion_tokens": "many"})),
        json.dumps(record(11, "sot", "tips", total=0.0)),
        json.dumps(record(12, "sot", {"nested": "category"})),
        '{"id": "q13", "mode": "sot", "tex',  # torn
    ]
    out = tmp_path / "r.jsonl"
    out.write_text("\n".join(lines) + "\n")
    shown = report(str(out), "--json")
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    warning = shown.stderr.strip()
    assert warning.count("\n") == 0 and warning.startswith("sot: warning: 8 line(s)")
    assert "line 9, 10, 11, 16" in warning
    figures = json.loads(shown.stdout)
    assert figures["stats"]["overall"]["sot"]["answered"] == 4
    assert figures["paired"]["overall"][0]["pairs"] == 4


def test_missing_empty_or_all_garbage_files_fail(tmp_path: Path) -> None:
    missing = report(str(tmp_path / "nope.jsonl"))
    assert missing.returncode == sot.ConfigurationError.exit_code
    assert missing.stderr.strip() == f"sot: error: results file not found: {tmp_path / 'nope.jsonl'}"
    garbage = tmp_path / "g.jsonl"
    garbage.write_text("nothing\nhere\n")
    shown = report(str(garbage))
    assert shown.returncode == sot.ConfigurationError.exit_code
    assert "no usable records" in shown.stderr and "Traceback" not in shown.stderr


def test_cut_answers_are_counted_and_the_speed_up_is_given_without_them() -> None:
    from sot.batch.report import build_report

    def record(qid: str, mode: str, seconds: float, truncated: bool) -> dict[str, object]:
        timings = {"total_s": seconds, "first_token_s": 0.1}
        usage = {"completion_tokens": 10}
        return {"id": qid, "mode": mode, "error": None, "timings": timings, "usage": usage, "truncated": truncated}

    records = [
        record("a", "sot", 1.0, False),
        record("a", "sequential", 2.0, False),
        record("b", "sot", 1.0, False),
        record("b", "sequential", 8.0, True),  # ran into its limit: its time says little
    ]
    report = build_report(records)
    assert report.stats["overall"]["sequential"].cut == 1
    paired = report.paired["overall"][0]
    assert paired.pairs == 2 and paired.median_speedup == 5.0
    assert paired.whole_pairs == 1 and paired.median_speedup_whole == 2.0
