"""Several endpoints behind one backend: spread calls, skip failing servers, keep prefix affinity.

Each endpoint has its own in-flight limit. A call prefers the endpoint its prompt's prefix hashes
to (so the expansions of one question meet one server's prefix cache) while that endpoint has
room, and otherwise the least loaded healthy one. An endpoint whose call fails with a retryable
error (a stall on its stall deadline included) or refuses connections is out of rotation for a
cooldown; the call itself fails, and sot's one retry loop (``sot.calls``) sends the next attempt
elsewhere, so no point is lost and order is kept. A refusal, final on a lone server, is retried
here while another endpoint is in rotation.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

import anyio

from sot.errors import BackendConnectionError, BackendError, ConfigurationError

from ._load import LoadReading, combined
from .base import Backend, ChatChunk, ChatRequest, LoadAware

COOLDOWN_S = 30.0


@dataclass
class Endpoint:
    backend: Backend
    limit: int
    in_flight: int = 0
    down_until: float = 0.0
    limiter: anyio.CapacityLimiter = field(init=False)

    def __post_init__(self) -> None:
        self.limiter = anyio.CapacityLimiter(self.limit)

    def healthy(self, now: float) -> bool:
        return now >= self.down_until


class EndpointPool:
    def __init__(self, backends: Sequence[Backend], *, per_endpoint_limit: int, cooldown_s: float = COOLDOWN_S) -> None:
        if not backends:
            raise ConfigurationError("at least one endpoint is needed")
        self.endpoints = [Endpoint(b, per_endpoint_limit) for b in backends]
        self.cooldown_s = cooldown_s
        self.model = backends[0].model
        self.name = f"{backends[0].name} x{len(backends)}"

    def __repr__(self) -> str:
        return f"EndpointPool({len(self.endpoints)} endpoints, model={self.model!r})"

    def pick(self, request: ChatRequest) -> Endpoint:
        now = time.monotonic()
        healthy = [e for e in self.endpoints if e.healthy(now)]
        if not healthy:  # all cooling down: try the one that comes back first
            return min(self.endpoints, key=lambda e: e.down_until)
        prefix = request.messages[0].content[:200] if request.messages else ""
        preferred = self.endpoints[zlib.crc32(prefix.encode()) % len(self.endpoints)]
        if preferred in healthy and preferred.in_flight < preferred.limit:
            return preferred
        return min(healthy, key=lambda e: e.in_flight / e.limit)

    async def _acquire(self, request: ChatRequest) -> Endpoint:
        """An endpoint with room for this call, healthy when it gets the room where any other is."""
        while True:
            endpoint = self.pick(request)
            # Counted before waiting for its limiter, so calls picking at the same moment see the load.
            endpoint.in_flight += 1
            try:
                await endpoint.limiter.acquire()
            except BaseException:
                endpoint.in_flight -= 1
                raise
            now = time.monotonic()
            if endpoint.healthy(now) or not any(e.healthy(now) for e in self.endpoints):
                return endpoint
            # It went down (a stall, a refusal) while this call waited for room there: pick again.
            endpoint.limiter.release()
            endpoint.in_flight -= 1

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        endpoint = await self._acquire(request)
        try:
            async for chunk in endpoint.backend.stream_chat(request):
                yield chunk
        except BackendError as exc:
            refused = isinstance(exc, BackendConnectionError)
            if exc.retryable or refused:
                now = time.monotonic()
                endpoint.down_until = now + self.cooldown_s
                if refused and not exc.retryable and any(e.healthy(now) for e in self.endpoints):
                    exc.retryable = True  # another server can take the retry
            raise
        finally:
            endpoint.limiter.release()
            endpoint.in_flight -= 1

    @property
    def in_flight(self) -> int:
        return sum(endpoint.in_flight for endpoint in self.endpoints)

    async def load(self) -> LoadReading | None:
        """The pool's load: its servers' together, where every one of them publishes it."""
        backends = [endpoint.backend for endpoint in self.endpoints if isinstance(endpoint.backend, LoadAware)]
        if len(backends) < len(self.endpoints):
            return None
        readings: list[LoadReading | None] = [None] * len(backends)

        async def read(index: int, backend: LoadAware) -> None:
            readings[index] = await backend.load()

        async with anyio.create_task_group() as group:  # all at once: each may take its read timeout
            for index, backend in enumerate(backends):
                group.start_soon(read, index, backend)
        known = [reading for reading in readings if reading is not None]
        return combined(known) if len(known) == len(readings) else None

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.backend.aclose()
