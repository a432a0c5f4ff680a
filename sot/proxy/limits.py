"""Limits of the proxy: a client key, bounded concurrent requests with a bounded queue, a body size cap."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from starlette.requests import Request


class Busy(Exception):
    """No slot free within the queue's bounds: answer 429 with Retry-After."""


class TooLarge(Exception):
    """The request body is over the size limit: answer 413."""


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def authorized(authorization: str | None, key: str | None) -> bool:
    """Whether a client may use the proxy: always without a key, else with ``Bearer <key>`` (constant time)."""
    if key is None:
        return True
    token = bearer(authorization)
    return token is not None and hmac.compare_digest(token.encode(), key.encode())


class Gate:
    """At most `max_concurrent` requests at once; up to `max_queued` more wait up to `queue_timeout_s`."""

    def __init__(self, max_concurrent: int, max_queued: int, queue_timeout_s: float) -> None:
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.queue_timeout_s = queue_timeout_s
        self._slots = anyio.Semaphore(max_concurrent)
        self.queued = 0

    @property
    def active(self) -> int:
        return self.max_concurrent - self._slots.value

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._slots.value == 0:
            if self.queued >= self.max_queued:
                raise Busy
            self.queued += 1
            acquired = False
            try:
                with anyio.move_on_after(self.queue_timeout_s):
                    await self._slots.acquire()
                    acquired = True
                if not acquired:
                    raise Busy
            finally:
                self.queued -= 1
        else:
            await self._slots.acquire()
        try:
            yield
        finally:
            self._slots.release()


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing one over `limit` bytes before reading it when its length is declared."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise TooLarge
        parts.append(part)
    return b"".join(parts)
