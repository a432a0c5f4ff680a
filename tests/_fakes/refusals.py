"""How each emulated provider refuses a request: the fields it rejects and the error bodies it sends.

Written from each provider's public documentation and the error bodies users report: OpenAI's
``param`` + ``code``, Mistral's 422 ``extra_forbidden``, Gemini's JSON array with ``Unknown name``,
vLLM's pydantic reprs. A validator returns the refusal for a request body, or None to serve it;
a ``*_not_found`` function is the reply to a model name the provider does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .replies import Reply

Validator = Callable[[dict[str, Any]], Reply | None]


def _words_of(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _names(text: str) -> frozenset[str]:
    return frozenset(_words_of(text))


# What every OpenAI-compatible server takes (the chat completions schema, as sot uses it).
_OPENAI_FIELDS = _names(
    "model messages max_tokens max_completion_tokens temperature top_p n stream stream_options stop "
    "frequency_penalty presence_penalty seed logprobs top_logprobs logit_bias response_format user store metadata "
    "tools tool_choice parallel_tool_calls service_tier"
)
# What OpenAI's reasoning models refuse, in the order this emulation reports them (one per reply).
_REASONING_REFUSED = _words_of("top_p frequency_penalty presence_penalty stop logprobs top_logprobs logit_bias")


def openai_error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> Reply:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return Reply(status=status, error_body={"error": error})


def openai_chat(body: dict[str, Any]) -> Reply | None:
    """OpenAI's chat models: unknown fields are refused, reasoning_effort is for reasoning models only."""
    for name in body:
        if name == "reasoning_effort":
            return openai_error(
                400,
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                param=name,
                code="unsupported_parameter",
            )
        if name not in _OPENAI_FIELDS:
            return openai_error(400, f"Unrecognized request argument supplied: {name}")
    return None


def openai_reasoning(efforts: tuple[str, ...]) -> Validator:
    """OpenAI's reasoning models (o-series, gpt-5): one refusal at a time, as the API reports them."""

    def validate(body: dict[str, Any]) -> Reply | None:
        if "max_tokens" in body:
            return openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                param="max_tokens",
                code="unsupported_parameter",
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return openai_error(
                400,
                f"Unsupported value: 'temperature' does not support {temperature} with this model. "
                "Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        for name in _REASONING_REFUSED:
            if name in body:
                return openai_error(
                    400,
                    f"Unsupported parameter: '{name}' is not supported with this model.",
                    param=name,
                    code="unsupported_parameter",
                )
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in efforts:
            return openai_error(
                400,
                f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                f"Supported values are: {', '.join(repr(e) for e in efforts)}.",
                param="reasoning_effort",
                code="unsupported_value",
            )
        for name in body:
            if name not in _OPENAI_FIELDS | {"reasoning_effort"}:
                return openai_error(400, f"Unrecognized request argument supplied: {name}")
        return None

    return validate


def gemini(body: dict[str, Any]) -> Reply | None:
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


def mistral(body: dict[str, Any]) -> Reply | None:
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


def groq(body: dict[str, Any]) -> Reply | None:
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


def lenient(body: dict[str, Any]) -> Reply | None:
    """Servers that ignore fields they do not know (vLLM, SGLang, llama.cpp, Ollama, Anthropic's layer ...)."""
    return None


def vllm(body: dict[str, Any]) -> Reply | None:
    """vLLM: unknown fields are ignored, known ones validated by pydantic (errors printed as Python reprs)."""
    effort = body.get("reasoning_effort")
    if effort is None or effort in ("low", "medium", "high"):
        return None
    errors = [{"type": "literal_error", "loc": ("body", "reasoning_effort"),
               "msg": "Input should be 'low', 'medium' or 'high'", "input": effort}]  # fmt: skip
    error = {"message": str(errors), "type": "BadRequestError", "param": None, "code": 400}
    return Reply(status=400, error_body={"error": error})


def vllm_not_found(model: str) -> Reply:
    error = {"message": f"The model `{model}` does not exist.", "type": "NotFoundError", "param": None, "code": 404}
    return Reply(status=404, error_body={"error": error})


def gemini_not_found(model: str) -> Reply:
    error = {
        "code": 400,
        "message": f"models/{model} is not found for API version v1main",
        "status": "INVALID_ARGUMENT",
    }
    return Reply(status=400, error_body=[{"error": error}])


def mistral_not_found(model: str) -> Reply:
    return _object_error(400, f"Invalid model: {model}", "invalid_model", "1500")


def openai_not_found(model: str) -> Reply:
    return openai_error(404, f"The model `{model}` does not exist.", code="model_not_found")


def anthropic_not_found(model: str) -> Reply:
    return Reply(
        status=404, error_body={"type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"}}
    )


def sglang_not_found(model: str) -> Reply:
    return _object_error(400, f"Model {model} not found", "BadRequestError", 400)


def tgi_not_found(model: str) -> Reply:
    return Reply(status=422, error_body={"error": f"model {model} not found", "error_type": "validation"})
