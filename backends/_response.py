"""Reading one chat response: an error status with its body, one completion object (a server that
ignores stream=true), or an SSE stream of chunks to its end."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import httpx

from sot import constants
from sot.errors import ProtocolError

from . import _sse
from ._chunks import ErrorBody, StreamChunk, parse_chunk, parse_completion
from ._errors import HttpStatus, NotAnApi, StreamError, looks_like_html
from ._reasoning import ChunkFilter
from .base import ChatChunk


def chat_chunk(chunk: StreamChunk) -> ChatChunk:
    """A parsed chunk as the backend's ``ChatChunk``, reasoning apart (``ChunkFilter`` splits ``<think>`` text)."""
    return ChatChunk(text=chunk.text, finish_reason=chunk.finish_reason, usage=chunk.usage, reasoning=chunk.reasoning)


async def error_status(response: httpx.Response, encoding: str, stall: float) -> HttpStatus:
    """An error status with (the first part of) its body, for the message."""
    bounded = _sse.BoundedBody(response.aiter_raw(), encoding, constants.MAX_ERROR_BODY_BYTES)
    body = bytearray()
    try:
        with anyio.move_on_after(stall):
            async for piece in bounded.chunks():
                body += piece
    except (ProtocolError, httpx.ReadTimeout):
        pass  # an over-long or stalled error body: its first part is enough for the message
    return HttpStatus(response.status_code, response.headers, bytes(body))


async def completion(response: httpx.Response, bounded: _sse.BoundedBody, stall: float) -> ChatChunk:
    try:
        with anyio.fail_after(stall):
            raw = await bounded.read()
    except TimeoutError:
        raise _sse.Stalled(stall) from None
    if looks_like_html(raw, ""):
        raise NotAnApi()
    parsed = parse_completion(json.loads(raw))
    if parsed.error is not None:
        raise StreamError(parsed.error, response.headers)
    return chat_chunk(parsed)


async def events(
    response: httpx.Response, bounded: _sse.BoundedBody, stall: float, answer_only: ChunkFilter
) -> AsyncIterator[ChatChunk]:
    """The chunks of an SSE answer, until [DONE] or a finish; a stream that ends before either is an error."""
    finished = False
    events = _sse.events(bounded.chunks(), stall_s=stall)
    async for data in events:
        if data.strip() == "[DONE]":
            finished = True  # some servers end with [DONE] and never send a finish_reason
            await _drain(events, stall)
            break
        for payload in _payloads(data):
            parsed = parse_chunk(payload)
            if parsed.error is None and parsed.finish_reason == "error":
                parsed = replace(parsed, error=ErrorBody(message="the answer ended with finish_reason 'error'"))
            if parsed.error is not None:
                raise StreamError(parsed.error, response.headers)
            finished = finished or parsed.finish_reason is not None
            chunk = answer_only(chat_chunk(parsed))
            if chunk is not None:
                yield chunk
            if answer_only.stopped:  # a stop the server refused, applied here: cut, close the stream
                return
    if finished and (tail := answer_only.end()) is not None:
        yield tail  # text held back (a partial tag or stop string) when [DONE] came without a finish
    if not finished:
        if looks_like_html(bounded.head, ""):
            raise NotAnApi()
        if not bounded.total:
            raise ProtocolError("the server answered with an empty body")
        raise ProtocolError("the stream ended before the answer was complete")


async def _drain(events: AsyncIterator[str], stall: float) -> None:
    """Read to the body's end (briefly) so the connection goes back to the pool."""
    with anyio.move_on_after(min(stall, 1.0)):
        try:
            async for _ in events:
                pass
        except (httpx.HTTPError, _sse.Stalled, ProtocolError):
            pass  # the answer is whole; whatever follows [DONE] only costs the connection


def _payloads(data: str) -> list[Any]:
    """The JSON values of one event's data: usually one; a server that omits the blank line between
    events gets its data lines read one by one."""
    try:
        return [json.loads(data)]
    except ValueError:
        if "\n" not in data:
            if data.lstrip()[:1] == "<":
                raise NotAnApi() from None
            raise ProtocolError("the server sent a malformed chunk (not JSON)") from None
    values: list[Any] = []
    for line in data.split("\n"):
        if line.strip() and line.strip() != "[DONE]":
            try:
                values.append(json.loads(line))
            except ValueError:
                raise ProtocolError("the server sent a malformed chunk (not JSON)") from None
    return values
