"""Upstream connections in small pools: each request to the pool with the fewest in flight."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from _fakes import FakeServer, Reply

from sot import constants
from sot.backends._pool import ShardedTransport, pooled_transport, upstream_client

pytestmark = pytest.mark.anyio


async def _body() -> AsyncIterator[bytes]:
    yield b"o"
    yield b"k"


def _shards(count: int, seen: list[int], size: int = 2) -> ShardedTransport:
    def shard(number: int) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            seen.append(number)
            return httpx.Response(200, content=_body())  # streamed, as an upstream's answer is

        return httpx.MockTransport(handle)

    return ShardedTransport([shard(n) for n in range(count)], [size] * count)


async def _open(http: httpx.AsyncClient) -> httpx.Response:
    return await http.send(http.build_request("GET", "http://up/"), stream=True)


async def test_open_responses_spread_and_closed_ones_give_their_place_back() -> None:
    seen: list[int] = []
    async with httpx.AsyncClient(transport=_shards(3, seen)) as http:
        first, second, third = await _open(http), await _open(http), await _open(http)
        await second.aclose()
        await second.aclose()  # a second close gives nothing back twice
        fourth = await _open(http)
        for response in (first, third, fourth):
            await response.aclose()
        fifth = await http.get("http://up/")  # read and closed: the first pool is free again
        sixth = await http.get("http://up/")
    assert seen == [0, 1, 2, 1, 0, 0]
    assert fifth.text == sixth.text == "ok"


async def test_a_request_waits_for_room_in_any_pool_not_in_one() -> None:
    seen: list[int] = []
    async with httpx.AsyncClient(transport=_shards(2, seen, size=1)) as http:
        first, second = await _open(http), await _open(http)
        done = anyio.Event()
        third: list[httpx.Response] = []

        async def waiting() -> None:
            third.append(await _open(http))
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.wait_all_tasks_blocked()
            assert not done.is_set()  # both pools full: it waits
            await second.aclose()  # the second pool frees first: the waiting request takes it
            with anyio.fail_after(1):
                await done.wait()
        for response in (first, *third):
            await response.aclose()
    assert seen == [0, 1, 1]


async def test_a_failed_request_and_a_body_read_whole_give_their_place_back() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    def whole(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"ok")  # read as it is made

    failing = ShardedTransport([httpx.MockTransport(refuse)], [1])
    reading = ShardedTransport([httpx.MockTransport(whole)], [1])
    with anyio.fail_after(1):  # a place not given back would leave the next request waiting forever
        async with httpx.AsyncClient(transport=failing) as http:
            for _ in range(3):
                with pytest.raises(httpx.ConnectError):
                    await http.get("http://up/")
        async with httpx.AsyncClient(transport=reading) as http:
            for _ in range(3):
                assert (await http.get("http://up/")).text == "ok"
    assert failing.in_flight == reading.in_flight == [0]


def test_a_proxy_named_by_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(upstream_client(8)._transport, ShardedTransport)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    client = upstream_client(8)
    assert not isinstance(client._transport, ShardedTransport)
    assert any(mount is not None for mount in client._mounts.values())  # httpx routes https through it


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
