from __future__ import annotations

import signal
from collections.abc import Callable, Iterator

import pytest
from _fakes import FakeServer, Handler

# A shell without job control starts background commands with SIGINT ignored, and children inherit
# that across exec, so the Ctrl-C tests would fail for the launcher's sake. A handled signal resets to default on exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _outside_the_checkout(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test, and every command it starts, runs outside the checkout: `python -c` there would import
    the source folder, where sot.backends is not (setuptools installs backends/ inside the package)."""
    monkeypatch.chdir(tmp_path_factory.getbasetemp())


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
