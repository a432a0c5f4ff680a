"""``POST /v1/chat/completions`` as OpenAI's API gives it: a JSON completion, or SSE chunks with the
role first, content deltas, a last chunk with ``finish_reason`` and, when ``stream_options.include_usage``
is set, a usage chunk with no choices (and ``"usage": null`` on the others), then ``[DONE]``.

The reply's text is decided when the request arrives (answers.py); the engine decides when each of
its tokens exists. A client that leaves frees its batch slot.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from .answers import Writer
from .engine import Engine, Stream
from .recognise import recognise
from .tokens import chat_prompt, tokenize


def error(status: int, message: str, param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    return JSONResponse(body, status_code=status)


def _stop_at(text: str, stop: object) -> tuple[str, bool]:
    """The text cut before the first stop string it contains, and whether it was cut."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cuts = [text.find(s) for s in stops if isinstance(s, str) and s and s in text]
    return (text[: min(cuts)], True) if cuts else (text, False)


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def make_stream(writer: Writer, body: Mapping[str, Any]) -> Stream:
    """The decoding a request asks for: its prompt's tokens, and the reply's, cut at a stop or a limit."""
    messages = body["messages"]
    text, _ = _stop_at(writer.write(recognise(messages)), body.get("stop"))
    output, finish = tokenize(text) or [""], "stop"
    limit = _max_tokens(body)
    if limit is not None and len(output) > limit:
        output, finish = output[:limit], "length"
    params = {k: body[k] for k in ("max_tokens", "seed", "temperature", "stream") if k in body}
    return Stream(chat_prompt(messages), output, finish, params)


def _usage(stream: Stream) -> dict[str, Any]:
    return {
        "prompt_tokens": len(stream.prompt),
        "completion_tokens": stream.decoded,
        "total_tokens": len(stream.prompt) + stream.decoded,
        "prompt_tokens_details": {"cached_tokens": stream.cached},
    }


def _timings(stream: Stream) -> dict[str, Any]:
    """llama.cpp's per-request timings, in simulated milliseconds (the twin's own clock, not the wire's)."""
    start = stream.admitted if stream.admitted is not None else stream.arrived
    first = stream.first_token if stream.first_token is not None else start
    end = stream.finished if stream.finished is not None else first
    return {
        "cache_n": stream.cached,
        "prompt_n": len(stream.prompt) - stream.cached,
        "queue_ms": round((start - stream.arrived) * 1000, 3),
        "prompt_ms": round((first - start) * 1000, 3),
        "predicted_n": stream.decoded,
        "predicted_ms": round((end - first) * 1000, 3),
    }


class Completion:
    """One request's reply on the wire."""

    def __init__(self, engine: Engine, stream: Stream, body: Mapping[str, Any]) -> None:
        self.engine, self.stream = engine, stream
        self.model = str(body.get("model") or engine.config.model)
        options = body.get("stream_options")
        self.include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
        self.id = f"chatcmpl-twin-{stream.id}"
        self.created = int(time.time())

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            chunk["usage"] = None
        return f"data: {json.dumps(chunk)}\n\n"

    async def events(self) -> AsyncIterator[str]:
        stream, sent = self.stream, 0
        try:
            while not (stream.finished is not None and sent >= stream.decoded):
                await stream.wake.wait()
                stream.wake.clear()
                if stream.visible > sent:
                    delta = {"content": "".join(stream.output[sent : stream.visible])}
                    yield self._chunk({"role": "assistant", **delta} if sent == 0 else delta)
                    sent = stream.visible
            yield self._chunk({}, stream.finish_reason)
            last: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk", "created": self.created}
            last |= {"model": self.model, "choices": [], "timings": _timings(stream)}
            if self.include_usage:
                yield f"data: {json.dumps(last | {'usage': _usage(stream)})}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            self.engine.cancel(stream)  # a no-op once it finished; else the client left

    async def whole(self) -> dict[str, Any]:
        stream = self.stream
        try:
            while not stream.done:
                await stream.wake.wait()
                stream.wake.clear()
        finally:
            self.engine.cancel(stream)
        message = {"role": "assistant", "content": "".join(stream.output[: stream.decoded])}
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": stream.finish_reason}],
            "usage": _usage(stream),
            "timings": _timings(stream),
        }


async def chat_completions(request: Request, engine: Engine, writer: Writer) -> Response:
    try:
        body = await request.json()
    except ValueError:
        return error(400, "the request body is not JSON")
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return error(400, "'messages' must be a non-empty list of message objects", "messages")
    limit = _max_tokens(body)
    if limit is not None and limit < 1:
        return error(400, "max_tokens must be at least 1", "max_tokens")
    stream = make_stream(writer, body)
    engine.submit(stream)
    completion = Completion(engine, stream, body)
    if body.get("stream"):
        headers = {"Cache-Control": "no-cache"}
        return StreamingResponse(completion.events(), media_type="text/event-stream", headers=headers)
    return JSONResponse(await completion.whole())
