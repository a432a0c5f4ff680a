"""The ``Client``s answers come from: one per (model, upstream key), sharing one bound on upstream calls.

With the embedded local backend there is exactly one, started with the proxy and shared by every
request. With an upstream, a request's model (unless ``--model`` fixes it) and, where no upstream key
is configured, the client's own key pick the client; idle ones are closed when too many are open.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from .. import constants
from ..client import Client
from ..errors import RateLimitError
from .settings import ProxySettings


@dataclass
class _Entry:
    client: Client
    users: int = 0
    last_used: float = 0.0


class ClientPool:
    def __init__(self, settings: ProxySettings, max_clients: int = constants.PROXY_MAX_CLIENTS) -> None:
        self.settings = settings
        self.max_clients = max_clients
        self.limiter = anyio.CapacityLimiter(settings.max_upstream_calls)
        self._entries: dict[tuple[str | None, str | None], _Entry] = {}
        self._lock = anyio.Lock()

    def _make(self, model: str | None, key: str | None) -> Client:
        s = self.settings
        return Client(
            base_url=list(s.upstream) or None,
            model=model,
            api_key=key,
            api_key_from_env=False,  # the key is the configured one or the client's, never the environment's
            dialect=s.dialect,
            gguf=s.gguf,
            llama_server=s.llama_server,
            limiter=self.limiter,
            **s.options,
        )

    def _key(self, model: str, client_key: str | None) -> tuple[str | None, str | None]:
        s = self.settings
        if s.local:
            return None, None
        key = s.upstream_api_key if not s.forwards_client_auth else client_key
        return (s.model or model or None), key

    async def start(self) -> Client | None:
        """With the local backend: start it now (once, shared by all requests) and return its client."""
        if not self.settings.local:
            return None
        async with self.lease("", None) as client:
            await client.backend()
            return client

    @asynccontextmanager
    async def lease(self, model: str, client_key: str | None) -> AsyncIterator[Client]:
        key = self._key(model, client_key)
        async with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                if len(self._entries) >= self.max_clients:
                    await self._evict()
                entry = self._entries[key] = _Entry(self._make(*key))
            entry.users += 1
        try:
            yield entry.client
        finally:
            entry.users -= 1
            entry.last_used = time.monotonic()

    async def _evict(self) -> None:
        idle = [(e.last_used, k) for k, e in self._entries.items() if e.users == 0]
        if not idle:
            raise RateLimitError("too many distinct models and keys in use at once; retry shortly", retry_after=1.0)
        _, key = min(idle)
        await self._entries.pop(key).client.aclose()

    async def upstream_urls(self) -> list[str]:
        """Where pass-through requests go: the upstreams, or the local server (started if need be)."""
        if self.settings.upstream:
            return list(self.settings.upstream)
        from ..backends.local import LocalChat

        client = await self.start()
        if client is None:
            return []
        backend = await client.backend()
        # The local server may be another command's, replaced by another when that command ends.
        return [await backend.live_url()] if isinstance(backend, LocalChat) else client.base_urls

    async def aclose(self) -> None:
        entries, self._entries = self._entries, {}
        for entry in entries.values():
            await entry.client.aclose()
