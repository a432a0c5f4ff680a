"""Run a prompt set in several modes, one crash-safe record per (id, mode)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..client import Client
from ..errors import ConfigurationError, SotError
from ..result import Answer
from .inputs import Prompt
from .records import ResultsFile, open_results

MODES = ("sot", "sequential", "auto")
log = logging.getLogger("sot.batch")


def parse_modes(value: str) -> list[str]:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if not modes or bad:
        raise ConfigurationError(f"'modes' must be a comma list of {', '.join(MODES)}", options=("modes",))
    return list(dict.fromkeys(modes))


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """(error class, one-line message) of a failed answer; a group is described by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = " ".join(str(exc).split()) or type(exc).__name__
    if len(message) > 500:
        message = message[:499] + "…"
    return type(exc).__name__, message


def make_record(
    run_id: str,
    prompt: Prompt,
    mode: str,
    answer: Answer | None,
    error: BaseException | None = None,
) -> dict[str, Any]:
    error_type, message = describe_failure(error) if error is not None else (None, None)
    record: dict[str, Any] = {
        "run_id": run_id,
        "id": prompt.id,
        "mode": mode,
        "category": prompt.category,
        "question": prompt.question,
        "error": message,
        "error_type": error_type,
        "finished_at": round(time.time(), 3),
    }
    if answer is not None:
        record.update(
            mode_used=answer.mode,
            text=answer.text,
            points=answer.points,
            failed_points=answer.failed_points,
            route=answer.route,
            reason=answer.reason,
            timings=asdict(answer.timings),
            usage=answer.usage.to_dict(),
            calls=len(answer.calls),
            model=answer.model,
            backend=answer.backend,
            profile=answer.profile,
            # How it ended: cut at a token limit or before a loop, or answered sequentially instead of SoT.
            truncated=answer.truncated,
            looped=any(call.looped for call in answer.calls),
            fell_back=answer.fell_back,
            # The load-aware fan-out, and the tokens beyond a sequential answer (SoT's estimated).
            fan_out=answer.fan_out,
            extra_tokens=None if answer.extra_tokens is None else answer.extra_tokens.to_dict(),
        )
    return record


@dataclass
class BatchSummary:
    run_id: str
    skipped: int
    done: int = 0
    failed: int = 0


async def run_batch(
    client: Client,
    prompts: Sequence[Prompt],
    modes: Sequence[str],
    out: str | Path,
    *,
    concurrency: int,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
) -> BatchSummary:
    """Answer every (prompt, mode) not done yet; records are appended and fsynced as they finish.

    One answer's failure, of whatever kind, is that answer's record (its error class and message)
    and the run goes on; only the results file itself failing (a full disk) or the backend not
    starting at all ends the run.
    """
    if concurrency < 1:
        raise ConfigurationError("'concurrency' must be at least 1", options=("concurrency",))
    results, done = open_results(out, resume=resume, overwrite=overwrite)
    try:
        jobs = [(p, m) for p in prompts for m in modes if (p.id, m) not in done]
        summary = BatchSummary(uuid.uuid4().hex[:12], skipped=len(done))
        if jobs:
            await client.backend()  # a backend that cannot start fails the run once, not every record
            await _run_jobs(client, jobs, results, summary, concurrency, progress)
        return summary
    finally:
        results.close()


async def _run_jobs(
    client: Client,
    jobs: list[tuple[Prompt, str]],
    results: ResultsFile,
    summary: BatchSummary,
    concurrency: int,
    progress: bool,
) -> None:
    slots = anyio.CapacityLimiter(concurrency)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    # Progress is for the person watching: stderr, never mixed into stdout.
    bar = Progress(*columns, console=Console(stderr=True), disable=not progress, transient=False)
    fatal: list[SotError] = []

    async def one(prompt: Prompt, mode: str, task: Any, borrower: object, scope: anyio.CancelScope) -> None:
        error: BaseException | None = None
        answer: Answer | None = None
        try:
            answer = await client.ask(prompt.question, mode=mode)
        except Exception as exc:
            error = exc
            if not isinstance(exc, SotError):
                log.debug("answer %s (%s) failed unexpectedly", prompt.id, mode, exc_info=exc)
        finally:
            slots.release_on_behalf_of(borrower)
        try:
            await results.append(make_record(summary.run_id, prompt, mode, answer, error))
        except SotError as exc:
            fatal.append(exc)
            scope.cancel()
            return
        summary.done += 1
        summary.failed += error is not None
        bar.update(task, advance=1, description=f"done {summary.done} · failed {summary.failed}")

    with bar:
        task = bar.add_task("starting", total=len(jobs))
        async with anyio.create_task_group() as tg:
            for prompt, mode in jobs:
                # Bounded start: at most `concurrency` answers exist at once, whatever the set's size.
                borrower = object()
                await slots.acquire_on_behalf_of(borrower)
                tg.start_soon(one, prompt, mode, task, borrower, tg.cancel_scope)
    if fatal:
        raise fatal[0]
