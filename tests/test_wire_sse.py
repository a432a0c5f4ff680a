"""The SSE reader and the redaction rules, fed byte by byte the way networks split them."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import pytest

from sot.backends._chunks import error_body, parse_chunk
from sot.backends._redact import redact
from sot.backends._sse import BoundedBody, Caps, events
from sot.backends.openai_compat import parse_retry_after
from sot.errors import ProtocolError

pytestmark = pytest.mark.anyio


async def pieces(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def read(data: bytes, size: int = 1, caps: Caps | None = None) -> list[str]:
    return [event async for event in events(pieces(data, size), caps or Caps())]


@pytest.mark.parametrize("size", [1, 2, 3, 1000])
async def test_events_split_on_cr_lf_and_crlf_only(size: int) -> None:
    body = "data: a\u2028b\u2029c\u0085d\r\n\r: keep-alive\ndata: two\r\rdata: x\ndata: y\n\nevent: e\ndata:z".encode()
    assert await read(body, size) == ["a\u2028b\u2029c\u0085d", "two", "x\ny", "z"]


async def test_a_line_past_its_cap_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="line longer"):
        await read(b"data: " + b"x" * 5000, 512, Caps(line_bytes=1024))


async def test_an_event_past_its_cap_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="event longer"):
        await read(b"data: 12345678\n" * 200, 64, Caps(event_bytes=1000))


async def test_decompression_is_bounded_and_capped() -> None:
    packed = gzip.compress(b"data: " + b"x" * (8 << 20))
    body = BoundedBody(pieces(packed, 1 << 16), "gzip", limit=1 << 20)
    biggest = 0
    with pytest.raises(ProtocolError, match="decompressed"):
        async for piece in body.chunks():
            biggest = max(biggest, len(piece))
    assert biggest <= 64 << 10 and body.total <= (1 << 20) + (64 << 10)


async def test_deflate_with_and_without_a_zlib_header() -> None:
    import zlib

    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    headless = raw.compress(b"data: ok\n\n") + raw.flush()
    for packed in (zlib.compress(b"data: ok\n\n"), headless):
        assert await BoundedBody(pieces(packed, 3), "deflate", 1 << 20).read() == b"data: ok\n\n"


def test_reasoning_stays_out_of_text_and_wrong_shapes_name_their_field() -> None:
    parsed = parse_chunk({"choices": [{"index": 0, "delta": {"reasoning_content": "hmm", "content": "Hi"}}]})
    assert (parsed.text, parsed.reasoning) == ("Hi", "hmm")
    with pytest.raises(ProtocolError, match=r"choices\[0\]\.delta\.content"):
        parse_chunk({"choices": [{"delta": {"content": 123}}]})
    with pytest.raises(ProtocolError, match=r"usage\.prompt_tokens"):
        parse_chunk({"choices": [], "usage": {"prompt_tokens": True}})


def test_error_bodies_of_every_shape() -> None:
    assert error_body({"error": {"message": "m", "code": 429}}).status == 429  # type: ignore[union-attr]
    assert error_body([{"error": {"message": "gem", "code": 400}}]).message == "gem"  # type: ignore[union-attr]
    assert error_body({"error": "plain"}).message == "plain"  # type: ignore[union-attr]
    mistral = error_body({"detail": [{"loc": ["body", "stream_options"], "msg": "Extra", "type": "extra_forbidden"}]})
    assert mistral is not None and mistral.param == "stream_options" and mistral.loc == ("body", "stream_options")
    assert error_body({"choices": []}) is None


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "NaN", "inf", "Thu, 01 Jan 1970 00:00:00 GMT", ""])
def test_unusable_retry_after_is_absent(value: str) -> None:
    assert parse_retry_after({"retry-after": value}) is None
    assert parse_retry_after({"retry-after-ms": value}) is None


def test_retry_after_values_that_mean_something() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5


def test_a_key_is_redacted_in_any_case_and_minus_a_character() -> None:
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"
    for echoed in (key, key.upper(), key.lower(), key[1:], key[:-1], f"xx{key[4:20]}yy"):
        out = redact(f"Incorrect API key provided: {echoed}. See https://user:pw@example.com/keys", key)
        assert key.lower()[5:13] not in out.lower() and "example.com" not in out and "pw@" not in out
    assert redact("nothing secret here", key) == "nothing secret here"


async def _clocked(chunks: list[bytes], clock: list[float], step: float) -> AsyncIterator[bytes]:
    for chunk in chunks:
        clock[0] += step  # each network read comes `step` seconds after the last
        yield chunk


@pytest.mark.parametrize(
    ("chunks", "stalls"),
    [
        ([b": keep-alive\n"] * 3, True),  # only comments: alive, but not answering
        ([b'data: {"a": ', b"1, ", b'"b": 2}\n\n'], False),  # one long data line arriving slowly
        ([b"data: 1\n\n", b": ping\n", b"data: 2\n\n"], False),  # a comment between two events
    ],
)
async def test_only_comments_for_longer_than_the_stall_limit_stall(monkeypatch, chunks, stalls: bool) -> None:
    from sot.backends import _sse

    clock = [0.0]
    monkeypatch.setattr(_sse, "monotonic", lambda: clock[0])  # this module's clock only, not the event loop's
    seen: list[str] = []
    try:
        async for event in _sse.events(_clocked(chunks, clock, step=4.0), stall_s=5.0):
            seen.append(event)
    except _sse.Stalled as exc:
        assert stalls and exc.seconds == 5.0 and seen == []
    else:
        assert not stalls and seen
