"""Batch runs, crash safety, resume, the shared request limit, reports and the judge."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _fakes import Reply, SeenRequest, sot_script
from tests_support import SOT

from sot import constants
from sot.batch.inputs import read_prompts
from sot.batch.records import read_records
from sot.errors import ConfigurationError


def write_prompts(path: Path, n: int) -> Path:
    rows = [
        {"id": f"q{i}", "category": ["alpha", "beta"][i % 2], "question": f"What are tips number {i}?"}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def batch_cli(*args: str) -> list[str]:
    return [SOT, "batch", *args, "--no-progress"]


def test_inputs_in_three_formats(tmp_path: Path) -> None:
    fastchat = tmp_path / "question.jsonl"
    fastchat.write_text('{"question_id": 81, "category": "writing", "turns": ["first turn", "second turn"]}\n')
    assert read_prompts(fastchat)[0].question == "first turn"
    assert read_prompts(fastchat, turn=1)[0].question == "second turn"
    assert read_prompts(fastchat)[0].id == "81" and read_prompts(fastchat)[0].category == "writing"
    plain = tmp_path / "prompts.txt"
    plain.write_text("one\n\ntwo\n")
    assert [(p.id, p.question) for p in read_prompts(plain)] == [("1", "one"), ("2", "two")]
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"prompt": "a"}\n{"id": "x", "question": "b", "category": "c"}\n')
    assert [(p.id, p.question, p.category) for p in read_prompts(rows)] == [("1", "a", None), ("x", "b", "c")]
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": 1, "prompt": "a"}\n{"id": 1, "prompt": "b"}\n')
    with pytest.raises(ConfigurationError):
        read_prompts(dup)


def test_kill_9_then_resume_gives_every_record_exactly_once(fake, tmp_path: Path) -> None:
    server = fake(sot_script(token_delay=0.01, expansion_delay=lambda n: 0.05))
    prompts = write_prompts(tmp_path / "p.jsonl", 40)
    out = tmp_path / "results.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sot,sequential", "--concurrency", "4"]
    args += ["--base-url", server.url, "--model", "m"]
    first = subprocess.Popen(batch_cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 30):
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed_at = out.read_bytes().count(b"\n")
    assert 30 <= killed_at < 80
    with out.open("ab") as handle:  # a torn line, as a crash mid-write would leave
        handle.write(b'{"id": "q39", "mode": "sot", "tex')
    second = subprocess.run(batch_cli(*args, "--resume"), capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    lines = out.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # no torn line remains
    keys = [(r["id"], r["mode"]) for r in records]
    assert len(keys) == 80 and len(set(keys)) == 80
    assert all(r["error"] is None for r in records)
    assert {r["run_id"] for r in records[:killed_at]} != {r["run_id"] for r in records[killed_at:]}


def test_failed_records_are_rerun_on_resume(fake, tmp_path: Path) -> None:
    broken = {"on": True}
    base = sot_script()

    def handler(request: SeenRequest) -> Reply:
        if broken["on"] and "number 3?" in request.prompt:
            return Reply(status=400)
        return base(request)

    server = fake(handler)
    prompts = write_prompts(tmp_path / "p.jsonl", 5)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--base-url", server.url, "--model", "m"]
    first = subprocess.run(batch_cli(*args), capture_output=True, text=True)
    assert first.returncode == constants.EXIT_SOME_FAILED
    failed = [r for r in read_records(out) if r["error"]]
    assert [(r["id"], r["error_type"]) for r in failed] == [("q3", "BadRequestError")]
    assert "400" in failed[0]["error"] and "\n" not in failed[0]["error"]
    refused = subprocess.run(batch_cli(*args), capture_output=True, text=True)
    assert refused.returncode != 0 and "--resume" in refused.stderr
    broken["on"] = False
    second = subprocess.run(batch_cli(*args, "--resume"), capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    records = read_records(out)
    assert sorted(r["id"] for r in records) == [f"q{i}" for i in range(5)]
    assert all(r["error"] is None for r in records)


def test_prompts_and_points_share_one_request_limit(fake, tmp_path: Path) -> None:
    points = [f"Point {c}" for c in "ABCDEF"]
    server = fake(sot_script(points, expansion_delay=lambda n: 0.05))
    prompts = write_prompts(tmp_path / "p.jsonl", 6)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sot", "--concurrency", "3"]
    result = subprocess.run(batch_cli(*args, "--base-url", server.url, "--model", "m"), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert server.max_in_flight == 3


def test_report_figures_match_a_recomputation(fake, tmp_path: Path) -> None:
    server = fake(sot_script(token_delay=0.002, expansion_delay=lambda n: 0.01 * n))
    prompts = write_prompts(tmp_path / "p.jsonl", 12)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sot,sequential", "--base-url", server.url, "--model", "m"]
    assert subprocess.run(batch_cli(*args), capture_output=True).returncode == 0
    shown = subprocess.run([SOT, "report", str(out), "--json"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    figures = json.loads(shown.stdout)
    records = read_records(out)
    for mode in ("sot", "sequential"):
        latency = sorted(r["timings"]["total_s"] for r in records if r["mode"] == mode)
        stats = figures["stats"]["overall"][mode]
        assert math.isclose(stats["median_s"], statistics.median(latency), rel_tol=0.01)
        assert math.isclose(stats["p90_s"], statistics.quantiles(latency, n=10, method="inclusive")[8], rel_tol=0.01)
    by = {(r["id"], r["mode"]): r for r in records}
    ratios = [
        by[(i, "sequential")]["timings"]["total_s"] / by[(i, "sot")]["timings"]["total_s"] for i, m in by if m == "sot"
    ]
    paired = figures["paired"]["overall"][0]
    assert math.isclose(paired["median_speedup"], statistics.median(ratios), rel_tol=0.01)
    assert math.isclose(paired["geomean_speedup"], statistics.geometric_mean(ratios), rel_tol=0.01)
    assert out.with_suffix(".report.md").read_text().count("| overall |") >= 2
    assert "<svg" in out.with_suffix(".report.html").read_text()


def test_judge_both_orders_and_resume(fake, tmp_path: Path) -> None:
    answers = fake(sot_script())
    prompts = write_prompts(tmp_path / "p.jsonl", 4)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sot,sequential", "--base-url", answers.url, "--model", "m"]
    assert subprocess.run(batch_cli(*args), capture_output=True).returncode == 0

    def judge(request: SeenRequest) -> Reply:
        prompt = request.prompt
        a_is_sot = prompt.index("Details on") < prompt.index("A plain answer")
        if "number 0?" in prompt:  # position-biased judge: always A, so the orders disagree
            return Reply("A looks better.\n[[A]]")
        return Reply("SoT covers more.\n[[A]]" if a_is_sot else "SoT covers more.\n[[B]]")

    judge_server = fake(judge)
    command = [
        sys.executable,
        "-m",
        "sot",
        "judge",
        str(out),
        "--judge-base-url",
        judge_server.url,
        "--judge-model",
        "j",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    verdicts = {r["id"]: r["winner"] for r in read_records(out.with_suffix(".judge.jsonl"))}
    assert verdicts == {"q0": "tie", "q1": "sot", "q2": "sot", "q3": "sot"}
    assert len(judge_server.requests) == 8
    again = subprocess.run([*command, "--resume"], capture_output=True, text=True)
    assert again.returncode == 0 and len(judge_server.requests) == 8
    assert "+0.75" in again.stdout  # overall net win rate: (3 - 0) / 4


def test_ctrl_c_keeps_finished_records(fake, tmp_path: Path) -> None:
    server = fake(sot_script(token_delay=0.05))
    prompts = write_prompts(tmp_path / "p.jsonl", 40)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--base-url", server.url, "--model", "m"]
    proc = subprocess.Popen(batch_cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 5):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "--resume" in err
    records = read_records(out)
    assert 5 <= len(records) < 40 and all(r["error"] is None for r in records)
