"""Provider profiles for the fake server: each validates a request and shapes its stream as that provider does.

Written from each provider's public documentation and the error bodies users report: which fields
it refuses and how it says so (``refusals``), and how its stream looks (``profile.render``). The
text itself comes from a script (``sot_script`` by default), so an answer's points and order are
known to the test.

    with FakeServer(provider_handler(PROFILES["mistral"]), model=PROFILES["mistral"].model) as server:
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any

from . import refusals
from .profile import Profile, render
from .replies import Handler, Reply, SeenRequest, sot_script


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


def _openai() -> Iterator[Profile]:
    """OpenAI's chat and reasoning models, and Azure's deployment of a chat model."""
    url = "https://api.openai.com/v1"
    o_series = refusals.openai_reasoning(("low", "medium", "high"))
    gpt5 = refusals.openai_reasoning(("minimal", "low", "medium", "high"))
    yield Profile("openai", "gpt-4o-mini", url, refusals.openai_chat)
    yield Profile("openai-o3-mini", "o3-mini", url, o_series, report_reasoning_tokens=True)
    yield Profile("openai-gpt-5-mini", "gpt-5-mini", url, gpt5, report_reasoning_tokens=True)
    # A reasoning model whose name nobody has seen: it refuses the same way and must be learned.
    yield Profile("openai-unknown-reasoning", "zephyr-reasoner-2", url, o_series, report_reasoning_tokens=True)
    azure = "https://RESOURCE.openai.azure.com/openai/v1"
    yield Profile("azure", "gpt-4o", azure, refusals.openai_chat, azure_filters=True)


def _hosted() -> Iterator[Profile]:
    """The other hosted APIs' OpenAI-compatible layers."""
    anthropic = "https://api.anthropic.com/v1"
    yield Profile("anthropic", "claude-sonnet-4-5", anthropic, unknown_model=refusals.anthropic_not_found)
    gemini = "https://generativelanguage.googleapis.com/v1beta/openai"
    yield Profile(
        "gemini",
        "gemini-2.5-flash",
        gemini,
        refusals.gemini,
        unknown_model=refusals.gemini_not_found,
        usage="every",
        usage_needs_option=False,
    )
    mistral = "https://api.mistral.ai/v1"
    yield Profile(
        "mistral",
        "mistral-small-latest",
        mistral,
        refusals.mistral,
        unknown_model=refusals.mistral_not_found,
        usage_needs_option=False,
    )
    yield Profile("groq", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1", refusals.groq, usage="x_groq")
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
    together = "https://api.together.xyz/v1"
    model = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    yield Profile("together", model, together, usage="last_content", usage_needs_option=False)


def _self_hosted() -> Iterator[Profile]:
    """Servers people run themselves: Ollama, vLLM, SGLang, llama.cpp, TGI."""
    yield Profile(
        "ollama", "qwen3:8b", "http://localhost:11434/v1", reasoning="reasoning", reasoning_off=_ollama_thinking_off
    )
    yield Profile(
        "vllm",
        "Qwen/Qwen3-8B",
        "http://localhost:8000/v1",
        refusals.vllm,
        unknown_model=refusals.vllm_not_found,
        reasoning="reasoning",
        reasoning_off=_thinking_off,
    )
    yield Profile(
        "sglang",
        "Qwen/Qwen3-8B",
        "http://localhost:30000/v1",
        reasoning="reasoning_content",
        reasoning_off=_thinking_off,
        unknown_model=refusals.sglang_not_found,
    )
    yield Profile(
        "llama.cpp",
        "qwen3-4b",
        "http://localhost:8080/v1",
        reasoning="reasoning_content",
        reasoning_off=_thinking_off,
        usage_needs_option=False,
    )
    yield Profile("tgi", "tgi", "http://localhost:8080/v1", data_prefix="data:", unknown_model=refusals.tgi_not_found)


def _reasoning_shapes() -> Iterator[Profile]:
    """Models that think in the text (``<think>``) or in ``reasoning_content``, behind a vLLM-like server."""
    url = "http://localhost:8000/v1"
    yield Profile("think-model", "Qwen/QwQ-32B", url, refusals.vllm, reasoning="think", reasoning_off=_thinking_off)
    yield Profile("reasoning-content-model", "deepseek-r1-distill", url, reasoning="reasoning_content")


PROFILES: dict[str, Profile] = {
    profile.name: profile for profile in chain(_openai(), _hosted(), _self_hosted(), _reasoning_shapes())
}
