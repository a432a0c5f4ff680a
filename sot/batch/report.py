"""Figures from a results file: latency, time to first token, tokens, paired speed-up, failures.

Percentiles are linear interpolations between closest ranks (numpy's default); the paired speed-up
of a prompt is its sequential latency over its SoT latency (> 1: SoT was faster), summarised by
median and geometric mean over prompts with both answers.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

OVERALL = "overall"


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass
class ModeStats:
    answered: int = 0
    failed: int = 0
    median_s: float | None = None
    p90_s: float | None = None
    median_ttft_s: float | None = None
    median_tokens: float | None = None
    total_tokens: int = 0
    cut: int = 0  # answers stopped by a token limit or cut before a loop (``truncated``)
    # Tokens beyond a sequential answer's, prompt and completion (``extra_tokens``; SoT's estimated).
    median_extra_tokens: float | None = None
    busy: int = 0  # answers the server's load sent sequential (``fan_out``)


@dataclass
class Paired:
    against: str  # the SoT-side mode compared with sequential: "sot" or "auto"
    pairs: int = 0
    median_speedup: float | None = None
    geomean_speedup: float | None = None
    token_overhead: float | None = None  # SoT-side completion tokens / sequential - 1
    # Like with like: a cut answer's time says little of a whole one's, so the pairs where neither was cut.
    whole_pairs: int = 0
    median_speedup_whole: float | None = None


@dataclass
class Report:
    modes: list[str]
    categories: list[str]
    stats: dict[str, dict[str, ModeStats]] = field(default_factory=dict)  # category -> mode -> stats
    paired: dict[str, list[Paired]] = field(default_factory=dict)  # category -> comparisons

    def to_dict(self) -> dict[str, Any]:
        return {
            "modes": self.modes,
            "categories": self.categories,
            "stats": {c: {m: vars(s) for m, s in by.items()} for c, by in self.stats.items()},
            "paired": {c: [vars(p) for p in ps] for c, ps in self.paired.items()},
        }


def _stats(records: list[dict[str, Any]]) -> ModeStats:
    ok = [r for r in records if r.get("error") is None]
    latency = [float(r["timings"]["total_s"]) for r in ok]
    ttft = [float(r["timings"]["first_token_s"]) for r in ok if r["timings"].get("first_token_s") is not None]
    tokens = [int(r["usage"]["completion_tokens"]) for r in ok]
    return ModeStats(
        answered=len(ok),
        failed=len(records) - len(ok),
        median_s=_median(latency),
        p90_s=percentile(latency, 0.9),
        median_ttft_s=_median(ttft),
        median_tokens=_median([float(t) for t in tokens]),
        total_tokens=sum(tokens),
        cut=sum(bool(r.get("truncated")) for r in ok),
        median_extra_tokens=_median([_extra(r) for r in ok if isinstance(r.get("extra_tokens"), dict)]),
        busy=sum(isinstance(r.get("fan_out"), dict) and r["fan_out"].get("mode") == "sequential" for r in ok),
    )


def _extra(record: dict[str, Any]) -> float:
    extra = record["extra_tokens"]
    return float(extra.get("prompt_tokens", 0)) + float(extra.get("completion_tokens", 0))


def _paired(by_mode: dict[str, dict[str, dict[str, Any]]], against: str) -> Paired | None:
    sequential = by_mode.get("sequential", {})
    other = by_mode.get(against, {})
    ids = [i for i in other if i in sequential]
    if not ids:
        return None
    ratios = [float(sequential[i]["timings"]["total_s"]) / float(other[i]["timings"]["total_s"]) for i in ids]
    cut = {i for i in ids if sequential[i].get("truncated") or other[i].get("truncated")}
    whole = [r for i, r in zip(ids, ratios, strict=True) if i not in cut]
    seq_tokens = sum(int(sequential[i]["usage"]["completion_tokens"]) for i in ids)
    other_tokens = sum(int(other[i]["usage"]["completion_tokens"]) for i in ids)
    return Paired(
        against=against,
        pairs=len(ids),
        median_speedup=statistics.median(ratios),
        geomean_speedup=math.exp(statistics.fmean(math.log(r) for r in ratios)),
        token_overhead=(other_tokens / seq_tokens - 1) if seq_tokens else None,
        whole_pairs=len(whole),
        median_speedup_whole=statistics.median(whole) if whole else None,
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a (hand-edited) record cannot be counted, or None when it can."""
    category = record.get("category")
    if category is not None and not isinstance(category, str | int):
        return "category is not text"
    if record.get("error") is not None:
        return None
    timings, usage = record.get("timings"), record.get("usage")
    if not isinstance(timings, dict) or not _number(timings.get("total_s")) or timings["total_s"] <= 0:
        return "timings.total_s is missing or not a positive number"
    first = timings.get("first_token_s")
    if first is not None and not _number(first):
        return "timings.first_token_s is not a number"
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        return "usage.completion_tokens is missing or not a whole number"
    return None


def build_report(records: list[dict[str, Any]]) -> Report:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[str(record.get("category") or "uncategorized")].append(record)
        groups[OVERALL].append(record)
    modes = sorted(
        {str(r["mode"]) for r in records},
        key=lambda m: ("sot", "auto", "sequential").index(m) if m in ("sot", "auto", "sequential") else 9,
    )
    categories = [*sorted(c for c in groups if c != OVERALL), OVERALL]
    report = Report(modes=modes, categories=categories)
    for category in categories:
        rows = groups[category]
        report.stats[category] = {m: _stats([r for r in rows if r["mode"] == m]) for m in modes}
        by_mode: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        for r in rows:
            if r.get("error") is None:
                by_mode[str(r["mode"])][str(r["id"])] = r
        report.paired[category] = [p for p in (_paired(by_mode, "sot"), _paired(by_mode, "auto")) if p]
    return report


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


# Markdown's punctuation (and what renderers add: autolinks, math, footnotes), each backslash-escaped.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:/$^=])")


def md_text(value: object) -> str:
    """Data as literal Markdown text in one table cell: punctuation escaped, HTML inert, one line."""
    flat = _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown(report: Report, source: str) -> str:
    lines = [f"# SoT batch report: {md_text(source)}", ""]
    lines += [
        "| category | mode | answered | failed | cut | median s | p90 s | median TTFT s | median tokens "
        "| median extra tokens | sequential (server busy) |"
    ]
    lines += ["|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in report.categories:
        for m, s in report.stats[c].items():
            lines.append(
                f"| {md_text(c)} | {md_text(m)} | {s.answered} | {s.failed} | {s.cut} | {_fmt(s.median_s)} "
                f"| {_fmt(s.p90_s)} | {_fmt(s.median_ttft_s)} | {_fmt(s.median_tokens, 0)} "
                f"| {_fmt(s.median_extra_tokens, 0)} | {s.busy} |"
            )
    lines += ["", "Paired speed-up, sequential latency / SoT latency per prompt (> 1: SoT faster):", ""]
    lines += [
        "| category | SoT mode | pairs | median | geometric mean | token overhead | pairs neither cut | their median |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report.categories:
        for p in report.paired[c]:
            overhead = "–" if p.token_overhead is None else f"{p.token_overhead:+.0%}"
            figures = f"{p.pairs} | {_fmt(p.median_speedup)} | {_fmt(p.geomean_speedup)} | {overhead}"
            figures += f" | {p.whole_pairs} | {_fmt(p.median_speedup_whole)}"
            lines.append(f"| {md_text(c)} | {p.against} | {figures} |")
    return "\n".join(lines) + "\n"
