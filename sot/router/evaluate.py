"""Score a router against labelled prompts: accuracy, per-class precision and recall, confusion."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .decision import Route

MODES = ("sot", "sequential")


def _label(row: dict[str, Any]) -> str:
    if "sot_suitable" in row:
        return "sot" if row["sot_suitable"] in (True, "true", "True", 1, "1", "yes") else "sequential"
    value = str(row.get("route", "")).strip().lower()
    if value not in MODES:
        raise ConfigurationError("each row needs sot_suitable (bool) or route (sot|sequential)")
    return value


def _prompt(row: dict[str, Any]) -> str:
    for key in ("question", "prompt"):
        if isinstance(row.get(key), str):
            return str(row[key])
    turns = row.get("turns")
    if isinstance(turns, list) and turns:
        return str(turns[0])
    raise ConfigurationError("each row needs question or prompt")


def load_labelled(path: str | Path) -> list[tuple[str, str]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc.strerror}") from None
    rows = [json.loads(line) for line in lines if line.strip()]
    return [(_prompt(row), _label(row)) for row in rows]


@dataclass
class RouterReport:
    total: int = 0
    correct: int = 0
    confusion: dict[str, dict[str, int]] = field(default_factory=lambda: {m: dict.fromkeys(MODES, 0) for m in MODES})
    misrouted: list[tuple[str, str, str]] = field(default_factory=list)  # prompt, wanted, reason
    median_ms: float = 0.0

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def precision(self, mode: str) -> float:
        predicted = sum(self.confusion[want][mode] for want in MODES)
        return self.confusion[mode][mode] / predicted if predicted else 0.0

    def recall(self, mode: str) -> float:
        actual = sum(self.confusion[mode].values())
        return self.confusion[mode][mode] / actual if actual else 0.0

    def sequential_sent_to_sot(self) -> float:
        actual = sum(self.confusion["sequential"].values())
        return self.confusion["sequential"]["sot"] / actual if actual else 0.0

    def text(self) -> str:
        lines = [
            f"prompts: {self.total}   accuracy: {self.accuracy:.3f}   median routing time: {self.median_ms:.3f} ms",
            f"sequential-needing prompts routed to SoT: {self.sequential_sent_to_sot():.1%}",
            f"false-SoT rate: {self.sequential_sent_to_sot():.3f}   SoT recall: {self.recall('sot'):.3f}",
            "",
            f"{'class':<12}{'precision':>10}{'recall':>8}{'support':>9}",
        ]
        for mode in MODES:
            support = sum(self.confusion[mode].values())
            lines.append(f"{mode:<12}{self.precision(mode):>10.3f}{self.recall(mode):>8.3f}{support:>9}")
        lines += ["", "confusion (rows: label, columns: routed)", f"{'':<12}{'sot':>8}{'sequential':>12}"]
        for mode in MODES:
            lines.append(f"{mode:<12}{self.confusion[mode]['sot']:>8}{self.confusion[mode]['sequential']:>12}")
        if self.misrouted:
            lines += ["", "misrouted:"]
            lines += [
                f"  [{want} -> {'sot' if want == 'sequential' else 'sequential'}] {p[:100]!r}: {why}"
                for p, want, why in self.misrouted
            ]
        return "\n".join(lines)


async def evaluate(rows: list[tuple[str, str]], decide: Callable[[str], Awaitable[Route]]) -> RouterReport:
    report = RouterReport()
    times: list[float] = []
    for prompt, want in rows:
        start = time.perf_counter()
        got = await decide(prompt)
        times.append((time.perf_counter() - start) * 1000)
        report.total += 1
        report.confusion[want][got.mode] += 1
        if got.mode == want:
            report.correct += 1
        else:
            report.misrouted.append((prompt, want, got.reason))
    report.median_ms = statistics.median(times) if times else 0.0
    return report
