"""``sot batch``, ``sot report`` and ``sot judge``: whole prompt sets, both ways, compared."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import constants
from ._sanitize import sanitize
from .batch._atomic import atomic_write
from .batch.chart import speedup_chart
from .batch.inputs import read_prompts
from .batch.judge import ENV_JUDGE_API_KEY, JudgeEndpoint, JudgeProgress, run_judge, win_rates
from .batch.records import load_records, read_records
from .batch.report import Report, build_report, markdown, record_problem
from .batch.runner import parse_modes, run_batch
from .cli import (
    ApiKey,
    BaseUrl,
    Brief,
    Debug,
    DialectOption,
    GgufOption,
    LlamaServerOption,
    MaxPoints,
    MaxRetries,
    MaxTokens,
    Model,
    Pipeline,
    PointMaxTokens,
    ProfileOption,
    RouterOption,
    Temperature,
    Timeout,
    _dialect,
    app,
    fail,
    warn_ignored_model,
)
from .client import Client
from .errors import ConfigurationError, SotError


@app.command()
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
    base_url: BaseUrl = None,
    model: Model = None,
    api_key: ApiKey = None,
    dialect: DialectOption = "openai",
    gguf: GgufOption = None,
    llama_server: LlamaServerOption = None,
    max_points: MaxPoints = None,
    max_tokens: MaxTokens = constants.DEFAULT_MAX_TOKENS,
    point_max_tokens: PointMaxTokens = None,
    temperature: Temperature = None,
    timeout: Timeout = constants.DEFAULT_TIMEOUT_S,
    max_retries: MaxRetries = constants.DEFAULT_MAX_RETRIES,
    pipeline: Pipeline = True,
    router: RouterOption = constants.DEFAULT_ROUTER,
    profile: ProfileOption = None,
    brief: Brief = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    debug: Debug = False,
) -> None:
    """Answer a prompt set in several modes; every record is on disk the moment it is done."""
    try:
        prompts = read_prompts(input_file, turn=turn - 1)
        client = Client(
            base_url=base_url,
            model=model,
            api_key=api_key,
            dialect=_dialect(dialect),
            gguf=gguf,
            llama_server=llama_server,
            request_limit=concurrency,
            max_points=max_points,
            max_parallel=concurrency,
            max_tokens=max_tokens,
            point_max_tokens=point_max_tokens,
            temperature=temperature,
            timeout=timeout,
            max_retries=max_retries,
            pipeline=pipeline,
            router=router,
            profile=profile,
            brief=brief,
        )
        warn_ignored_model(client, model)

        async def run() -> None:
            async with client:
                summary = await run_batch(
                    client,
                    prompts,
                    parse_modes(modes),
                    out,
                    concurrency=concurrency,
                    resume=resume,
                    overwrite=overwrite,
                    progress=progress,
                )
            typer.echo(
                f"sot: {summary.done} answered ({summary.failed} failed), {summary.skipped} already done; "
                f"results in {out}" + (" (--resume re-runs the failed ones)" if summary.failed else ""),
                err=True,
            )
            if summary.failed:
                raise typer.Exit(constants.EXIT_SOME_FAILED)

        anyio.run(run)
    except KeyboardInterrupt:
        typer.echo(f"sot: interrupted; finished records are in {out} (use --resume)", err=True)
        raise typer.Exit(130) from None
    except SotError as exc:
        fail(exc, debug)


_UNBOUNDED = 1_000_000


def _cell(value: object) -> Text:
    """Data as an inert table cell: no rich markup, no control characters."""
    return Text(sanitize(str(value)))


def _table(report: Report) -> Table:
    table = Table(title="latency by category and mode")
    columns = ("category", "mode", "answered", "failed", "cut", "median s", "p90 s", "median TTFT s", "median tokens")
    for column in columns:
        table.add_column(column, justify="left" if column in ("category", "mode") else "right")
    for category in report.categories:
        for mode, s in report.stats[category].items():
            cells = [s.median_s, s.p90_s, s.median_ttft_s]
            table.add_row(
                _cell(category),
                _cell(mode),
                str(s.answered),
                str(s.failed),
                str(s.cut),
                *("–" if v is None else f"{v:.2f}" for v in cells),
                "–" if s.median_tokens is None else f"{s.median_tokens:.0f}",
            )
    return table


def _paired_table(report: Report) -> Table:
    paired = Table(title="paired speed-up: sequential latency / SoT latency (> 1: SoT faster)")
    for column in ("category", "vs", "pairs", "median", "geo. mean", "token overhead", "neither cut", "their median"):
        paired.add_column(column, justify="left" if column in ("category", "vs") else "right")
    for category in report.categories:
        for p in report.paired[category]:
            overhead = "–" if p.token_overhead is None else f"{p.token_overhead:+.0%}"
            paired.add_row(
                _cell(category),
                p.against,
                str(p.pairs),
                f"{p.median_speedup:.2f}",
                f"{p.geomean_speedup:.2f}",
                overhead,
                str(p.whole_pairs),
                "–" if p.median_speedup_whole is None else f"{p.median_speedup_whole:.2f}",
            )
    return paired


def _usable_records(results: Path) -> list[dict[str, Any]]:
    """The records a report can count; what it cannot is named in one warning line, never a traceback."""
    loaded = load_records(results)
    usable, problems = [], Counter[str]()
    for record in loaded.records:
        problem = record_problem(record)
        if problem is None:
            usable.append(record)
        else:
            problems[problem] += 1
    if loaded.bad_lines:
        shown = ", ".join(map(str, loaded.bad_lines[:5])) + (", …" if len(loaded.bad_lines) > 5 else "")
        problems[f"not a JSON record with id and mode (line {shown})"] += len(loaded.bad_lines)
    if problems:
        skipped = sum(problems.values())
        detail = "; ".join(f"{n}: {why}" for why, n in problems.most_common())
        typer.echo(f"sot: warning: {skipped} line(s) of {results} skipped ({detail})", err=True)
    if not usable:
        raise ConfigurationError(f"no usable records in {results}")
    return usable


@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="Results JSONL from `sot batch`.")],
    md: Annotated[Path | None, typer.Option("--md", help="Markdown output (default: RESULTS.report.md).")] = None,
    chart: Annotated[Path | None, typer.Option("--chart", help="HTML chart (default: RESULTS.report.html).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    debug: Debug = False,
) -> None:
    """Median and p90 latency, TTFT, tokens, paired speed-up and failures, per category and overall."""
    md = md or results.with_suffix(".report.md")
    chart = chart or results.with_suffix(".report.html")
    try:
        figures = build_report(_usable_records(results))
        atomic_write(md, markdown(figures, results.name).encode("utf-8"))
        atomic_write(chart, speedup_chart(figures, f"SoT speed-up: {results.name}").encode("utf-8"))
    except SotError as exc:
        fail(exc, debug)
        return
    if as_json:
        typer.echo(json.dumps(figures.to_dict()))
        return
    tables = (_table(figures), _paired_table(figures))
    console = Console(highlight=False)
    if not console.is_terminal:
        # Piped or redirected there is no screen to fit (rich would assume 80 columns and cut cells):
        # each table is as wide as its widest cell needs.
        measuring = Console(highlight=False, width=_UNBOUNDED)
        console = Console(highlight=False, width=max(measuring.measure(table).maximum for table in tables))
    for table in tables:
        console.print(table)
    console.print(_cell(f"Markdown: {md}   chart: {chart}"), soft_wrap=True)


_NO_JUDGE = (
    "no judge given: --judge-base-url is required, the OpenAI-compatible address of a model able to judge "
    "(e.g. http://127.0.0.1:8091/v1 from `sot serve --gguf JUDGE.gguf --port 8091`), with --judge-model where it "
    "serves several; the bundled 135M model writes no usable verdicts"
)


@app.command()
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
        str | None, typer.Option("--judge-api-key", envvar=ENV_JUDGE_API_KEY, help="Judge API key.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Judgements JSONL (default: RESULTS.judge.jsonl).")] = None,
    concurrency: Annotated[int, typer.Option(help="Pairs judged at once.")] = 4,
    resume: Annotated[bool, typer.Option("--resume", help="Skip pairs already judged.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Start the judgements file anew.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress on stderr.")] = True,
    debug: Debug = False,
) -> None:
    """Judge SoT against sequential answers pairwise, both orders; print net win rate per category."""
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
        typer.echo(f"sot: interrupted; finished judgements are in {out} (use --resume)", err=True)
        raise typer.Exit(130) from None
    except SotError as exc:
        fail(exc, debug)
        return
    records = read_records(out)
    rows = win_rates(records)
    shown_model = summary.model or judge_model or next((r.get("judge_model") for r in records if r.get("judge_model")), None)
    if rows:
        by = f", judged by {shown_model}" if shown_model else ""
        table = Table(title=_cell(f"SoT vs sequential{by} (both orders; disagreement = tie)"))
        for column in ("category", "judged", "SoT wins", "sequential wins", "ties", "unparsed", "net win rate"):
            table.add_column(column, justify="left" if column == "category" else "right")
        for category, row in rows.items():
            counts = (row.judged, row.sot, row.sequential, row.tie, row.unparsed)
            rate = "n/a" if row.net_win_rate is None else f"{row.net_win_rate:+.2f}"
            table.add_row(_cell(category), *(str(v) for v in counts), rate)
        Console(highlight=False).print(table)
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
            + (" (a judge must end its reply with [[A]], [[B]] or [[C]] on a line of its own)" if summary.unparsed else ""),
            err=True,
        )
        raise typer.Exit(constants.EXIT_SOME_FAILED)
    if summary.failed:
        typer.echo("sot: some judgements failed: --resume re-runs them", err=True)
        raise typer.Exit(constants.EXIT_SOME_FAILED)
