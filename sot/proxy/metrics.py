"""The proxy's counters, gauges and latency histograms, rendered as Prometheus text (format 0.0.4)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable
from typing import ClassVar

from .. import constants

Labels = tuple[tuple[str, str], ...]


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' for k, v in labels)
    return "{" + inner + "}"


class Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1


class Metrics:
    """What ``/metrics`` shows: requests, modes chosen, latencies, upstream calls, errors."""

    _HELP: ClassVar[dict[str, tuple[str, str]]] = {
        "sot_proxy_requests_total": ("counter", "HTTP requests answered, by endpoint and status."),
        "sot_proxy_answers_total": ("counter", "SoT-served answers, by the mode chosen."),
        "sot_proxy_passthrough_total": ("counter", "Requests sent upstream untouched, by reason."),
        "sot_proxy_upstream_calls_total": ("counter", "Upstream model calls of SoT answers, by purpose."),
        "sot_proxy_errors_total": ("counter", "Failed requests, by OpenAI error type."),
        "sot_proxy_fan_out_total": ("counter", "Load-aware fan-out decisions of SoT-routed answers, by mode."),
        "sot_proxy_extra_prompt_tokens_total": (
            "counter",
            "Prompt tokens beyond sequential answers' (SoT's estimated: the question sent again per point).",
        ),
        "sot_proxy_extra_completion_tokens_total": (
            "counter",
            "Completion tokens beyond sequential answers' (SoT's outlines and retries; estimated).",
        ),
        "sot_proxy_request_seconds": ("histogram", "Time from request to the end of the response."),
        "sot_proxy_first_content_seconds": ("histogram", "Time from request to the first answer text sent."),
        "sot_proxy_requests_active": ("gauge", "Requests being answered."),
        "sot_proxy_requests_queued": ("gauge", "Requests waiting for a slot."),
    }

    def __init__(self) -> None:
        self._counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._histograms: dict[str, dict[Labels, Histogram]] = defaultdict(dict)
        self._gauges: dict[str, Callable[[], float]] = {}

    def count(self, name: str, amount: float = 1, **labels: str) -> None:
        self._counters[name][tuple(sorted(labels.items()))] += amount

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        series = self._histograms[name]
        if key not in series:
            series[key] = Histogram(constants.PROXY_LATENCY_BUCKETS_S)
        series[key].observe(seconds)

    def gauge(self, name: str, read: Callable[[], float]) -> None:
        self._gauges[name] = read

    def render(self) -> str:
        lines: list[str] = []
        for name, (kind, text) in self._HELP.items():
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            if kind == "counter":
                for labels, value in sorted(self._counters.get(name, {}).items()):
                    lines.append(f"{name}{_labels(labels)} {value:g}")
            elif kind == "gauge" and name in self._gauges:
                lines.append(f"{name} {self._gauges[name]():g}")
            elif kind == "histogram":
                for labels, hist in sorted(self._histograms.get(name, {}).items()):
                    cumulative = 0
                    for bound, count in zip((*hist.buckets, float("inf")), hist.counts, strict=True):
                        cumulative += count
                        le = "+Inf" if bound == float("inf") else f"{bound:g}"
                        lines.append(f"{name}_bucket{_labels((*labels, ('le', le)))} {cumulative}")
                    lines.append(f"{name}_sum{_labels(labels)} {hist.total:.6f}")
                    lines.append(f"{name}_count{_labels(labels)} {hist.n}")
        return "\n".join(lines) + "\n"
