"""``sot batch``: a whole prompt set answered in several modes, every record on disk when done."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from .. import constants
from ..client import Client
from ..errors import SotError
from ._common import Debug, connect, fail, interrupted
from ._options import Connection, with_answer_options, with_connection_options

if TYPE_CHECKING:
    from ..batch.runner import BatchSummary


@with_connection_options
@with_answer_options
def batch(
    input_file: Annotated[
        Path, typer.Argument(metavar="INPUT", help="question.jsonl, JSONL with question|prompt, or .txt")
    ],
    out: Annotated[Path, typer.Option("--out", help="Results JSONL (one record per id and mode).")],
    modes: Annotated[str, typer.Option(help="Comma list of sot, sequential, auto.")] = "sot,sequential",
    concurrency: Annotated[
        int, typer.Option(help="Most requests in flight to the backend, prompts and points together.")
    ] = 4,
    resume: Annotated[
        bool, typer.Option("--resume", help="Skip what is done; re-run missing or failed records.")
    ] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Start the results file anew.")] = False,
    turn: Annotated[int, typer.Option(help="Which turn of FastChat 'turns' to ask (1-based).")] = 1,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    *,
    connection: Connection,
    options: dict[str, Any],
    debug: Debug = False,
) -> None:
    """Answer a prompt set in several modes; every record is on disk the moment it is done."""
    from ..batch.inputs import read_prompts
    from ..batch.runner import parse_modes, run_batch

    try:
        prompts = read_prompts(input_file, turn=turn - 1)
        chosen = parse_modes(modes)
        client = connect(connection, options, request_limit=concurrency)

        answer_all = functools.partial(
            run_batch,
            client,
            prompts,
            chosen,
            out,
            concurrency=concurrency,
            resume=resume,
            overwrite=overwrite,
            progress=progress,
        )
        anyio.run(_run, client, out, answer_all)
    except KeyboardInterrupt:
        raise interrupted(f"sot: interrupted; finished records are in {out} (use --resume)") from None
    except SotError as exc:
        fail(exc, debug)


async def _run(client: Client, out: Path, answer_all: Callable[[], Awaitable[BatchSummary]]) -> None:
    async with client:
        summary = await answer_all()
    typer.echo(
        f"sot: {summary.done} answered ({summary.failed} failed), {summary.skipped} already done; "
        f"results in {out}" + (" (--resume re-runs the failed ones)" if summary.failed else ""),
        err=True,
    )
    if summary.failed:
        raise typer.Exit(constants.EXIT_SOME_FAILED)
