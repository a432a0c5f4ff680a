"""Every view prints the same answer: piped text, --stream, --json, batch records, AnswerText events.

Each scenario injects what used to make views disagree: a retry after text was streamed, a title
the model echoes, a pipelined skeleton that falls back to sequential after a point was expanded.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from _fakes import FakeServer, Handler, Reply, SeenRequest, sot_script
from tests_support import SOT

POINTS = ["Alpha point", "Beta point", "Gamma point"]
QUESTION = "What should I know?"


def retried_once(kind: str, point: int | None = None, base: Handler | None = None) -> Handler:
    """`base`, except that the first `kind` call (point `point`) is cut after some streamed text."""
    base = base or sot_script(POINTS, expansion=lambda n, title: f"{title}: body of point {n}, with detail.")
    failed: set[tuple[str, int | None]] = set()

    def handle(request: SeenRequest) -> Reply:
        reply = base(request)
        key = (request.kind, request.point)
        if request.kind == kind and request.point == point and key not in failed:
            failed.add(key)
            return Reply(reply.text, fault="cut", fault_after=3)
        return reply

    return handle


def fallback_after_a_point() -> Handler:
    """A pipelined skeleton with one usable point: its expansion finishes, then SoT falls back."""
    base = sot_script(["Only point"], sequential_text="The whole answer, written in one go.")

    def handle(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            return Reply("1. Only point\nThat is all I have.", token_delay=0.05)
        if request.kind == "sequential":
            return Reply(base(request).text, fault="cut", fault_after=2) if not seen else base(request)
        return base(request)

    seen: list[int] = []

    def counted(request: SeenRequest) -> Reply:
        reply = handle(request)
        if request.kind == "sequential":
            seen.append(1)
        return reply

    return counted


SCENARIOS: dict[str, tuple[Callable[[], Handler], list[str]]] = {
    "sot-pipelined": (lambda: retried_once("expand", 2), ["--mode", "sot"]),
    "sot-two-phase": (lambda: retried_once("expand", 1), ["--mode", "sot", "--no-pipeline"]),
    "sot-skeleton-retry": (lambda: retried_once("skeleton"), ["--mode", "sot"]),
    "sequential": (lambda: retried_once("sequential"), ["--mode", "sequential"]),
    "fallback": (fallback_after_a_point, ["--mode", "sot"]),
}


def sot_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [SOT, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_view_prints_the_same_answer(scenario: str, tmp_path: Path) -> None:
    make_handler, mode_args = SCENARIOS[scenario]
    texts: dict[str, str] = {}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        with FakeServer(make_handler()) as server:
            done = sot_command(*args, "--base-url", server.url, "--model", "m", "--max-retries", "2", cwd=tmp_path)
            assert done.returncode == 0, (args, done.stderr)
            return done

    texts["piped"] = run("ask", QUESTION, *mode_args).stdout.removesuffix("\n")
    texts["--stream"] = run("ask", QUESTION, "--stream", *mode_args).stdout.removesuffix("\n")
    as_json = json.loads(run("ask", QUESTION, "--json", *mode_args).stdout)
    assert any(call["attempts"] > 1 for call in as_json["calls"]), "the scenario must retry a call"
    texts["--json"] = as_json["text"]
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "q1", "question": QUESTION}) + "\n")
    out = tmp_path / "r.jsonl"
    modes = ["--modes", "sequential" if scenario == "sequential" else "sot"]
    pipeline = [a for a in mode_args if a == "--no-pipeline"]
    run("batch", str(prompts), "--out", str(out), *modes, *pipeline, "--no-progress")
    texts["batch"] = json.loads(out.read_text().splitlines()[0])["text"]

    assert len(set(texts.values())) == 1, texts
    answer = texts["piped"]
    if scenario == "fallback":
        assert answer == "The whole answer, written in one go."
    elif scenario == "sequential":
        assert answer == "A plain answer written in one go."
    else:  # in order, each title once (the model's echo of it is tidied away), nothing twice
        sections = [f"**{n}. {t}**\n\nbody of point {n}, with detail." for n, t in enumerate(POINTS, 1)]
        assert answer == "\n\n".join(sections)


def test_typed_option_overrides_name_exactly_the_options() -> None:
    """Type checkers see every option of Options on Client/ask/stream, and nothing else."""
    from dataclasses import fields

    from sot.options import OptionOverrides, Options

    assert set(OptionOverrides.__annotations__) == {f.name for f in fields(Options)}
