"""``sot judge``: SoT against sequential answers, pairwise and blind, in both orders."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from .. import constants
from ..errors import ConfigurationError, SotError
from ..options import spelling
from ._common import Debug, fail, interrupted

if TYPE_CHECKING:
    from ..batch.judge import JudgeSummary

# The judge's endpoint, in the library's terms, is this command's --judge-* flags.
_SPELLING = spelling({"base_url": "--judge-base-url", "model": "--judge-model", "api_key": "--judge-api-key"})
_NO_JUDGE = (
    "no judge given: --judge-base-url is required, the OpenAI-compatible address of a model able to judge "
    "(e.g. http://127.0.0.1:8091/v1 from `sot serve --gguf JUDGE.gguf --port 8091`), with --judge-model where it "
    "serves several; the bundled 135M model writes no usable verdicts"
)


def judge(
    results: Annotated[Path, typer.Argument(help="Results JSONL with sot and sequential records.")],
    judge_base_url: Annotated[
        str | None,
        typer.Option("--judge-base-url", metavar="<url>", help="Judge's OpenAI-compatible endpoint (required)."),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option("--judge-model", help="Judge model (default: the one the judge server lists, if only one)."),
    ] = None,
    judge_api_key: Annotated[
        str | None, typer.Option("--judge-api-key", envvar=constants.ENV_JUDGE_API_KEY, help="Judge API key.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Judgements JSONL (default: RESULTS.judge.jsonl).")] = None,
    concurrency: Annotated[int, typer.Option(help="Pairs judged at once.")] = 4,
    resume: Annotated[bool, typer.Option("--resume", help="Skip pairs already judged.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Start the judgements file anew.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress on stderr.")] = True,
    debug: Debug = False,
) -> None:
    """Judge SoT against sequential answers pairwise, both orders; print net win rate per category."""
    from ..batch.judge import JudgeEndpoint, JudgeProgress, run_judge

    out = out or results.with_suffix(".judge.jsonl")
    try:
        if not judge_base_url:
            raise ConfigurationError(_NO_JUDGE)
        endpoint = JudgeEndpoint(judge_base_url, judge_model, judge_api_key)
        reporter = JudgeProgress(enabled=progress)
        summary = anyio.run(
            lambda: run_judge(
                endpoint, results, out, concurrency=concurrency, resume=resume, overwrite=overwrite, progress=reporter
            )
        )
    except KeyboardInterrupt:
        raise interrupted(f"sot: interrupted; finished judgements are in {out} (use --resume)") from None
    except SotError as exc:
        fail(exc, debug, spell=_SPELLING)
        return
    _show_rates(out, summary.model or judge_model)
    _say_how_it_went(summary, out)


def _show_rates(out: Path, model: str | None) -> None:
    """The net win rate per category, as a table on stdout."""
    from rich.console import Console
    from rich.table import Table

    from ..batch.judge import win_rates
    from ..batch.records import read_records
    from ._report import cell

    records = read_records(out)
    rows = win_rates(records)
    shown_model = model or next((r.get("judge_model") for r in records if r.get("judge_model")), None)
    if not rows:
        return
    by = f", judged by {shown_model}" if shown_model else ""
    table = Table(title=cell(f"SoT vs sequential{by} (both orders; disagreement = tie)"))
    for column in ("category", "judged", "SoT wins", "sequential wins", "ties", "unparsed", "net win rate"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for category, row in rows.items():
        counts = (row.judged, row.sot, row.sequential, row.tie, row.unparsed)
        rate = "n/a" if row.net_win_rate is None else f"{row.net_win_rate:+.2f}"
        table.add_row(cell(category), *(str(v) for v in counts), rate)
    Console(highlight=False).print(table)


def _say_how_it_went(summary: JudgeSummary, out: Path) -> None:
    """One line of counts on stderr; exit code 11 where judgements failed."""
    replies = f"; the judge's replies are in {out}" if summary.unparsed else ""
    typer.echo(
        f"sot: judged {summary.judged} pair(s): {summary.failed} failed, {summary.unparsed} without a readable "
        f"verdict (not counted as ties{replies}); {summary.skipped} already done",
        err=True,
    )
    if summary.all_failed:
        typer.echo(
            f"sot: error: every judgement failed ({summary.failed} errors, {summary.unparsed} without a readable "
            "verdict): check --judge-base-url and --judge-model"
            + (
                " (a judge must end its reply with [[A]], [[B]] or [[C]] on a line of its own)"
                if summary.unparsed
                else ""
            ),
            err=True,
        )
        raise typer.Exit(constants.EXIT_SOME_FAILED)
    if summary.failed:
        typer.echo("sot: some judgements failed: --resume re-runs them", err=True)
        raise typer.Exit(constants.EXIT_SOME_FAILED)
