"""Provider profiles for the fake server: each validates a request and shapes its stream as that provider does.

Written from each provider's public documentation and the error bodies users report: which fields
it refuses and how it says so (OpenAI's ``param`` + ``code``, Mistral's 422 ``extra_forbidden``,
Gemini's JSON array with ``Unknown name``), and how its stream looks (SSE comments, Azure's
``prompt_filter_results`` chunk, usage on every chunk, ``reasoning_content`` deltas, ``<think>``
text, an error chunk after HTTP 200). The text itself comes from a script (``sot_script`` by
default), so an answer's points and order are known to the test.

    with FakeServer(provider_handler(PROFILES["mistral"]), model=PROFILES["mistral"].model) as server:
        ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .fake_server import Handler, Reply, SeenRequest, sot_script

ReasoningShape = Literal["think", "reasoning_content", "reasoning"]
UsageShape = Literal["final", "every", "last_content", "x_groq", "none"]
Validator = Callable[[dict[str, Any]], Reply | None]


# What every OpenAI-compatible server takes (the chat completions schema, as sot uses it).
def _words_of(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _names(text: str) -> frozenset[str]:
    return frozenset(_words_of(text))


_OPENAI_FIELDS = _names(
    "model messages max_tokens max_completion_tokens temperature top_p n stream stream_options stop "
    "frequency_penalty presence_penalty seed logprobs top_logprobs logit_bias response_format user store metadata "
    "tools tool_choice parallel_tool_calls service_tier"
)
# What OpenAI's reasoning models refuse, in the order this emulation reports them (one per reply).
_REASONING_REFUSED = _words_of("top_p frequency_penalty presence_penalty stop logprobs top_logprobs logit_bias")
THINKING = "Let me think about the question first. The user wants a list; I should plan it."


def _openai_error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> Reply:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return Reply(status=status, error_body={"error": error})


def _openai_chat(body: dict[str, Any]) -> Reply | None:
    """OpenAI's chat models: unknown fields are refused, reasoning_effort is for reasoning models only."""
    for name in body:
        if name == "reasoning_effort":
            return _openai_error(
                400,
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                param=name,
                code="unsupported_parameter",
            )
        if name not in _OPENAI_FIELDS:
            return _openai_error(400, f"Unrecognized request argument supplied: {name}")
    return None


def _openai_reasoning(efforts: tuple[str, ...]) -> Validator:
    """OpenAI's reasoning models (o-series, gpt-5): one refusal at a time, as the API reports them."""

    def validate(body: dict[str, Any]) -> Reply | None:
        if "max_tokens" in body:
            return _openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                param="max_tokens",
                code="unsupported_parameter",
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return _openai_error(
                400,
                f"Unsupported value: 'temperature' does not support {temperature} with this model. "
                "Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        for name in _REASONING_REFUSED:
            if name in body:
                return _openai_error(
                    400,
                    f"Unsupported parameter: '{name}' is not supported with this model.",
                    param=name,
                    code="unsupported_parameter",
                )
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in efforts:
            return _openai_error(
                400,
                f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                f"Supported values are: {', '.join(repr(e) for e in efforts)}.",
                param="reasoning_effort",
                code="unsupported_value",
            )
        for name in body:
            if name not in _OPENAI_FIELDS | {"reasoning_effort"}:
                return _openai_error(400, f"Unrecognized request argument supplied: {name}")
        return None

    return validate


def _gemini(body: dict[str, Any]) -> Reply | None:
    """Gemini's OpenAI layer: every unknown field in one 400, the error wrapped in a JSON array."""
    known = _names(
        "model messages max_tokens max_completion_tokens temperature top_p n stream stream_options stop seed "
        "response_format reasoning_effort tools tool_choice"
    )
    unknown = [name for name in body if name not in known]
    if not unknown:
        return None
    message = "\n".join(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.' for name in unknown)
    violations = [{"description": line} for line in message.splitlines()]
    details = [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": violations}]
    error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT", "details": details}
    return Reply(status=400, error_body=[{"error": error}])


def _mistral(body: dict[str, Any]) -> Reply | None:
    """Mistral: a strict schema; every extra field is a 422 ``extra_forbidden`` naming its location."""
    known = _names(
        "model messages temperature top_p max_tokens stream stop random_seed response_format tools tool_choice "
        "presence_penalty frequency_penalty n prediction parallel_tool_calls safe_prompt prompt_mode"
    )
    detail = []
    for name, value in body.items():
        if name in known:
            continue
        if isinstance(value, dict):  # pydantic reports the first nested key of an unknown object
            for key, inner in value.items():
                detail.append(_extra(["body", name, key], inner))
        else:
            detail.append(_extra(["body", name], value))
    if not detail:
        return None
    return _object_error(422, {"detail": detail}, "invalid_request_error", None)


def _object_error(status: int, message: Any, kind: str, code: Any) -> Reply:
    """The error envelope Mistral and SGLang send: an ``"object": "error"`` at the top level."""
    body = {"object": "error", "message": message, "type": kind, "param": None, "code": code}
    return Reply(status=status, error_body=body)


def _extra(loc: list[str], value: Any) -> dict[str, Any]:
    return {"type": "extra_forbidden", "loc": loc, "msg": "Extra inputs are not permitted", "input": value}


def _groq(body: dict[str, Any]) -> Reply | None:
    """Groq: the OpenAI schema less logprobs, logit_bias and n > 1; unknown fields refused."""
    for name in body:
        if name in ("logprobs", "top_logprobs", "logit_bias") or name not in _OPENAI_FIELDS | {"reasoning_effort"}:
            return Reply(
                status=400,
                error_body={"error": {"message": f"property '{name}' is unsupported", "type": "invalid_request_error"}},
            )
    if body.get("n", 1) != 1:
        return Reply(
            status=400,
            error_body={"error": {"message": "'n' : number must be at most 1", "type": "invalid_request_error"}},
        )
    return None


def _lenient(body: dict[str, Any]) -> Reply | None:
    """Servers that ignore fields they do not know (vLLM, SGLang, llama.cpp, Ollama, Anthropic's layer ...)."""
    return None


@dataclass(frozen=True)
class Profile:
    """How one provider validates requests and shapes its stream."""

    name: str
    model: str
    base_url: str  # what a user gives as --base-url
    validate: Validator = _lenient
    unknown_model: Callable[[str], Reply] = field(
        default=lambda model: _openai_error(404, f"The model `{model}` does not exist.", code="model_not_found")
    )
    reasoning: ReasoningShape | None = None
    reasoning_off: Callable[[dict[str, Any]], bool] = lambda body: False
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


class _Stream:
    def __init__(self, profile: Profile, request: SeenRequest) -> None:
        self.profile = profile
        self.request = request
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


def _usage(request: SeenRequest, completion: int, reasoning: int, with_details: bool) -> dict[str, Any]:
    prompt = len(request.prompt.split())
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion + reasoning,
        "total_tokens": prompt + completion + reasoning,
    }
    if with_details:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def _apply_stop(body: dict[str, Any], text: str) -> str:
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in stops if s and s in text]
    return text[: min(cuts)] if cuts else text


def render(profile: Profile, request: SeenRequest, text: str, *, fail_mid_stream: bool = False) -> Reply:
    """The SSE stream `profile` sends for `text` (thinking first, for reasoning models)."""
    body = request.body
    text = _apply_stop(body, text)
    think = "" if profile.reasoning is None or profile.reasoning_off(body) else THINKING
    stream = _Stream(profile, request)
    stream.blocks.extend(f"{comment}\n\n" for comment in profile.comments)
    if profile.azure_filters:
        stream.data(
            {
                "choices": [],
                "created": 0,
                "id": "",
                "model": "",
                "object": "",
                "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
            }
        )
    wants_usage = not profile.usage_needs_option or bool((body.get("stream_options") or {}).get("include_usage"))
    content = _pieces(f"<think>\n{think}\n</think>\n\n{text}" if think and profile.reasoning == "think" else text)
    reasoning = _pieces(think) if think and profile.reasoning != "think" else []
    hidden = profile.reasoning is None and profile.report_reasoning_tokens  # OpenAI: thinks, shows no text
    reasoning_tokens = len(THINKING.split()) if hidden else len(think.split())
    stream.data(stream.chunk({"role": "assistant", "content": ""}))
    for piece in reasoning:
        assert profile.reasoning is not None
        stream.data(stream.chunk({profile.reasoning: piece, "content": None}))
    done = 0
    for n, piece in enumerate(content, 1):
        done = n
        extra: dict[str, Any] = {}
        if profile.usage == "every":
            extra["usage"] = _usage(request, n, reasoning_tokens, profile.report_reasoning_tokens)
        last = n == len(content)
        if last and profile.usage == "last_content" and wants_usage:
            extra["usage"] = _usage(request, n, reasoning_tokens, profile.report_reasoning_tokens)
        stream.data(
            stream.chunk({"content": piece}, "stop" if last and profile.usage == "last_content" else None, **extra)
        )
        if fail_mid_stream and n == 3:
            error = {"code": "server_error", "message": "Provider disconnected unexpectedly"}
            stream.data(stream.chunk({"content": ""}, "error", error=error))
            stream.blocks.append(f"{profile.data_prefix}[DONE]\n\n")
            return Reply(events=stream.blocks)
    usage = _usage(request, done, reasoning_tokens, profile.report_reasoning_tokens)
    if profile.usage != "last_content":
        extra = {"usage": usage} if profile.usage == "every" else {}
        if profile.usage == "x_groq":
            extra = {"x_groq": {"id": "req_1", "usage": usage}}
        stream.data(stream.chunk({}, "stop", **extra))
    if profile.usage == "final" and wants_usage:
        stream.data(
            {
                "id": f"chatcmpl-{request.number}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model"),
                "choices": [],
                "usage": usage,
            }
        )
    stream.blocks.append(f"{profile.data_prefix}[DONE]\n\n")
    return Reply(events=stream.blocks)


def provider_handler(profile: Profile, script: Handler | None = None) -> Handler:
    """A fake-server handler that answers as `profile` would, with text from `script`."""
    script = script or sot_script(expansion=lambda n, title: f"Details on {title} for point {n}.\n\nAnd more.")
    failed_once: set[int] = set()

    def handle(request: SeenRequest) -> Reply:
        body = request.body
        if body.get("model") != profile.model:
            return profile.unknown_model(str(body.get("model")))
        refusal = profile.validate(body)
        if refusal is not None:
            return refusal
        scripted = script(request)
        if scripted.status != 200 or scripted.fault is not None:
            return scripted
        fail = profile.mid_stream_error and request.kind == "expand" and request.point == 2 and 2 not in failed_once
        if fail:
            failed_once.add(2)
        return render(profile, request, scripted.text, fail_mid_stream=fail)

    return handle


def _thinking_off(body: dict[str, Any]) -> bool:
    """vLLM, SGLang and llama.cpp: the chat template's switch."""
    return (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False


def _ollama_thinking_off(body: dict[str, Any]) -> bool:
    """Ollama's /v1 turns thinking off with reasoning_effort "none" (its native API's ``think`` is not read here)."""
    return body.get("reasoning_effort") == "none"


def _vllm(body: dict[str, Any]) -> Reply | None:
    """vLLM: unknown fields are ignored, known ones validated by pydantic (errors printed as Python reprs)."""
    effort = body.get("reasoning_effort")
    if effort is None or effort in ("low", "medium", "high"):
        return None
    errors = [{"type": "literal_error", "loc": ("body", "reasoning_effort"),
               "msg": "Input should be 'low', 'medium' or 'high'", "input": effort}]  # fmt: skip
    error = {"message": str(errors), "type": "BadRequestError", "param": None, "code": 400}
    return Reply(status=400, error_body={"error": error})


def _vllm_not_found(model: str) -> Reply:
    error = {"message": f"The model `{model}` does not exist.", "type": "NotFoundError", "param": None, "code": 404}
    return Reply(status=404, error_body={"error": error})


def _gemini_bad_model(model: str) -> Reply:
    error = {
        "code": 400,
        "message": f"models/{model} is not found for API version v1main",
        "status": "INVALID_ARGUMENT",
    }
    return Reply(status=400, error_body=[{"error": error}])


def _mistral_bad_model(model: str) -> Reply:
    return _object_error(400, f"Invalid model: {model}", "invalid_model", "1500")


def _profiles() -> Iterator[Profile]:
    yield Profile("openai", "gpt-4o-mini", "https://api.openai.com/v1", _openai_chat)
    reasoning = _openai_reasoning(("low", "medium", "high"))
    yield Profile("openai-o3-mini", "o3-mini", "https://api.openai.com/v1", reasoning, report_reasoning_tokens=True)
    gpt5 = _openai_reasoning(("minimal", "low", "medium", "high"))
    yield Profile("openai-gpt-5-mini", "gpt-5-mini", "https://api.openai.com/v1", gpt5, report_reasoning_tokens=True)
    # A reasoning model whose name nobody has seen: it refuses the same way and must be learned.
    yield Profile(
        "openai-unknown-reasoning",
        "zephyr-reasoner-2",
        "https://api.openai.com/v1",
        reasoning,
        report_reasoning_tokens=True,
    )
    yield Profile("azure", "gpt-4o", "https://RESOURCE.openai.azure.com/openai/v1", _openai_chat, azure_filters=True)
    yield Profile(
        "anthropic",
        "claude-sonnet-4-5",
        "https://api.anthropic.com/v1",
        unknown_model=lambda model: Reply(
            status=404, error_body={"type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"}}
        ),
    )
    yield Profile(
        "gemini",
        "gemini-2.5-flash",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        _gemini,
        unknown_model=_gemini_bad_model,
        usage="every",
        usage_needs_option=False,
    )
    yield Profile(
        "mistral",
        "mistral-small-latest",
        "https://api.mistral.ai/v1",
        _mistral,
        unknown_model=_mistral_bad_model,
        usage_needs_option=False,
    )
    yield Profile("groq", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1", _groq, usage="x_groq")
    yield Profile(
        "deepseek",
        "deepseek-reasoner",
        "https://api.deepseek.com",
        reasoning="reasoning_content",
        comments=(": keep-alive",),
        report_reasoning_tokens=True,
    )
    yield Profile(
        "openrouter",
        "openai/gpt-4o-mini",
        "https://openrouter.ai/api/v1",
        comments=(": OPENROUTER PROCESSING",),
        mid_stream_error=True,
    )
    yield Profile(
        "together",
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "https://api.together.xyz/v1",
        usage="last_content",
        usage_needs_option=False,
    )
    yield Profile(
        "ollama", "qwen3:8b", "http://localhost:11434/v1", reasoning="reasoning", reasoning_off=_ollama_thinking_off
    )
    yield Profile(
        "vllm",
        "Qwen/Qwen3-8B",
        "http://localhost:8000/v1",
        _vllm,
        unknown_model=_vllm_not_found,
        reasoning="reasoning",
        reasoning_off=_thinking_off,
    )
    yield Profile(
        "sglang",
        "Qwen/Qwen3-8B",
        "http://localhost:30000/v1",
        reasoning="reasoning_content",
        reasoning_off=_thinking_off,
        unknown_model=lambda m: _object_error(400, f"Model {m} not found", "BadRequestError", 400),
    )
    yield Profile(
        "llama.cpp",
        "qwen3-4b",
        "http://localhost:8080/v1",
        reasoning="reasoning_content",
        reasoning_off=_thinking_off,
        usage_needs_option=False,
    )
    yield Profile(
        "tgi",
        "tgi",
        "http://localhost:8080/v1",
        data_prefix="data:",
        unknown_model=lambda m: Reply(
            status=422, error_body={"error": f"model {m} not found", "error_type": "validation"}
        ),
    )
    yield Profile(
        "think-model", "Qwen/QwQ-32B", "http://localhost:8000/v1", _vllm, reasoning="think", reasoning_off=_thinking_off
    )
    yield Profile(
        "reasoning-content-model", "deepseek-r1-distill", "http://localhost:8000/v1", reasoning="reasoning_content"
    )


PROFILES: dict[str, Profile] = {profile.name: profile for profile in _profiles()}
