"""Upstream connections in several small pools instead of one large one.

httpcore's pool re-examines every connection it holds each time a request joins or leaves it: a
readability poll on each idle one, and a count of the idle ones for each idle one. At the proxy's
64 connections and 50 concurrent streams that bookkeeping was a fifth of the proxy's CPU. Pools of
`POOL_SHARD_CONNECTIONS` keep it small; each request goes to the pool with the fewest requests in flight
(the first of those, so keep-alive connections are reused rather than spread thin), which fills
them evenly and queues only when all are full.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Sequence

from sot import constants

from ._httpx import httpx


class _Counted(httpx.AsyncByteStream):
    """A response body that gives its request's place back once, when it is closed."""

    def __init__(self, stream: httpx.AsyncByteStream, release: ShardedTransport, shard: int) -> None:
        self._stream = stream
        self._release: ShardedTransport | None = release
        self._shard = shard

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.__aiter__()  # the body's own iterator: no layer per chunk

    async def aclose(self) -> None:
        if self._release is not None:
            self._release.in_flight[self._shard] -= 1
            self._release = None
        await self._stream.aclose()


class ShardedTransport(httpx.AsyncBaseTransport):
    """Requests spread over `shards`, each to the one with the fewest in flight."""

    def __init__(self, shards: Sequence[httpx.AsyncBaseTransport]) -> None:
        self.shards = list(shards)
        self.in_flight = [0] * len(self.shards)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        shard = self.in_flight.index(min(self.in_flight))
        self.in_flight[shard] += 1
        try:
            response = await self.shards[shard].handle_async_request(request)
        except BaseException:
            self.in_flight[shard] -= 1
            raise
        if response.is_closed:  # a body given whole, already read
            self.in_flight[shard] -= 1
        else:
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = _Counted(response.stream, self, shard)
        return response

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


def pooled_transport(max_connections: int, verify: ssl.SSLContext | bool = True) -> ShardedTransport:
    """`max_connections` to upstreams in pools of `POOL_SHARD_CONNECTIONS` (at most `POOL_SHARDS`
    pools), each keeping all of its connections alive for `POOL_KEEPALIVE_EXPIRY_S`."""
    count = max(1, min(constants.POOL_SHARDS, -(-max_connections // constants.POOL_SHARD_CONNECTIONS)))
    sizes = [max_connections // count + (i < max_connections % count) for i in range(count)]
    # One TLS context for all: loading the CA bundle takes tens of milliseconds each time.
    context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify)
    return ShardedTransport(
        [
            httpx.AsyncHTTPTransport(
                verify=context,
                limits=httpx.Limits(
                    max_connections=size,
                    max_keepalive_connections=size,
                    keepalive_expiry=constants.POOL_KEEPALIVE_EXPIRY_S,
                ),
            )
            for size in sizes
        ]
    )
