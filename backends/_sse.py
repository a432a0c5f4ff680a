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
from time import monotonic

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


class Stalled(Exception):
    """Only comments (keep-alives) for longer than the stall limit: the server is alive but not answering."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


class _Parser:
    """Bytes in, complete events' data out; lines split on CR, LF or CRLF only.

    One synchronous pass per network chunk (no generator per line): a chunk usually holds one whole
    event, and this runs for every token of every stream the proxy relays.
    """

    def __init__(self, caps: Caps) -> None:
        self._caps = caps
        self._buffer = bytearray()
        self._skip_lf = False  # a CRLF split across two reads
        self._data: list[str] = []
        self._size = 0
        self.progress = False  # the last feed carried something other than comments

    def feed(self, chunk: bytes) -> list[str]:
        out: list[str] = []
        self.progress = False
        start, n = 0, len(chunk)
        if self._skip_lf and chunk[:1] == b"\n":
            start = 1
        self._skip_lf = False
        while start < n:
            lf = chunk.find(b"\n", start)
            cr = chunk.find(b"\r", start, lf if lf >= 0 else n)
            end = cr if cr >= 0 else lf
            if end < 0:
                self._buffer += chunk[start:]
                if len(self._buffer) > self._caps.line_bytes:
                    raise _too_long("a line", self._caps.line_bytes)
                # A long line arriving slowly is progress, unless it is a comment.
                self.progress = self.progress or self._buffer[:1] != b":"
                break
            if self._buffer:
                self._buffer += chunk[start:end]
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = chunk[start:end]
            if len(line) > self._caps.line_bytes:
                raise _too_long("a line", self._caps.line_bytes)
            if end == cr:
                if end + 1 == n:
                    self._skip_lf = True
                elif chunk[end + 1] == 10:  # LF
                    end += 1
            start = end + 1
            self._line(line, out)
        return out

    def end(self) -> list[str]:
        out: list[str] = []
        if self._buffer:
            self._line(bytes(self._buffer), out)
            self._buffer.clear()
        if self._data:
            out.append("\n".join(self._data))  # the last event, when the body ends without its blank line
        return out

    def _line(self, line: bytes, out: list[str]) -> None:
        if not line:
            if self._data:
                out.append("\n".join(self._data))
            self._data, self._size = [], 0
            return
        if line[0] == 58:  # ":", a comment: keep-alives and provider notes are not progress
            return
        field, _, value = line.partition(b":")
        if field != b"data":
            return  # event:, id:, retry: carry nothing a chat stream needs
        self.progress = True
        if value[:1] == b" ":
            value = value[1:]
        self._size += len(value)
        if self._size > self._caps.event_bytes:
            raise _too_long("an event", self._caps.event_bytes)
        try:
            self._data.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            raise ProtocolError("the server sent a stream that is not UTF-8 text") from None


async def events(body: AsyncIterator[bytes], caps: Caps = Caps(), stall_s: float | None = None) -> AsyncIterator[str]:
    """The data of each event (its data lines joined with LF); comments and other fields dropped.

    With `stall_s`, bytes that carry no data for longer than that (keep-alive comments only) raise
    ``Stalled``. Silence itself is the caller's read timeout: checking here costs a clock read per
    chunk, not a cancel scope per event.
    """
    parser = _Parser(caps)
    last = monotonic()
    async for chunk in body:
        for event in parser.feed(chunk):
            yield event
        if stall_s is not None:
            now = monotonic()
            if parser.progress:
                last = now
            elif now - last > stall_s:
                raise Stalled(stall_s)
    for event in parser.end():
        yield event
