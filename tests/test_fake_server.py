"""The test server itself: a client that vanishes mid-stream must not take the listener down."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import socket
import struct

import httpx
from _fakes import FakeServer, Reply, SeenRequest

BODY = b'{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'


def reset_mid_stream(port: int) -> None:
    """Start a streamed answer, read its first bytes, then abort the connection with a RST."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(BODY)
        sock.sendall(head + BODY)
        assert sock.recv(64).startswith(b"HTTP/1.1 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_clients_killed_mid_stream_do_not_stop_the_server(fake) -> None:
    # No token delay: the server is mostly inside a send when the reset lands, which is the case
    # that used to escape as an ExceptionGroup and stop the listener.
    server = fake(lambda request: Reply("word " * 5000))
    for _ in range(20):
        reset_mid_stream(server.port)
        assert server.wait_for(lambda s: s.open_connections == 0)
    assert [r.finished_at is not None for r in server.requests] == [True] * 20
    response = httpx.get(server.url + "/models", timeout=5)
    assert response.json()["data"][0]["id"] == "fake-model"


def test_a_handler_error_is_kept_and_later_requests_are_served() -> None:
    def handler(request: SeenRequest) -> Reply:
        if request.number == 1:
            raise ValueError("scripted handler bug")
        return Reply("fine", stream=False)

    with FakeServer(handler) as server:
        payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        with httpx.Client(timeout=5) as http:
            try:
                http.post(server.url + "/chat/completions", json=payload)
            except httpx.RemoteProtocolError:
                pass  # the connection is closed without an answer: the expected outcome
            else:
                raise AssertionError("the broken exchange should not have been answered")
            second = http.post(server.url + "/chat/completions", json=payload)
        assert second.json()["choices"][0]["message"]["content"] == "fine"
        assert [str(e) for e in server.handler_errors] == ["scripted handler bug"]
