from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sot.fake_server import FakeServer, Handler


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake() -> Iterator[Callable[[Handler], FakeServer]]:
    """Start fake servers with a handler; all are stopped at the end of the test."""
    servers: list[FakeServer] = []

    def start(handler: Handler) -> FakeServer:
        server = FakeServer(handler).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)
    errors = [error for server in servers for error in server.handler_errors]
    if errors:
        raise errors[0]
