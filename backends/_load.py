"""A server's own load, read where it publishes it: vLLM's and llama.cpp's monitoring endpoints.

SoT's parallel expansions are nearly free on a batched server with idle slots and a loss on a full
one (see ``sot.router.load``); this module only reads how full the server is. The formats, as their
documentation gives them:

- vLLM, ``GET /metrics`` (Prometheus text, always on): gauges ``vllm:num_requests_running``,
  ``vllm:num_requests_waiting`` and the KV cache's used fraction, 0..1, ``vllm:kv_cache_usage_perc``
  (V1 engine) or ``vllm:gpu_cache_usage_perc`` (older). Each has a series per engine
  (``{engine="0",model_name="..."}``): counts are summed over series, the KV fraction is the fullest
  engine's. vLLM publishes no batch limit, so the capacity stays unknown.
- llama.cpp's server, ``GET /slots`` (on by default, ``--no-slots`` turns it off and it answers 501):
  a JSON list, one object per slot, ``is_processing`` true while it serves a request (``state`` != 0
  in older builds). The list's length is the capacity. Deferred requests do not show there, but a
  request is only deferred when every slot is busy, which the slots already say.
- llama.cpp's server, ``GET /metrics`` (only with ``--metrics``, else 501): ``llamacpp:requests_processing``,
  ``llamacpp:requests_deferred``, and ``llamacpp:kv_cache_usage_ratio`` in the builds that have it.

These live at the server's root, not under ``/v1``. ``/slots`` is asked first because it alone gives
a capacity; once a path has answered, it is asked alone, and the others only when it stops answering.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
import httpx

from ._probe import ProbeFailed, Reply, get_reply

log = logging.getLogger("sot.load")

# One place for the monitor's timing. A reading this young is reused without a request: load moves
# in seconds, and an answer's fan-out is decided once per answer.
LOAD_FRESH_S: Final = 1.0
# One reading, every path asked included, never takes longer: it is advice, and an answer waits on it.
LOAD_READ_TIMEOUT_S: Final = 0.3
# After a failed read (timeout, refused connection) nothing is asked for a while, so a hung endpoint
# costs one timeout per backoff and not one per answer.
LOAD_FAILURE_BACKOFF_S: Final = 5.0
# An endpoint that publishes nothing we read (404, 501, an HTML page, garbage on every path), or that
# failed this many times in a row, is left alone this long.
LOAD_NO_METRICS_S: Final = 60.0
LOAD_FAILURES_BEFORE_GIVING_UP: Final = 3
# vLLM's /metrics with several engines and their histograms runs to hundreds of kB; older llama.cpp
# builds put each slot's prompt into /slots.
LOAD_BODY_LIMIT: Final = 2 << 20
LOAD_PATHS: Final = ("/slots", "/metrics")
# A server loading its model (llama.cpp answers 503 on every path meanwhile) or restarting behind a
# gateway says so with these: a failure to retry later, not a server without metrics. 501 is
# llama.cpp's "this endpoint is turned off".
_TRANSIENT_STATUS: Final = frozenset({500, 502, 503, 504})

Source = Literal["vllm-metrics", "llama.cpp-slots", "llama.cpp-metrics"]

_VLLM_RUNNING = "vllm:num_requests_running"
_VLLM_WAITING = "vllm:num_requests_waiting"
_VLLM_KV: tuple[str, ...] = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # newer first
_LLAMA_RUNNING = "llamacpp:requests_processing"
_LLAMA_WAITING = "llamacpp:requests_deferred"
_LLAMA_KV: tuple[str, ...] = ("llamacpp:kv_cache_usage_ratio",)
_WANTED = (_VLLM_RUNNING, _VLLM_WAITING, *_VLLM_KV, _LLAMA_RUNNING, _LLAMA_WAITING, *_LLAMA_KV)


@dataclass(frozen=True)
class LoadReading:
    """How busy one server is, as it said at ``read_at`` (``time.monotonic()`` or the monitor's clock).

    ``running``: requests being decoded; ``waiting``: requests queued for a batch slot; ``capacity``:
    how many requests it decodes at once (llama.cpp's slots), None where it does not say (vLLM);
    ``kv_usage``: the used fraction of its KV cache, 0..1, None where not published.
    """

    running: int
    waiting: int
    capacity: int | None
    kv_usage: float | None
    source: Source
    read_at: float

    @property
    def free(self) -> int | None:
        """Batch slots a new request would get at once, where the capacity is known."""
        return None if self.capacity is None else max(0, self.capacity - self.running - self.waiting)

    def to_dict(self) -> dict[str, Any]:
        """The reading for JSON output (``read_at`` is a monotonic clock's, meaningless elsewhere)."""
        return {
            "source": self.source,
            "running": self.running,
            "waiting": self.waiting,
            "capacity": self.capacity,
            "kv_usage": self.kv_usage,
        }


def combined(readings: Sequence[LoadReading]) -> LoadReading:
    """Several servers' readings as one pool's: counts summed, a capacity only where each has one,
    the fullest KV cache."""
    capacities = [r.capacity for r in readings]
    kv = [r.kv_usage for r in readings if r.kv_usage is not None]
    return LoadReading(
        running=sum(r.running for r in readings),
        waiting=sum(r.waiting for r in readings),
        capacity=None if None in capacities else sum(c for c in capacities if c is not None),
        kv_usage=max(kv) if kv else None,
        source=readings[0].source,
        read_at=min(r.read_at for r in readings),
    )


@dataclass(frozen=True)
class Sample:
    """One line of Prometheus text: a series' name, its labels and its value."""

    name: str
    labels: Mapping[str, str]
    value: float


# name, {labels} (label values may hold escaped quotes, commas and braces), value, optional timestamp.
_SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\})?\s+(\S+)(?:\s+-?[0-9]+)?\s*')
_PAIR = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_ESCAPE = re.compile(r"\\(.)")


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: "\n" if m[1] == "n" else m[1], value)


def _labels(text: str | None) -> dict[str, str] | None:
    if not text or not text.strip():
        return {}
    labels: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        pair = _PAIR.match(text, pos)
        if pair is None:
            return None if text[pos:].strip() else labels
        labels[pair[1]] = _unescape(pair[2])
        pos = pair.end()
    return labels


def parse_prometheus(text: str, names: Iterable[str] | None = None) -> list[Sample]:
    """The samples of Prometheus text exposition; comments and lines it cannot read are skipped.

    With `names`, only those metrics' lines are parsed: vLLM's page is mostly histogram buckets.
    Values follow Go's float syntax (``NaN``, ``+Inf``, ``-Inf``); timestamps are dropped.
    """
    prefixes = tuple(names) if names is not None else None
    samples: list[Sample] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or (prefixes is not None and not line.startswith(prefixes)):
            continue
        match = _SAMPLE.fullmatch(line)
        labels = _labels(match[2]) if match else None
        if match is None or labels is None or (prefixes is not None and match[1] not in prefixes):
            continue
        try:
            value = float(match[3])
        except ValueError:
            continue
        samples.append(Sample(match[1], labels, value))
    return samples


def _values(samples: list[Sample], name: str) -> list[float]:
    return [s.value for s in samples if s.name == name and not math.isnan(s.value)]


# No server runs more requests than this: a larger count is garbage, and would overflow round().
_MAX_COUNT = 1_000_000


def _count(samples: list[Sample], name: str) -> int:
    total = sum(v for v in _values(samples, name) if math.isfinite(v))
    return round(min(max(total, 0.0), _MAX_COUNT)) if math.isfinite(total) else _MAX_COUNT


def _fraction(samples: list[Sample], names: tuple[str, ...]) -> float | None:
    # The fullest engine: one engine out of KV cache preempts its requests whatever the others hold.
    for name in names:
        values = [v for v in _values(samples, name) if math.isfinite(v)]
        if values:
            return min(1.0, max(0.0, max(values)))
    return None


def reading_from_metrics(samples: list[Sample], read_at: float) -> LoadReading | None:
    """A reading from vLLM's or llama.cpp's Prometheus samples; None when neither's gauges are there."""
    if _values(samples, _VLLM_RUNNING):
        running, waiting, kv = _VLLM_RUNNING, _VLLM_WAITING, _VLLM_KV
        source: Source = "vllm-metrics"
    elif _values(samples, _LLAMA_RUNNING):
        running, waiting, kv = _LLAMA_RUNNING, _LLAMA_WAITING, _LLAMA_KV
        source = "llama.cpp-metrics"
    else:
        return None
    return LoadReading(
        running=_count(samples, running),
        waiting=_count(samples, waiting),
        capacity=None,
        kv_usage=_fraction(samples, kv),
        source=source,
        read_at=read_at,
    )


def _busy(slot: Mapping[str, Any]) -> bool | None:
    flag = slot.get("is_processing")
    if isinstance(flag, bool):
        return flag
    state = slot.get("state")  # builds before is_processing: 0 idle, anything else working
    return state != 0 if isinstance(state, int) and not isinstance(state, bool) else None


def reading_from_slots(data: Any, read_at: float) -> LoadReading | None:
    """A reading from llama.cpp's ``/slots`` JSON; None unless it is a non-empty list of slots."""
    if not isinstance(data, list) or not data or not all(isinstance(slot, dict) for slot in data):
        return None
    busy = [_busy(slot) for slot in data]
    if any(flag is None for flag in busy):
        return None
    return LoadReading(
        running=sum(1 for flag in busy if flag),
        waiting=0,
        capacity=len(data),
        kv_usage=None,
        source="llama.cpp-slots",
        read_at=read_at,
    )


def parse_reply(path: str, reply: Reply, read_at: float) -> LoadReading | None:
    """The reading in one monitoring reply, or None (error status, an HTML page, anything else)."""
    if reply.status != 200:
        return None
    text = reply.body.decode("utf-8", errors="replace")
    if path.endswith("/slots"):
        try:
            return reading_from_slots(json.loads(text), read_at)
        except ValueError:
            return None
    return reading_from_metrics(parse_prometheus(text, _WANTED), read_at)


def metrics_root(base_url: str) -> str:
    """The server root under which an OpenAI base URL's monitoring endpoints are served.

    ``http://h:8000/v1`` -> ``http://h:8000``; ``http://h/llm/v1/`` -> ``http://h/llm`` (a reverse
    proxy's prefix, or llama.cpp's ``--api-prefix``, stays); a URL without ``/v1`` is the root
    already. User info, query and fragment are dropped: the client carries any credentials.
    """
    url = httpx.URL(base_url.strip())
    path = url.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return str(url.copy_with(username=None, password=None, path=path or "/", query=None, fragment=None)).rstrip("/")


_Outcome = LoadReading | Literal["none", "failed"]


class LoadMonitor:
    """The latest load of one endpoint, read at most once per ``LOAD_FRESH_S`` however many ask.

    ``await read()`` returns the reading while it is fresh without any request; when it is stale, one
    GET (all paths within ``timeout_s`` together, never retried) refreshes it, and callers arriving
    meanwhile wait for that same request. It never raises: a failure, a timeout or an endpoint that
    publishes nothing gives None, remembered for a while (module constants) so it costs nothing.

    `http` is used as given: its default headers (an API key: llama.cpp asks for it on ``/slots``
    and ``/metrics`` when started with one) go with each request and are never logged. A client of
    its own keeps these GETs from waiting for a connection behind a busy pool of streams; ``aclose()``
    closes it.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        *,
        now: Callable[[], float] = time.monotonic,
        timeout_s: float = LOAD_READ_TIMEOUT_S,
    ) -> None:
        self._http = http
        self.root = metrics_root(base_url)
        self._host = httpx.URL(self.root).netloc.decode("ascii", errors="replace")  # for logs: no user info
        self._now = now
        self._timeout_s = timeout_s
        self._reading: LoadReading | None = None
        self._until = -math.inf  # the cached outcome (a reading or None) holds until then
        self._path: str | None = None  # the path that answered last: the only one asked while it does
        self._failures = 0
        self._pending: anyio.Event | None = None

    def cached(self) -> LoadReading | None:
        """The reading if it is still fresh, without any I/O (None when stale or when there is none)."""
        return self._reading if self._now() < self._until else None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def read(self) -> LoadReading | None:
        """The current reading: the cached one while fresh, else one shared request's (or None)."""
        if self._now() < self._until:
            return self._reading
        if self._pending is not None:
            await self._pending.wait()
            return self.cached()  # None if that request was cancelled before it finished
        self._pending = pending = anyio.Event()
        try:
            self._remember(await self._fetch())
        finally:
            self._pending = None
            pending.set()
        return self._reading

    def _remember(self, outcome: _Outcome) -> None:
        now = self._now()
        if isinstance(outcome, LoadReading):
            self._reading, self._failures, self._until = outcome, 0, now + LOAD_FRESH_S
            return
        self._reading = None
        if outcome == "failed":
            self._failures += 1
        if outcome == "none" or self._failures >= LOAD_FAILURES_BEFORE_GIVING_UP:
            self._path, self._failures = None, 0
            self._until = now + LOAD_NO_METRICS_S
            log.debug("load: %s publishes no load we read; not asked again for %g s", self._host, LOAD_NO_METRICS_S)
        else:
            self._until = now + LOAD_FAILURE_BACKOFF_S

    async def _fetch(self) -> _Outcome:
        # The path that answered last goes first; should it stop answering, the others are asked at once.
        paths = sorted(LOAD_PATHS, key=lambda path: path != self._path)
        with anyio.move_on_after(self._timeout_s):
            for path in paths:
                try:
                    reply = await get_reply(
                        self._http, self.root + path, deadline_s=self._timeout_s, limit=LOAD_BODY_LIMIT
                    )
                except (ProbeFailed, httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
                    # Advice only: whatever goes wrong, the answer goes on without it.
                    log.debug("load: %s%s failed (%s)", self._host, path, type(exc).__name__)
                    return "failed"
                if reply.status in _TRANSIENT_STATUS:
                    log.debug("load: %s%s answered %d", self._host, path, reply.status)
                    return "failed"
                try:
                    reading = parse_reply(path, reply, self._now())
                except Exception as exc:  # a reply no parser expected (nested too deep, numbers too big)
                    log.debug("load: %s%s could not be read (%s)", self._host, path, type(exc).__name__)
                    return "failed"
                if reading is not None:
                    self._path = path
                    log.debug("load: %s%s: %s", self._host, path, reading.to_dict())
                    return reading
                log.debug("load: %s%s answered %d with nothing to read", self._host, path, reply.status)
            self._path = None
            return "none"
        log.debug("load: %s gave no reading within %g s", self._host, self._timeout_s)
        return "failed"
