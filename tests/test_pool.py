"""Upstream connections in small pools: each request to the pool with the fewest in flight."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from sot import constants
from sot.backends._pool import ShardedTransport, pooled_transport
from sot.fake_server import FakeServer, Reply

pytestmark = pytest.mark.anyio


async def _body() -> AsyncIterator[bytes]:
    yield b"o"
    yield b"k"


def _shards(count: int, seen: list[int]) -> ShardedTransport:
    def shard(number: int) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            seen.append(number)
            return httpx.Response(200, content=_body())  # streamed, as an upstream's answer is

        return httpx.MockTransport(handle)

    return ShardedTransport([shard(n) for n in range(count)])


async def test_open_responses_spread_and_closed_ones_give_their_place_back() -> None:
    seen: list[int] = []
    async with httpx.AsyncClient(transport=_shards(3, seen)) as http:
        first = await http.send(http.build_request("GET", "http://up/"), stream=True)
        second = await http.send(http.build_request("GET", "http://up/"), stream=True)
        third = await http.send(http.build_request("GET", "http://up/"), stream=True)
        await second.aclose()
        await second.aclose()  # a second close gives nothing back twice
        fourth = await http.send(http.build_request("GET", "http://up/"), stream=True)
        for response in (first, third, fourth):
            await response.aclose()
        fifth = await http.get("http://up/")  # read and closed: the first pool is free again
        sixth = await http.get("http://up/")
    assert seen == [0, 1, 2, 1, 0, 0]
    assert fifth.text == sixth.text == "ok"


async def test_a_failed_request_and_a_body_read_whole_give_their_place_back() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    def whole(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"ok")  # read as it is made

    transport = ShardedTransport([httpx.MockTransport(refuse), httpx.MockTransport(whole)])
    async with httpx.AsyncClient(transport=transport) as http:
        for _ in range(3):
            with pytest.raises(httpx.ConnectError):
                await http.get("http://up/")
        transport.in_flight[0] = 1
        assert (await http.get("http://up/")).text == "ok"
    assert transport.in_flight == [1, 0]


def test_pools_share_the_connection_limit() -> None:
    sizes = [s._pool._max_connections for s in pooled_transport(20).shards]  # type: ignore[attr-defined]
    assert sum(sizes) == 20 and max(sizes) <= constants.POOL_SHARD_CONNECTIONS
    assert len(pooled_transport(1).shards) == 1
    many = pooled_transport(2048).shards
    assert len(many) == constants.POOL_SHARDS
    contexts = {id(s._pool._ssl_context) for s in many}  # type: ignore[attr-defined]
    assert len(contexts) == 1  # one CA bundle loaded, not one per pool


async def test_real_connections_are_reused_within_a_pool() -> None:
    with FakeServer(lambda request: Reply("hello")) as server:
        transport = pooled_transport(16)
        async with httpx.AsyncClient(transport=transport) as http:
            for _ in range(5):
                response = await http.post(
                    f"{server.url}/chat/completions", json={"model": "m", "messages": [], "stream": False}
                )
                assert response.status_code == 200
            connections = [len(s._pool.connections) for s in transport.shards]  # type: ignore[attr-defined]
    assert connections == [1, 0]  # one after another: all on one kept-alive connection
