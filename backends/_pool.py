"""Upstream connections in several small pools instead of one large one.

httpcore's pool re-examines every connection it holds each time a request joins or leaves it: a
readability poll on each idle one, and a count of the idle ones for each idle one. At the proxy's
64 connections and 50 concurrent streams that bookkeeping was a fifth of the proxy's CPU. Pools of
`POOL_SHARD_CONNECTIONS` keep it small. A request waits for room in the whole (first come, first
served), then goes to the pool with the most room (the first of those, so keep-alive connections are
reused rather than spread thin): it never queues in one pool while another has a free connection.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import httpx

from sot import constants


class _Counted(httpx.AsyncByteStream):
    """A response body that gives its request's place back once, when it is closed."""

    def __init__(self, stream: httpx.AsyncByteStream, transport: ShardedTransport, shard: int) -> None:
        self._stream = stream
        self._transport: ShardedTransport | None = transport
        self._shard = shard

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.__aiter__()  # the body's own iterator: no layer per chunk

    async def aclose(self) -> None:
        if self._transport is not None:
            self._transport.release(self._shard)
            self._transport = None
        await self._stream.aclose()


class ShardedTransport(httpx.AsyncBaseTransport):
    """Requests spread over `shards` of `sizes` connections: at most their sum in flight."""

    def __init__(self, shards: Sequence[httpx.AsyncBaseTransport], sizes: Sequence[int]) -> None:
        self.shards = list(shards)
        self.sizes = list(sizes)
        self.in_flight = [0] * len(self.shards)
        self._room = anyio.Semaphore(sum(self.sizes))

    def release(self, shard: int) -> None:
        self.in_flight[shard] -= 1
        self._room.release()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await self._room.acquire()
        free = [size - used for size, used in zip(self.sizes, self.in_flight, strict=True)]
        shard = free.index(max(free))
        self.in_flight[shard] += 1
        try:
            response = await self.shards[shard].handle_async_request(request)
        except BaseException:
            self.release(shard)
            raise
        if response.is_closed:  # a body given whole, already read
            self.release(shard)
        else:
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = _Counted(response.stream, self, shard)
        return response

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


def _limits(connections: int) -> httpx.Limits:
    """A pool that keeps every connection it may open alive, for `POOL_KEEPALIVE_EXPIRY_S`."""
    return httpx.Limits(
        max_connections=connections,
        max_keepalive_connections=connections,
        keepalive_expiry=constants.POOL_KEEPALIVE_EXPIRY_S,
    )


def pooled_transport(max_connections: int, verify: ssl.SSLContext | bool = True) -> ShardedTransport:
    """`max_connections` to upstreams in pools of `POOL_SHARD_CONNECTIONS` (at most `POOL_SHARDS`)."""
    count = max(1, min(constants.POOL_SHARDS, -(-max_connections // constants.POOL_SHARD_CONNECTIONS)))
    sizes = [max_connections // count + (i < max_connections % count) for i in range(count)]
    # One TLS context for all: loading the CA bundle takes tens of milliseconds each time.
    context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify)
    return ShardedTransport([httpx.AsyncHTTPTransport(verify=context, limits=_limits(size)) for size in sizes], sizes)


def upstream_client(max_connections: int, verify: ssl.SSLContext | bool = True, **options: Any) -> httpx.AsyncClient:
    """An httpx client for an upstream, its connections pooled as above. Where the environment names
    a proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), httpx's own pool, which honours it: httpx reads the
    environment only when it makes the transport itself."""
    if any(scheme in urllib.request.getproxies() for scheme in ("http", "https", "all")):
        return httpx.AsyncClient(verify=verify, limits=_limits(max_connections), **options)
    return httpx.AsyncClient(transport=pooled_transport(max_connections, verify), **options)
