"""A scripted OpenAI-compatible server on 127.0.0.1 for tests and benchmarks.

Real HTTP/1.1 with keep-alive and SSE over chunked encoding, run on its own event loop thread.
A handler maps each request to a ``Reply``: text streamed word by word with a per-token delay,
an error status with headers (429 + Retry-After ...), or a fault: ``reset`` (drop the
connection), ``stall`` (stop sending, keep the socket open; with ``keepalive_s`` it sends SSE
comments meanwhile, as DeepSeek and OpenRouter do), ``cut`` (end the stream before its final chunk)
or ``malformed`` (a chunk that is not JSON). Hostile modes: ``events`` (raw SSE blocks sent verbatim:
wrong chunk shapes, mid-stream errors, comments), ``body`` (any bytes with any content type and
encoding: an HTML page, a gzip bomb), ``ensure_ascii=False`` (raw U+2028 inside JSON), and
``models_byte_delay`` (``/models`` trickled one byte at a time). The server records every request
with timestamps, counts requests in flight and open connections, and lets tests wait on conditions
instead of sleeping. Replies, request records and ``sot_script`` live in ``replies``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from functools import partial
from typing import Any

import anyio
import anyio.from_thread
from anyio.abc import ByteStream, SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream

from .replies import Fault, Handler, Reply, SeenRequest, classify, sot_script

_SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
# How a client leaving shows up on the server's side of a socket.
_CLIENT_GONE = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text) or [""]


class FakeServer:
    """Context manager: ``with FakeServer(handler) as server: server.url``."""

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        model: str = "fake-model",
        port: int = 0,
        models_byte_delay: float = 0.0,
    ) -> None:
        self.handler = handler or sot_script()
        self.model = model
        self.models_byte_delay = models_byte_delay
        self.requests: list[SeenRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.open_connections = 0
        self.connections_opened = 0
        self.handler_errors: list[BaseException] = []
        self.port = port
        self._cond = threading.Condition()
        self._stack = ExitStack()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeServer:
        portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        listener = portal.call(lambda: anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port))
        self.port = listener.extra(SocketAttribute.local_port)
        future = portal.start_task_soon(listener.serve, self._connection)
        self._stack.callback(portal.call, listener.aclose)
        self._stack.callback(future.cancel)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    # Conditions tests wait on (no sleeps as synchronisation)
    def wait_for(self, predicate: Callable[[FakeServer], bool], timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout)

    def _changed(self, update: Callable[[], None]) -> None:
        with self._cond:
            update()
            self._cond.notify_all()

    def of_kind(self, kind: str) -> list[SeenRequest]:
        return [r for r in self.requests if r.kind == kind]

    async def _connection(self, stream: ByteStream) -> None:
        def opened() -> None:
            self.open_connections += 1
            self.connections_opened += 1

        self._changed(opened)
        try:
            reader = BufferedByteReceiveStream(stream)
            while await self._one_request(stream, reader):
                pass
        except _CLIENT_GONE:
            pass  # the client went away; that is how connections end
        except Exception as exc:
            # One broken exchange must not stop the listener (every later client would hang);
            # the error is kept for the test to raise.
            self._changed(partial(self.handler_errors.append, exc))
        finally:
            await stream.aclose()
            self._changed(lambda: setattr(self, "open_connections", self.open_connections - 1))

    async def _one_request(self, stream: ByteStream, reader: BufferedByteReceiveStream) -> bool:
        head = (await reader.receive_until(b"\r\n\r\n", 1 << 20)).decode("latin-1")
        request_line, *header_lines = head.split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines if ":" in h)}
        length = int(headers.get("content-length", "0"))
        raw = await reader.receive_exactly(length) if length else b""
        if method == "GET":
            await self._get(stream, path)
            return True
        body = json.loads(raw or b"{}")
        request = SeenRequest(len(self.requests) + 1, path, headers, body, time.monotonic())
        classify(request)
        self._changed(lambda: self.requests.append(request))
        reply = self.handler(request)

        def enter() -> None:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

        self._changed(enter)
        try:
            if reply.hold_until is not None:
                await anyio.to_thread.run_sync(reply.hold_until.wait, abandon_on_cancel=True)
            return await self._respond(stream, request, reply)
        finally:

            def leave() -> None:
                self.in_flight -= 1
                request.finished_at = time.monotonic()
                request.status = reply.status

            self._changed(leave)

    async def _get(self, stream: ByteStream, path: str) -> None:
        if path.rstrip("/").endswith("/models"):
            payload: dict[str, Any] = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        else:
            payload = {"status": "ok"}
        if self.models_byte_delay:
            data = json.dumps(payload).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            for byte in head.encode() + data:
                await stream.send(bytes([byte]))
                await anyio.sleep(self.models_byte_delay)
            return
        await self._send_json(stream, 200, payload, {})

    async def _send_body(self, stream: ByteStream, reply: Reply) -> None:
        body = reply.body or b""
        extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
        if reply.content_encoding:
            extra += f"Content-Encoding: {reply.content_encoding}\r\n"
        head = f"HTTP/1.1 {reply.status} X\r\nContent-Type: {reply.content_type}\r\nContent-Length: {len(body)}\r\n"
        await stream.send(f"{head}{extra}\r\n".encode())
        for start in range(0, len(body), 1 << 16):
            await stream.send(body[start : start + (1 << 16)])

    async def _send_json(self, stream: ByteStream, status: int, payload: Any, headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        await stream.send(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            f"{extra}\r\n".encode()
            + data
        )

    async def _respond(self, stream: ByteStream, request: SeenRequest, reply: Reply) -> bool:
        if reply.fault == "reset" and reply.fault_after == 0:
            return False
        if reply.body is not None:
            await self._send_body(stream, reply)
            return True
        if reply.status != 200:
            body = reply.error_body or {"error": {"message": f"scripted status {reply.status}"}}
            await self._send_json(stream, reply.status, body, reply.headers)
            return True
        if reply.events is not None:
            await stream.send(_SSE_HEAD)
            for block in reply.events:
                data = block.encode()
                await stream.send(b"%x\r\n%s\r\n" % (len(data), data))
            await stream.send(b"0\r\n\r\n")
            return True
        if not reply.stream:
            message = {"role": "assistant", "content": reply.text}
            completion = {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
            await self._send_json(stream, 200, completion, {})
            return True
        await stream.send(_SSE_HEAD)
        # A stalled server only notices the client leaving by reading: watch for EOF meanwhile.
        client_left = False
        keep = False
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal client_left
                with suppress(*_CLIENT_GONE):
                    await stream.receive()
                client_left = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            # Caught here, not outside: out of a task group it would come wrapped in an ExceptionGroup.
            try:
                keep = await self._stream(stream, request, reply)
            except _CLIENT_GONE:
                client_left = True
            tg.cancel_scope.cancel()
        return keep and not client_left

    async def _stream(self, stream: ByteStream, request: SeenRequest, reply: Reply) -> bool:
        async def event(payload: str) -> None:
            data = f"data: {payload}\n\n".encode()
            await stream.send(b"%x\r\n%s\r\n" % (len(data), data))

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            return json.dumps(
                {
                    "id": f"chatcmpl-{request.number}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": self.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                },
                ensure_ascii=reply.ensure_ascii,
            )

        if reply.first_delay:
            await anyio.sleep(reply.first_delay)
        words = _words(reply.text)
        for sent, word in enumerate(words):
            if reply.fault and sent == reply.fault_after:
                return await self._fault(stream, reply.fault, event, reply.keepalive_s)
            if sent and reply.token_delay:
                await anyio.sleep(reply.token_delay)
            await event(chunk({"role": "assistant", "content": word} if sent == 0 else {"content": word}))
        if reply.fault:
            return await self._fault(stream, reply.fault, event, reply.keepalive_s)
        if reply.finish_reason is not None:
            await event(chunk({}, reply.finish_reason))
        usage = {"prompt_tokens": len(request.prompt.split()), "completion_tokens": len(words)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        await event(json.dumps({"id": "u", "object": "chat.completion.chunk", "choices": [], "usage": usage}))
        done = b"data: [DONE]\n\n"
        await stream.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))  # one write, as servers flush it
        return True

    async def _fault(
        self, stream: ByteStream, fault: Fault, event: Callable[[str], Any], keepalive_s: float = 0.0
    ) -> bool:
        if fault == "stall":
            while keepalive_s:
                await anyio.sleep(keepalive_s)
                comment = b": keep-alive\n\n"
                await stream.send(b"%x\r\n%s\r\n" % (len(comment), comment))
            await anyio.sleep_forever()
        if fault == "malformed":
            await event("{this is not json")
            await stream.send(b"0\r\n\r\n")
            return True
        if fault == "cut":
            await stream.send(b"0\r\n\r\n")  # a clean end of body, but no final chunk, no [DONE]
            return True
        return False  # reset: drop the connection mid-body


def main(argv: list[str] | None = None) -> None:
    """Serve the default script until interrupted, to try the CLI by hand (``cd tests && python -m _fakes``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token-delay", type=float, default=0.02)
    args = parser.parse_args(argv)
    with FakeServer(sot_script(token_delay=args.token_delay)) as server:
        print(server.url, flush=True)
        threading.Event().wait()
