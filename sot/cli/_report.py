"""``sot report``: latency, time to first token, tokens and paired speed-up of a batch's results."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._sanitize import sanitize
from ..errors import ConfigurationError, SotError
from ._common import Debug, fail

if TYPE_CHECKING:
    from ..batch.report import Report


def cell(value: object) -> Text:
    """Data as an inert table cell: no rich markup, no control characters."""
    return Text(sanitize(str(value)))


_UNBOUNDED = 1_000_000


def _table(report: Report) -> Table:
    table = Table(title="latency by category and mode")
    columns = (
        "category",
        "mode",
        "answered",
        "failed",
        "cut",
        "median s",
        "p90 s",
        "median TTFT s",
        "median tokens",
        "extra tokens",
        "busy: seq.",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("category", "mode") else "right")
    for category in report.categories:
        for mode, s in report.stats[category].items():
            cells = [s.median_s, s.p90_s, s.median_ttft_s]
            table.add_row(
                cell(category),
                cell(mode),
                str(s.answered),
                str(s.failed),
                str(s.cut),
                *("–" if v is None else f"{v:.2f}" for v in cells),
                "–" if s.median_tokens is None else f"{s.median_tokens:.0f}",
                "–" if s.median_extra_tokens is None else f"{s.median_extra_tokens:.0f}",
                str(s.busy),
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
                cell(category),
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
    from ..batch.records import load_records
    from ..batch.report import record_problem

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
        from ..batch._atomic import atomic_write
        from ..batch.chart import speedup_chart
        from ..batch.report import build_report, markdown

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
    console.print(cell(f"Markdown: {md}   chart: {chart}"), soft_wrap=True)
