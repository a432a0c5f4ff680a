"""Server-sent events from raw response bytes, with every size a server controls capped.

Lines end only where SSE says they do (CR, LF or CRLF): a U+2028, U+2029 or U+0085 inside a JSON
chunk is legal JSON and stays part of its line (``str.splitlines`` and httpx's ``iter_lines`` split
there). The body is read as raw bytes and decompressed here, incrementally and in bounded pieces, so
a gzip bomb costs at most a cap's worth of memory: a line, an event, or the whole decompressed body
past its cap is a ``ProtocolError``. Comment lines (``: keep-alive``, ``: OPENROUTER PROCESSING``)
are dropped: only data counts as progress.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from sot import constants
from sot.errors import ProtocolError

# Decompressed bytes produced per step: bounds what one network chunk can expand into at once.
_STEP = 64 << 10


@dataclass(frozen=True)
class Caps:
    line_bytes: int = constants.SSE_MAX_LINE_BYTES
    event_bytes: int = constants.SSE_MAX_EVENT_BYTES
    body_bytes: int = constants.MAX_RESPONSE_BYTES


class _Decoder:
    """Content-Encoding undone in bounded steps (identity, gzip, deflate with or without zlib header)."""

    def __init__(self, encoding: str) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip().lower() not in ("", "identity")]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise ProtocolError("the server used a content encoding sot did not ask for")
        self._raw_deflate_tried = not codings or codings[0] != "deflate"
        # 47: a gzip or zlib header, detected; 15: zlib (deflate as the HTTP spec means it).
        wbits = 15 if codings and codings[0] == "deflate" else 47
        self._zlib = zlib.decompressobj(wbits) if codings else None
        self._produced = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        """The decompressed bytes of `data`, lazily, at most _STEP at a time."""
        if self._zlib is None:
            if data:
                yield data
            return
        pending = data
        while True:
            try:
                piece = self._zlib.decompress(pending, _STEP)
            except zlib.error:
                if not self._raw_deflate_tried and not self._produced:
                    self._raw_deflate_tried = True
                    self._zlib = zlib.decompressobj(-15)  # raw deflate, as some servers send it
                    continue
                raise ProtocolError("the server sent a corrupt compressed body") from None
            pending = self._zlib.unconsumed_tail
            if piece:
                self._produced = True
                yield piece
            elif not pending:
                return


class BoundedBody:
    """Decompressed body bytes from raw chunks, failing past the body cap."""

    def __init__(self, raw: AsyncIterator[bytes], encoding: str, limit: int) -> None:
        self._raw = raw
        self._decoder = _Decoder(encoding)
        self._limit = limit
        self.total = 0
        self.head = b""  # the first bytes, to tell an HTML page from a stream

    async def chunks(self) -> AsyncIterator[bytes]:
        async for data in self._raw:
            for piece in self._decoder.decode(data):
                if len(self.head) < 64:
                    self.head += piece[: 64 - len(self.head)]
                self.total += len(piece)
                if self.total > self._limit:
                    raise _too_long("a response (decompressed)", self._limit)
                yield piece

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.chunks()])


def _too_long(what: str, limit: int) -> ProtocolError:
    return ProtocolError(f"the server sent {what} longer than {limit >> 10} kB; sot stopped reading it")


async def lines(body: AsyncIterator[bytes], max_line: int) -> AsyncIterator[bytes]:
    """Lines split on CR, LF or CRLF only (without their ending); the last unterminated line too."""
    buffer = bytearray()
    skip_lf = False
    async for data in body:
        start = 0
        if skip_lf and data[:1] == b"\n":
            start = 1
        skip_lf = False
        while True:
            cr = data.find(b"\r", start)
            lf = data.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                buffer += data[start:]
                if len(buffer) > max_line:
                    raise _too_long("a line", max_line)
                break
            end = min(ends)
            buffer += data[start:end]
            if len(buffer) > max_line:
                raise _too_long("a line", max_line)
            yield bytes(buffer)
            buffer.clear()
            if data[end : end + 1] == b"\r":
                if end + 1 == len(data):
                    skip_lf = True  # a CRLF split across two reads
                elif data[end + 1 : end + 2] == b"\n":
                    end += 1
            start = end + 1
    if buffer:
        yield bytes(buffer)


async def events(body: AsyncIterator[bytes], caps: Caps = Caps()) -> AsyncIterator[str]:
    """The data of each event (its data lines joined with LF); comments and other fields dropped."""
    data: list[str] = []
    size = 0
    async for raw in lines(body, caps.line_bytes):
        if not raw:
            if data:
                yield "\n".join(data)
            data, size = [], 0
            continue
        if raw.startswith(b":"):
            continue  # a comment: keep-alives and provider notes are not progress
        field, _, value = raw.partition(b":")
        if field != b"data":
            continue  # event:, id:, retry: carry nothing a chat stream needs
        if value.startswith(b" "):
            value = value[1:]
        size += len(value)
        if size > caps.event_bytes:
            raise _too_long("an event", caps.event_bytes)
        try:
            data.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            raise ProtocolError("the server sent a stream that is not UTF-8 text") from None
    if data:
        yield "\n".join(data)  # the last event, when the body ends without its blank line
