"""The scheduler of a batched server, on a simulated clock.

Running streams advance together, one token each per decode step, and a step lasts as long as the
step-time table says for the streams in it (background streams included), plus the prefill of the
prompt tokens admitted at its start that the prefix cache did not already hold. A request beyond the
batch limit waits in a FIFO queue for a slot; background streams hold slots for as long as they are
set. The clock is the wall clock times ``time_scale``.

The physics never depends on how promptly the event loop wakes: every step's start and end are
computed from the step before it, and a late wake-up works through every step that has ended since,
whole runs of identical steps at once. Only delivery waits for the wake-up: the engine wakes at each
first and last token, and otherwise flushes what was decoded every ``flush_interval_s`` (real).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from .physics import TwinConfig
from .tokens import PrefixCache


@dataclass(eq=False)
class Stream:
    """One request's decoding: its prompt, the tokens it will write, and when each thing happened
    (simulated seconds)."""

    prompt: list[str]
    output: list[str]
    finish_reason: str
    params: dict[str, Any] = field(default_factory=dict)
    id: int = 0
    arrived: float = 0.0
    admitted: float | None = None
    first_token: float | None = None
    finished: float | None = None
    cached: int = 0
    decoded: int = 0  # tokens decoded so far
    visible: int = 0  # of them, handed to the HTTP side
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def done(self) -> bool:
        return self.finished is not None and self.visible >= self.decoded


@dataclass
class Counters:
    """Totals of real traffic since start (background streams send nothing and are not counted)."""

    requests: int = 0
    finished: int = 0
    cancelled: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generation_tokens: int = 0


class Engine:
    """The batch: running streams, the waiting queue, background load and the step clock."""

    def __init__(self, config: TwinConfig) -> None:
        self.config = config
        self.cache = PrefixCache(config.cache_block_tokens, config.cache_blocks)
        self.background = config.background_streams
        self.running: list[Stream] = []
        self.waiting: deque[Stream] = deque()
        self.counters = Counters()
        self._t0 = time.monotonic()
        self._step_end: float | None = None  # when the step in progress ends; None: no step (idle)
        self._step_fresh = False  # the step in progress admitted someone (its length has a prefill)
        self._idle_since = 0.0  # background streams keep stepping while idle: their grid starts here
        self._load_changed = 0.0
        self._ended: list[Stream] = []  # finished or cancelled since the last flush
        self._kick = asyncio.Event()
        self._ids = 0

    def now(self) -> float:
        """The simulated clock, in seconds."""
        return (time.monotonic() - self._t0) * self.config.time_scale

    # The HTTP side's calls ----------------------------------------------------------------------

    def submit(self, stream: Stream) -> None:
        self._ids += 1
        stream.id, stream.arrived = self._ids, self.now()
        self.counters.requests += 1
        self.waiting.append(stream)
        self._kick.set()

    def cancel(self, stream: Stream) -> None:
        """A client that went away frees its slot at the next step, as vLLM aborts such a request."""
        if stream.finished is not None:
            return
        stream.finished = self.now()
        self.counters.cancelled += 1
        with suppress(ValueError):
            self.waiting.remove(stream)
        with suppress(ValueError):
            self.running.remove(stream)
        self._kick.set()

    def set_background(self, streams: int) -> int:
        self.background = min(max(int(streams), 0), self.config.batch_limit)
        self._load_changed = self.now()
        self._kick.set()
        return self.background

    # What the metrics read ----------------------------------------------------------------------

    @property
    def background_running(self) -> int:
        """Background streams holding a slot: those that fit beside the real streams running."""
        return min(self.background, self.config.batch_limit - len(self.running))

    @property
    def num_running(self) -> int:
        return len(self.running) + self.background_running

    @property
    def num_waiting(self) -> int:
        return len(self.waiting) + self.background - self.background_running

    def kv_usage(self) -> float:
        held = sum(len(s.prompt) + s.decoded for s in self.running)
        held += self.background_running * self.config.background_context_tokens
        return min(held / self.config.kv_capacity_tokens, 1.0)

    # The step clock -----------------------------------------------------------------------------

    def _start_step(self, t: float) -> None:
        """A step begins at `t`: waiting streams that had arrived take the free slots, FIFO."""
        admitted: list[Stream] = []
        limit = self.config.batch_limit
        while self.waiting and self.waiting[0].arrived <= t and len(self.running) + self.background < limit:
            stream = self.waiting.popleft()
            stream.admitted, stream.cached = t, self.cache.admit(stream.prompt)
            self.counters.prompt_tokens += len(stream.prompt)
            self.counters.cached_tokens += stream.cached
            self.running.append(stream)
            admitted.append(stream)
        if not self.running:
            self._step_end, self._idle_since = None, t
            return
        prefill = sum(len(s.prompt) - s.cached for s in admitted)
        self._step_end = t + self.config.step_s(self.num_running) + self.config.prefill_s(prefill)
        self._step_fresh = bool(admitted)

    def _finish_step(self) -> float:
        """The step in progress ends: every running stream has one more token; the next step begins."""
        assert self._step_end is not None
        t = self._step_end
        for stream in self.running:
            stream.decoded += 1
            if stream.decoded == 1:
                stream.first_token = t
        self.counters.generation_tokens += len(self.running)
        for stream in [s for s in self.running if s.decoded >= len(s.output)]:
            stream.finished = t
            self.running.remove(stream)
            self._ended.append(stream)
            self.counters.finished += 1
        self._start_step(t)
        return t

    def _first_start(self) -> float:
        """When the first waiting request starts on an idle batch: on arrival (or when the load last
        changed, if later: a slot freed then), or at the background streams' next step."""
        ready = max(self.waiting[0].arrived, self._load_changed)
        if self.background == 0:
            return ready
        period = self.config.step_s(self.background)
        steps = math.ceil(max(ready - self._idle_since, 0.0) / period)
        return self._idle_since + steps * period

    def advance(self, now: float) -> None:
        """Work through every step that has ended by `now`."""
        while True:
            if self._step_end is None:
                if not self.waiting:
                    return
                self._start_step(self._first_start())
                if self._step_end is None:  # every slot is held
                    return
            if self._step_end > now:
                return
            start = self._finish_step()
            if self._step_end is None or self._step_fresh or not self.running:
                continue
            # Nothing changes until the first running stream ends, or a waiting one may join: skip the
            # whole steps up to then (none of their starts admits anyone).
            length = self._step_end - start
            left = min(len(s.output) - s.decoded for s in self.running)
            skip = min(int((now - self._step_end) // length), left - 1)
            if self.waiting and len(self.running) + self.background < self.config.batch_limit:
                skip = min(skip, math.ceil((self.waiting[0].arrived - start) / length) - 1)
            if skip > 0:
                for stream in self.running:
                    stream.decoded += skip
                self.counters.generation_tokens += skip * len(self.running)
                self._step_end += skip * length

    def _flush(self) -> None:
        for stream in [*self.running, *self._ended]:
            if stream.decoded > stream.visible or stream.finished is not None:
                stream.visible = stream.decoded
                stream.wake.set()
        self._ended.clear()

    def _next_event(self) -> float | None:
        """When the next first or last token is decoded (simulated), if anything runs."""
        if self._step_end is None:
            return None
        if not self.running or any(s.decoded == 0 for s in self.running):
            return self._step_end
        left = min(len(s.output) - s.decoded for s in self.running)
        return self._step_end + (left - 1) * self.config.step_s(self.num_running)

    async def run(self) -> None:
        """The engine's loop, for as long as the server runs."""
        scale, flush = self.config.time_scale, self.config.flush_interval_s
        while True:
            self._kick.clear()
            now = self.now()
            self.advance(now)
            self._flush()
            event = self._next_event()
            timeout = None if event is None else min(max(event - now, 0.0) / scale, flush)
            with suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), timeout)
