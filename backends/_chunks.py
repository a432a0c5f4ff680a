"""One typed parse of what a chat server sends: stream chunks, whole completions and error bodies.

Every shape is checked here, at one boundary: a field of the wrong type is a ``ProtocolError`` naming
the field (retryable: another attempt may get a well-formed reply), never a ``TypeError`` deep in the
caller. Shapes seen in the wild are accepted: ``choices: []`` (Azure's first chunk with
``prompt_filter_results``, usage-only chunks), usage on every chunk (Gemini) or on the last content
chunk, a top-level ``error`` inside a 200 stream (OpenRouter), error bodies as objects, as arrays
(Gemini: ``[{"error": {...}}]``), with string or integer codes, and Mistral's 422 ``detail[]``.
``reasoning_content`` / ``reasoning`` deltas are kept apart from ``text``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from sot.errors import ProtocolError

from .base import Usage


@dataclass(frozen=True)
class ErrorBody:
    """A server's error, however it was shaped; every field may be missing."""

    message: str = ""
    code: str | None = None
    param: str | None = None
    error_type: str | None = None
    loc: tuple[str, ...] | None = None
    status: int | None = None  # a code inside the body that is an HTTP status (OpenRouter's mid-stream errors)


@dataclass(frozen=True)
class StreamChunk:
    """One parsed chunk: answer text, reasoning text (never part of ``text``), finish, usage, error."""

    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    error: ErrorBody | None = None


def _bad(field: str, expected: str) -> ProtocolError:
    return ProtocolError(f"the server sent a malformed chunk: `{field}` is not {expected}")


def _optional_str(value: Any, field: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _bad(field, "a string")


def _optional_int(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        raise _bad(field, "a count")
    if isinstance(value, float) and not value.is_integer():
        raise _bad(field, "a whole count")
    return int(value)


def _object(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(field, "an object")
    return value


def parse_usage(raw: Any, field: str = "usage") -> Usage | None:
    if raw is None:
        return None
    usage = _object(raw, field)
    details = _object(usage.get("prompt_tokens_details"), f"{field}.prompt_tokens_details")
    completion = _object(usage.get("completion_tokens_details"), f"{field}.completion_tokens_details")
    return Usage(
        prompt_tokens=_optional_int(usage.get("prompt_tokens"), f"{field}.prompt_tokens"),
        completion_tokens=_optional_int(usage.get("completion_tokens"), f"{field}.completion_tokens"),
        cached_tokens=_optional_int(details.get("cached_tokens"), f"{field}.prompt_tokens_details.cached_tokens"),
        reasoning_tokens=_optional_int(
            completion.get("reasoning_tokens"), f"{field}.completion_tokens_details.reasoning_tokens"
        ),
    )


def _code(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None


def error_body(raw: Any) -> ErrorBody | None:
    """An error however it is shaped (object, array, string, FastAPI ``detail``); None when none is there."""
    if isinstance(raw, list):
        for item in raw:  # Gemini: [{"error": {...}}]
            found = error_body(item)
            if found is not None:
                return found
        return None
    if isinstance(raw, str):
        return ErrorBody(message=raw) if raw.strip() else None
    if not isinstance(raw, dict):
        return None
    if "error" in raw and raw["error"] not in (None, False, "", {}):
        inner = raw["error"]
        if isinstance(inner, dict):
            return _error_object(inner)
        if isinstance(inner, list | str):
            return error_body(inner)
        return ErrorBody(message=str(inner))
    detail = raw.get("detail")
    if isinstance(detail, list) and detail:  # FastAPI / Mistral 422: detail[].loc, .msg, .type
        first = detail[0] if isinstance(detail[0], dict) else {}
        loc = first.get("loc")
        path = tuple(str(p) for p in loc) if isinstance(loc, list) else None
        param = path[-1] if path and len(path) > 1 and path[0] == "body" else None
        message = first.get("msg") or raw.get("message") or ""
        kind = _code(first.get("type"))
        return ErrorBody(message=str(message), code=kind, param=param, error_type=kind, loc=path)
    if isinstance(detail, str):
        return ErrorBody(message=detail)
    if "message" in raw or "code" in raw:
        return _error_object(raw)
    return None


def _error_object(inner: dict[str, Any]) -> ErrorBody:
    message = inner.get("message")
    if not isinstance(message, str):
        message = "" if message is None else json.dumps(message)[:300]
    code = inner.get("code")
    status = code if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599 else None
    if status is None and isinstance(inner.get("status"), int):
        status = inner["status"] if 100 <= inner["status"] <= 599 else None
    param = inner.get("param")
    return ErrorBody(
        message=message,
        code=_code(code) or _code(inner.get("status")),
        param=param if isinstance(param, str) else None,
        error_type=_code(inner.get("type")),
        status=status,
    )


def _choice(payload: dict[str, Any]) -> dict[str, Any] | None:
    choices = payload.get("choices")
    if choices is None:
        return None
    if not isinstance(choices, list):
        raise _bad("choices", "a list")
    if not choices:
        return None
    checked: list[dict[str, Any]] = []
    for position, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise _bad(f"choices[{position}]", "an object")
        checked.append(choice)
    # One completion is asked for (n=1); a server listing several keeps index 0 first.
    return next((c for c in checked if c.get("index") == 0), checked[0])


def _message_fields(message: dict[str, Any], field: str) -> tuple[str, str]:
    text = _optional_str(message.get("content"), f"{field}.content") or ""
    reasoning = ""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str):
            reasoning += value
        elif value is not None and not isinstance(value, dict | list):
            raise _bad(f"{field}.{name}", "a string")
    return text, reasoning


def _parse(payload: Any, key: str, what: str) -> StreamChunk:
    if not isinstance(payload, dict):
        raise ProtocolError(f"the server sent a malformed {what}: it is not a JSON object")
    error = error_body(payload) if payload.get("error") else None
    usage = parse_usage(payload.get("usage"))
    choice = _choice(payload)
    if choice is None:
        return StreamChunk(usage=usage, error=error)
    text, reasoning = _message_fields(_object(choice.get(key), f"choices[0].{key}"), f"choices[0].{key}")
    finish = _optional_str(choice.get("finish_reason"), "choices[0].finish_reason")
    return StreamChunk(text=text, reasoning=reasoning, finish_reason=finish, usage=usage, error=error)


def parse_chunk(payload: Any) -> StreamChunk:
    """One ``chat.completion.chunk`` (already JSON-decoded)."""
    return _parse(payload, "delta", "chunk")


def parse_completion(payload: Any) -> StreamChunk:
    """A whole (non-streamed) ``chat.completion``, from a server that ignored ``stream: true``."""
    parsed = _parse(payload, "message", "completion")
    if parsed.error is None and not (isinstance(payload, dict) and payload.get("choices")):
        raise ProtocolError("the server sent a completion without choices")
    return replace(parsed, finish_reason=parsed.finish_reason or "stop")
