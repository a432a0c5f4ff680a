"""Batch runs against failing servers, a second writer, a full disk: nothing crashes, nothing is lost."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import errno
import json
import os
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from _fakes import Reply, SeenRequest, sot_script
from test_batch import batch_cli, write_prompts
from typer.testing import CliRunner

import sot
from sot import constants
from sot.backends.mock import MockBackend
from sot.batch import _atomic, records
from sot.batch.inputs import Prompt
from sot.batch.records import open_results, read_records
from sot.batch.runner import run_batch


def number_of(request: SeenRequest) -> int:
    return int(request.prompt.split("tips number ")[1].split("?")[0])


def faulty_server(fake, attempts: Counter[int], broken: dict[str, bool]):
    """Prompts 3, 13, ... always get a chunk that is not JSON, 0, 10, ... one of the wrong shape; others a
    wrong-shaped chunk, a 500, a cut stream or a reset once."""
    base = sot_script()

    def handler(request: SeenRequest) -> Reply:
        n = number_of(request)
        attempts[n] += 1
        if broken["on"] and n % 10 == 3:
            return Reply("Half an answer", fault="malformed", fault_after=1)
        if broken["on"] and n % 10 == 0:
            return Reply(events=['data: {"choices": [{"index": 0, "delta": "hi"}]}\n\n', "data: [DONE]\n\n"])
        if attempts[n] == 1 and n % 10 == 1:
            return Reply(events=['data: {"choices": "abc"}\n\n', "data: [DONE]\n\n"])
        if attempts[n] == 1 and n % 10 == 5:
            return Reply(status=500)
        if attempts[n] == 1 and n % 10 == 7:
            return Reply("A stream cut short", fault="cut", fault_after=2)
        if attempts[n] == 1 and n % 10 == 9:
            return Reply("Reset", fault="reset", fault_after=1)
        return base(request)

    return fake(handler)


def test_a_100_prompt_batch_with_bad_responses_keeps_100_records_and_resume_fills_them(fake, tmp_path: Path) -> None:
    attempts: Counter[int] = Counter()
    broken = {"on": True}
    server = faulty_server(fake, attempts, broken)
    prompts = write_prompts(tmp_path / "p.jsonl", 100)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--concurrency", "8", "--max-retries", "1"]
    args += ["--base-url", server.url, "--model", "m"]
    first = subprocess.run(batch_cli(*args), capture_output=True, text=True, timeout=300)
    assert first.returncode == constants.EXIT_SOME_FAILED, first.stderr
    assert "Traceback" not in first.stderr and "20 failed" in first.stderr
    kept = read_records(out)
    assert len(kept) == 100 and len({r["id"] for r in kept}) == 100
    failed = {r["id"]: r for r in kept if r["error"] is not None}
    assert sorted(failed) == sorted(f"q{i}" for i in range(100) if i % 10 in (0, 3))
    assert {r["error_type"] for r in failed.values()} == {"ProtocolError"}
    assert all("\n" not in r["error"] and r["error"] for r in failed.values())
    # Transient faults (500, cut, reset) were retried into answers.
    assert all(kept_record["text"] for kept_record in kept if kept_record["error"] is None)
    assert all(attempts[n] == 2 for n in range(100) if n % 10 in (1, 5, 7, 9))

    broken["on"] = False
    second = subprocess.run(batch_cli(*args, "--resume"), capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    final = read_records(out)
    assert len(final) == 100 and len({r["id"] for r in final}) == 100
    assert all(r["error"] is None for r in final)
    assert "20 answered (0 failed), 80 already done" in second.stderr


@pytest.mark.anyio
async def test_an_unexpected_exception_is_a_record_and_the_run_goes_on(tmp_path: Path) -> None:
    async def handler(request):
        if "poison" in request.messages[-1].content:
            raise ExceptionGroup("shape", [ValueError("choices is not a list")])
        yield "Fine."

    client = sot.Client(backend=MockBackend(handler), mode="sequential", max_retries=0)
    prompts = [Prompt(f"q{i}", "poison pill" if i in (2, 5) else f"question {i}") for i in range(8)]
    out = tmp_path / "r.jsonl"
    summary = await run_batch(client, prompts, ["sequential"], out, concurrency=3, progress=False)
    kept = {r["id"]: r for r in read_records(out)}
    assert len(kept) == 8 and summary.failed == 2 and summary.done == 8
    assert kept["q2"]["error_type"] == kept["q5"]["error_type"]
    assert "choices is not a list" in kept["q2"]["error"]
    assert all(kept[f"q{i}"]["text"] == "Fine." for i in (0, 1, 3, 4, 6, 7))


def test_a_second_writer_refuses_naming_the_holder_and_nothing_is_lost(fake, tmp_path: Path) -> None:
    gate = threading.Event()
    base = sot_script()

    def handler(request: SeenRequest) -> Reply:
        if number_of(request) >= 2:
            gate.wait(timeout=120)  # holds the first writer mid-run until the others have tried
        return base(request)

    server = fake(handler)
    prompts = write_prompts(tmp_path / "p.jsonl", 30)
    out = tmp_path / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--concurrency", "2"]
    args += ["--base-url", server.url, "--model", "m"]
    first = subprocess.Popen(batch_cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 2):
        time.sleep(0.01)
    for extra in (["--resume"], ["--overwrite"], []):
        second = subprocess.run(batch_cli(*args, *extra), capture_output=True, text=True, timeout=60)
        assert second.returncode == sot.ConfigurationError.exit_code
        assert second.stderr.count("\n") == 1 and f"pid {first.pid}" in second.stderr
        assert "started 20" in second.stderr and "in use" in second.stderr
    gate.set()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    kept = read_records(out)
    assert sorted(r["id"] for r in kept) == sorted(f"q{i}" for i in range(30))
    assert not (tmp_path / "r.jsonl.lock").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_the_lock_is_per_file_and_freed_on_close(tmp_path: Path) -> None:
    writer, _ = open_results(tmp_path / "a.jsonl", resume=False)
    with pytest.raises(sot.ConfigurationError, match=f"pid {os.getpid()}"):
        open_results(tmp_path / "a.jsonl", resume=True)
    other, _ = open_results(tmp_path / "b.jsonl", resume=False)  # another file is not blocked
    other.close()
    writer.close()
    again, _ = open_results(tmp_path / "a.jsonl", resume=True)
    again.close()


@pytest.mark.anyio
async def test_fsync_runs_off_the_event_loop(tmp_path: Path, monkeypatch) -> None:
    threads: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        threads.append(threading.get_ident())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer, _ = open_results(tmp_path / "r.jsonl", resume=False)
    try:
        await writer.append({"id": "1", "mode": "sot"})
        await writer.append({"id": "2", "mode": "sot"})
    finally:
        writer.close()
    assert len(threads) == 2 and threading.get_ident() not in threads
    assert [r["id"] for r in read_records(tmp_path / "r.jsonl")] == ["1", "2"]


def _disk_fills_after(monkeypatch, module, writes: int) -> None:
    """The one write function fails with ENOSPC after `writes` calls, having written half its data."""
    calls = {"n": 0}
    real = _atomic.write_all

    def write_all(fd: int, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] > writes:
            real(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(module, "write_all", write_all)


def _cli(*args: str):
    from sot.cli import app

    return CliRunner().invoke(app, list(args))


def test_disk_full_mid_batch_is_one_line_and_keeps_whole_records(fake, tmp_path: Path, monkeypatch) -> None:
    server = fake(sot_script())
    prompts = write_prompts(tmp_path / "p.jsonl", 20)
    out = tmp_path / "r.jsonl"
    _disk_fills_after(monkeypatch, records, 5)
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--no-progress"]
    result = _cli("batch", *args, "--base-url", server.url, "--model", "m")
    assert result.exit_code == sot.ConfigurationError.exit_code
    assert result.output.strip().count("\n") == 0 and "disk is full" in result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) == 5 and all(json.loads(line)["error"] is None for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl", "r.jsonl"]  # no .tmp, no lock left


def test_disk_full_during_resume_keeps_the_file_and_leaves_no_tmp(fake, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text("".join(json.dumps({"id": f"q{i}", "mode": "sequential", "error": None}) + "\n" for i in range(3)))
    before = out.read_bytes()
    _disk_fills_after(monkeypatch, _atomic, 0)
    prompts = write_prompts(tmp_path / "p.jsonl", 5)
    result = _cli("batch", str(prompts), "--out", str(out), "--modes", "sequential", "--resume", "--no-progress")
    assert result.exit_code == sot.ConfigurationError.exit_code
    assert "disk is full" in result.output and result.output.strip().count("\n") == 0
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl", "r.jsonl"]


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 96 kB tmpfs (needs root and mount; skipped where there is none)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_really_full_disk(fake, tmp_path: Path, tiny_disk: Path) -> None:
    server = fake(sot_script(sequential_text=" ".join(f"Sentence {i} of a plain answer." for i in range(60))))
    prompts = write_prompts(tmp_path / "p.jsonl", 200)
    out = tiny_disk / "r.jsonl"
    args = [str(prompts), "--out", str(out), "--modes", "sequential", "--base-url", server.url, "--model", "m"]
    result = subprocess.run(batch_cli(*args), capture_output=True, text=True, timeout=300)
    assert result.returncode == sot.ConfigurationError.exit_code
    assert result.stderr.count("\n") == 1 and "disk is full" in result.stderr
    kept = [json.loads(line) for line in out.read_bytes().splitlines()]  # every line whole
    assert 10 < len(kept) < 200
    resumed = subprocess.run(batch_cli(*args, "--resume"), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == sot.ConfigurationError.exit_code and "disk is full" in resumed.stderr
    assert [json.loads(line)["id"] for line in out.read_bytes().splitlines()][: len(kept)] == [r["id"] for r in kept]
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["r.jsonl"]
