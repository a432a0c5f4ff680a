"""A provider profile, and the SSE stream it sends for a scripted text.

How a stream looks differs by provider: SSE comments, Azure's ``prompt_filter_results`` chunk,
usage on every chunk (or on the last content chunk, or under ``x_groq``), ``reasoning_content``
deltas, ``<think>`` text, an error chunk after HTTP 200. ``render`` writes the stream a profile sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .refusals import Validator, lenient, openai_not_found
from .replies import Reply, SeenRequest

ReasoningShape = Literal["think", "reasoning_content", "reasoning"]
UsageShape = Literal["final", "every", "last_content", "x_groq", "none"]
THINKING = "Let me think about the question first. The user wants a list; I should plan it."


def _no_switch(body: dict[str, Any]) -> bool:
    """A model whose thinking cannot be turned off (or that does not think)."""
    return False


@dataclass(frozen=True)
class Profile:
    """How one provider validates requests and shapes its stream."""

    name: str
    model: str
    base_url: str  # what a user gives as --base-url
    validate: Validator = lenient
    unknown_model: Callable[[str], Reply] = openai_not_found
    reasoning: ReasoningShape | None = None
    reasoning_off: Callable[[dict[str, Any]], bool] = _no_switch
    report_reasoning_tokens: bool = False
    usage: UsageShape = "final"
    usage_needs_option: bool = True  # usage only with stream_options.include_usage
    comments: tuple[str, ...] = ()  # SSE comment lines before the first chunk and between chunks
    data_prefix: str = "data: "
    azure_filters: bool = False
    mid_stream_error: bool = False  # the first expansion of point 2 fails after HTTP 200 with an error chunk


def _pieces(text: str) -> list[str]:
    """Small pieces, as tokens arrive; tags are cut in the middle to test split handling."""
    return [p for p in re.split(r"(\s+|(?<=<th)|(?<=</thi))", text) if p]


def _apply_stop(body: dict[str, Any], text: str) -> str:
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in stops if s and s in text]
    return text[: min(cuts)] if cuts else text


@dataclass(frozen=True)
class _Plan:
    """What one reply streams: its content and reasoning pieces, and how its usage is reported."""

    content: list[str]
    reasoning: list[str]  # reasoning deltas (empty where the thinking is <think> text in the content)
    reasoning_tokens: int
    wants_usage: bool  # the request asked for usage, or the provider sends it unasked


def _plan(profile: Profile, body: dict[str, Any], text: str) -> _Plan:
    think = "" if profile.reasoning is None or profile.reasoning_off(body) else THINKING
    inline = bool(think) and profile.reasoning == "think"
    content = _pieces(f"<think>\n{think}\n</think>\n\n{text}" if inline else text)
    reasoning = _pieces(think) if think and not inline else []
    hidden = profile.reasoning is None and profile.report_reasoning_tokens  # OpenAI: thinks, shows no text
    reasoning_tokens = len(THINKING.split()) if hidden else len(think.split())
    wants_usage = not profile.usage_needs_option or bool((body.get("stream_options") or {}).get("include_usage"))
    return _Plan(content, reasoning, reasoning_tokens, wants_usage)


class _Stream:
    """The SSE blocks of one reply, as `profile` writes them for `request`."""

    def __init__(self, profile: Profile, request: SeenRequest, plan: _Plan) -> None:
        self.profile = profile
        self.request = request
        self.plan = plan
        self.blocks: list[str] = []
        self.sent = 0

    def data(self, payload: dict[str, Any]) -> None:
        self.blocks.append(f"{self.profile.data_prefix}{json.dumps(payload)}\n\n")
        if self.profile.comments and self.sent % 3 == 0:
            self.blocks.append(f"{self.profile.comments[-1]}\n\n")
        self.sent += 1

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        if self.profile.azure_filters:
            choice["content_filter_results"] = {"hate": {"filtered": False, "severity": "safe"}}
        return {
            "id": f"chatcmpl-{self.request.number}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self.request.body.get("model"),
            "choices": [choice],
            **extra,
        }

    def usage(self, completion: int) -> dict[str, Any]:
        prompt = len(self.request.prompt.split())
        reasoning = self.plan.reasoning_tokens
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion + reasoning,
            "total_tokens": prompt + completion + reasoning,
        }
        if self.profile.report_reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        return usage

    def done(self) -> Reply:
        self.blocks.append(f"{self.profile.data_prefix}[DONE]\n\n")
        return Reply(events=self.blocks)


def _open(stream: _Stream) -> None:
    """Comments, Azure's prompt filter chunk, the role chunk, then reasoning deltas."""
    profile = stream.profile
    stream.blocks.extend(f"{comment}\n\n" for comment in profile.comments)
    if profile.azure_filters:
        filters = [{"prompt_index": 0, "content_filter_results": {}}]
        stream.data(
            {"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": filters}
        )
    stream.data(stream.chunk({"role": "assistant", "content": ""}))
    for piece in stream.plan.reasoning:
        assert profile.reasoning is not None
        stream.data(stream.chunk({profile.reasoning: piece, "content": None}))


def _content(stream: _Stream, fail_mid_stream: bool) -> bool:
    """The content chunks; False when the stream failed after the third (an error chunk, then the end)."""
    usage_shape = stream.profile.usage
    content = stream.plan.content
    for n, piece in enumerate(content, 1):
        extra: dict[str, Any] = {}
        last = n == len(content)
        if usage_shape == "every" or (last and usage_shape == "last_content" and stream.plan.wants_usage):
            extra["usage"] = stream.usage(n)
        finish = "stop" if last and usage_shape == "last_content" else None
        stream.data(stream.chunk({"content": piece}, finish, **extra))
        if fail_mid_stream and n == 3:
            error = {"code": "server_error", "message": "Provider disconnected unexpectedly"}
            stream.data(stream.chunk({"content": ""}, "error", error=error))
            return False
    return True


def _close(stream: _Stream) -> None:
    """The final chunk and the usage, where and when the provider sends them."""
    usage_shape = stream.profile.usage
    usage = stream.usage(len(stream.plan.content))
    if usage_shape != "last_content":
        extra = {"usage": usage} if usage_shape == "every" else {}
        if usage_shape == "x_groq":
            extra = {"x_groq": {"id": "req_1", "usage": usage}}
        stream.data(stream.chunk({}, "stop", **extra))
    if usage_shape == "final" and stream.plan.wants_usage:
        stream.data({**stream.chunk({}), "choices": [], "usage": usage})  # a chunk with no choices


def render(profile: Profile, request: SeenRequest, text: str, *, fail_mid_stream: bool = False) -> Reply:
    """The SSE stream `profile` sends for `text` (thinking first, for reasoning models)."""
    stream = _Stream(profile, request, _plan(profile, request.body, _apply_stop(request.body, text)))
    _open(stream)
    if _content(stream, fail_mid_stream):
        _close(stream)
    return stream.done()
