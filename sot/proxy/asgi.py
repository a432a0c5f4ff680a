"""The proxy's responses at the ASGI level: one task per exchange that also watches for the client leaving.

An ``Exchange`` runs its work (answer a chat request, relay a pass-through) while a sibling task waits
on ``receive()`` for ``http.disconnect``; when the client goes, the work is cancelled at once, which
closes every upstream call it had open. A ``Sender`` writes JSON, the start of a response, body parts
and SSE events, and knows whether the status line has gone out.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .. import constants
from .limits import Busy, Gate
from .openai_errors import error_body

log = logging.getLogger("sot.proxy")


class Sender:
    def __init__(self, send: Send, on_complete: Callable[[int], None] | None = None) -> None:
        self._send = send
        self._on_complete = on_complete
        self.started = False
        self.complete = False
        self.status = 0

    def _completing(self) -> None:
        # Told before the last part goes out, so whatever the client does next sees it counted.
        self.complete = True
        if self._on_complete is not None:
            self._on_complete(self.status)

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        self.started = True
        self.status = status
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        await self._send({"type": "http.response.start", "status": status, "headers": raw})

    async def body(self, data: bytes) -> None:
        if data:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self) -> None:
        self._completing()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        await self.start(status, [("content-type", "application/json"), *(headers or {}).items()])
        self._completing()
        await self._send({"type": "http.response.body", "body": data, "more_body": False})

    async def error(
        self, status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        await self.json(status, error_body(message, status, code), headers)

    async def start_events(self, headers: dict[str, str]) -> None:
        base = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
        }
        await self.start(200, [*base.items(), *headers.items()])

    async def event(self, payload: Any) -> None:
        await self.events([payload])

    async def events(self, payloads: list[Any], last: bool = False) -> None:
        """SSE events in one write (`last`: and the end of the response)."""
        data = "".join(
            f"data: {p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads
        ).encode()
        if last:
            self._completing()
        await self._send({"type": "http.response.body", "body": data, "more_body": not last})


Work = Callable[[Sender], Awaitable[None]]


class Exchange(Response):
    """A response whose body is produced by `work`, cancelled the moment the client disconnects."""

    def __init__(self, work: Work, gate: Gate | None = None, on_busy: Callable[[], None] | None = None) -> None:
        super().__init__()
        self._work = work
        self._gate = gate
        self._on_busy = on_busy
        # Told the status sent (499: the client left before one) once the exchange is over.
        self.done: Callable[[int], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sender = Sender(send, on_complete=self.done)
        try:
            await self._exchange(receive, sender)
        finally:
            if self.done is not None and not sender.complete:
                self.done(499)  # the client left, or the response was cut, before it was complete

    async def _exchange(self, receive: Receive, sender: Sender) -> None:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                await self._run(sender)
            except Exception:
                log.exception("the proxy failed to answer a request")
                if not sender.started:
                    await sender.error(500, "the proxy failed to answer this request", "internal_error")
            tg.cancel_scope.cancel()

    async def _run(self, sender: Sender) -> None:
        if self._gate is None:
            await self._work(sender)
            return
        try:
            async with self._gate.slot():
                await self._work(sender)
        except Busy:
            if self._on_busy is not None:
                self._on_busy()
            await sender.error(
                429,
                "the proxy is at its limit of concurrent requests; retry shortly",
                "rate_limit_exceeded",
                {"Retry-After": str(constants.PROXY_RETRY_AFTER_S)},
            )
