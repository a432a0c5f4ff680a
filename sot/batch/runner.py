"""Run a prompt set in several modes, one crash-safe record per (id, mode)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..client import Client
from ..errors import ConfigurationError, SotError
from ..result import Answer
from .inputs import Prompt
from .records import open_results

MODES = ("sot", "sequential", "auto")


def parse_modes(value: str) -> list[str]:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if not modes or bad:
        raise ConfigurationError(f"modes must be a comma list of {', '.join(MODES)}")
    return list(dict.fromkeys(modes))


def make_record(run_id: str, prompt: Prompt, mode: str, answer: Answer | None, error: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "run_id": run_id,
        "id": prompt.id,
        "mode": mode,
        "category": prompt.category,
        "question": prompt.question,
        "error": error,
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
    """Answer every prompt in every mode; `concurrency` prompts at once, records fsynced as they finish."""
    if concurrency < 1:
        raise ConfigurationError("concurrency must be at least 1")
    results, done = open_results(out, resume=resume, overwrite=overwrite)
    jobs = [(p, m) for p in prompts for m in modes if (p.id, m) not in done]
    summary = BatchSummary(uuid.uuid4().hex[:12], skipped=len(done))
    slots = anyio.CapacityLimiter(concurrency)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    bar = Progress(*columns, disable=not progress, transient=False)

    async def one(prompt: Prompt, mode: str, task: Any, borrower: object) -> None:
        try:
            answer: Answer | None = await client.ask(prompt.question, mode=mode)
            error = None
        except SotError as exc:
            answer, error = None, str(exc) or type(exc).__name__
        finally:
            slots.release_on_behalf_of(borrower)
        results.append(make_record(summary.run_id, prompt, mode, answer, error))
        summary.done += 1
        summary.failed += error is not None
        bar.update(task, advance=1, description=f"done {summary.done} · failed {summary.failed}")

    try:
        with bar:
            task = bar.add_task("starting", total=len(jobs))
            async with anyio.create_task_group() as tg:
                for prompt, mode in jobs:
                    # Bounded start: at most `concurrency` answers exist at once, whatever the set's size.
                    borrower = object()
                    await slots.acquire_on_behalf_of(borrower)
                    tg.start_soon(one, prompt, mode, task, borrower)
    finally:
        results.close()
    return summary
