"""OpenAI chat requests to SoT answers and back: which requests SoT serves, options, completions, chunks."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .. import constants
from .._conversation import CONTEXT_ROLES, message_text, split_conversation
from ..errors import ConfigurationError
from ..result import Answer, ExtraTokens, Usage
from ..templates import Message

# What a client may set per request in the body's "sot" object (server-side limits stay the server's).
SOT_FIELDS = {"mode": str, "max_points": int, "point_max_tokens": int, "allow_partial": bool, "pipeline": bool}
_MODE_ALIASES = {"seq": "sequential", "sequential": "sequential", "sot": "sot", "auto": "auto"}


def split_model(name: str) -> tuple[str, str | None]:
    """``MODEL+sot`` -> (``MODEL``, ``"sot"``); a name without a known suffix is left as it is."""
    for suffix, mode in constants.PROXY_MODEL_SUFFIXES.items():
        if name.endswith(suffix):
            return name[: -len(suffix)], mode
    return name, None


def passthrough_reason(body: dict[str, Any]) -> str | None:
    """Why SoT cannot serve this request (it then goes upstream untouched), or None."""
    if any(body.get(key) for key in ("tools", "functions", "tool_choice", "function_call")):
        return "tools"
    n = body.get("n")
    if n is not None and n != 1:
        return "n"
    if body.get("logprobs") or body.get("top_logprobs"):
        return "logprobs"
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type", "text") != "text":
        return "response_format"
    if body.get("audio") or any(m != "text" for m in body.get("modalities") or []):
        return "modalities"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None  # invalid: answered with a 400 by plan()
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in CONTEXT_ROLES:
            return "role"
        if message.get("tool_calls") or message.get("function_call"):
            return "tools"
        if message_text(message.get("content")) is None and message.get("content") is not None:
            return "content"
    if messages[-1].get("role") != "user":
        return "role"
    return None


def without_sot_fields(body: dict[str, Any]) -> bytes | None:
    """The body with the proxy's own fields removed (the ``sot`` object, a model suffix); None if it has none."""
    model = body.get("model")
    base, mode = split_model(model) if isinstance(model, str) else (model, None)
    if "sot" not in body and mode is None:
        return None
    cleaned = {k: v for k, v in body.items() if k != "sot"}
    if mode is not None:
        cleaned["model"] = base
    return json.dumps(cleaned).encode()


@dataclass
class ChatPlan:
    """One chat request as SoT answers it."""

    model: str  # as the client named it, suffix removed ("" when it named none)
    question: str
    history: tuple[Message, ...]
    overrides: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    include_usage: bool = False
    outline: bool = False  # stream the outline first, as reasoning_content


def _int(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{name} must be an integer")
    return value


def plan(body: dict[str, Any]) -> ChatPlan:
    """The plan of a request SoT serves; ``ConfigurationError`` (a 400) when it is malformed."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConfigurationError("messages must be a non-empty list")
    question, history = split_conversation(None, messages)
    raw_model = body.get("model") or ""
    if not isinstance(raw_model, str):
        raise ConfigurationError("model must be a string")
    model, suffix_mode = split_model(raw_model)
    overrides: dict[str, Any] = {}
    if suffix_mode is not None:
        overrides["mode"] = suffix_mode
    sot = body.get("sot") or {}
    if not isinstance(sot, dict):
        raise ConfigurationError('"sot" must be an object such as {"mode": "sot", "max_points": 6}')
    for name, value in sot.items():
        if name == "outline":
            continue
        kind = SOT_FIELDS.get(name)
        if kind is None:
            raise ConfigurationError(f"unknown sot option {name!r}: use {', '.join(sorted([*SOT_FIELDS, 'outline']))}")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigurationError(f"sot option {name} must be a {kind.__name__}")
        overrides[name] = value
    if "mode" in overrides:
        mode = _MODE_ALIASES.get(str(overrides["mode"]))
        if mode is None:
            raise ConfigurationError("sot mode must be auto, sot or sequential (seq)")
        overrides["mode"] = mode
    max_tokens = _int(body, "max_completion_tokens") or _int(body, "max_tokens")
    if max_tokens is not None:
        overrides["max_tokens"] = max_tokens
    temperature = body.get("temperature")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise ConfigurationError("temperature must be a number")
        overrides["temperature"] = float(temperature)
    seed = _int(body, "seed")
    if seed is not None:
        overrides["seed"] = seed
    stream_options = body.get("stream_options") or {}
    return ChatPlan(
        model=model,
        question=question,
        history=history,
        overrides=overrides,
        stream=bool(body.get("stream")),
        include_usage=isinstance(stream_options, dict) and bool(stream_options.get("include_usage")),
        outline=bool(sot.get("outline")),
    )


def usage_payload(usage: Usage, extra: ExtraTokens | None = None) -> dict[str, Any]:
    """OpenAI's usage object; with ``sot_extra_*`` fields for what the answer cost beyond a sequential one
    (clients that do not know them ignore them, as they do other providers' additions)."""
    payload: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if usage.cached_tokens:
        payload["prompt_tokens_details"] = {"cached_tokens": usage.cached_tokens}
    if extra is not None:
        payload["sot_extra_prompt_tokens"] = extra.prompt_tokens
        payload["sot_extra_completion_tokens"] = extra.completion_tokens
    return payload


def finish_reason(answer: Answer) -> str:
    """``length`` where the answer's text was cut (a token limit, or before a loop: ``Answer.truncated``),
    as OpenAI's API says of a cut answer; else ``stop``."""
    return "length" if answer.truncated else "stop"


def sot_summary(answer: Answer) -> dict[str, Any]:
    """The per-request metrics: mode, points, route reason, timings, calls."""
    timings = answer.timings
    return {
        "mode": answer.mode,
        "requested_mode": answer.requested_mode,
        "reason": answer.reason,
        "points": answer.points,
        "failed_points": answer.failed_points,
        "truncated": answer.truncated,
        "fell_back": answer.fell_back,
        "profile": answer.profile,
        "calls": len(answer.calls),
        "timings": {k: v for k, v in vars(timings).items() if v is not None},
        "fan_out": answer.fan_out,
        "extra_tokens": None if answer.extra_tokens is None else answer.extra_tokens.to_dict(),
    }


def completion(answer: Answer, request_id: str, created: int) -> dict[str, Any]:
    """One ``chat.completion`` object."""
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": created,
        "model": answer.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "logprobs": None,
                "finish_reason": finish_reason(answer),
            }
        ],
        "usage": usage_payload(answer.usage, answer.extra_tokens),
        "sot": sot_summary(answer),
    }


def chunk(
    request_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with one choice."""
    return {
        "id": request_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
