"""What monitoring sees: vLLM's Prometheus gauges and llama.cpp's slot list, read off the engine.

Names, help texts and labels are vLLM's own (its V1 engine: ``engine`` and ``model_name`` labels,
``vllm:gpu_cache_usage_perc`` kept beside ``vllm:kv_cache_usage_perc`` as vLLM keeps the deprecated
name). Background streams count as running, or as waiting where the real streams left them no slot;
requests queued beyond the batch limit are waiting. The slot list has one slot per batch position:
real streams first, then background streams, then idle slots. Token counters count real traffic only.
"""

from __future__ import annotations

from typing import Any

from .engine import Engine

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_GAUGES = (
    ("vllm:num_requests_running", "Number of requests in model execution batches."),
    ("vllm:num_requests_waiting", "Number of requests waiting to be processed."),
    (
        "vllm:gpu_cache_usage_perc",
        "GPU KV-cache usage. 1 means 100 percent usage. DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
    ),
    ("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."),
)
_COUNTERS = (
    ("vllm:prompt_tokens_total", "Number of prefill tokens processed."),
    ("vllm:generation_tokens_total", "Number of generation tokens processed."),
    ("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens."),
    ("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens."),
    ("vllm:request_success_total", "Count of successfully processed requests."),
)


def prometheus(engine: Engine) -> str:
    """The /metrics page, in Prometheus' text format."""
    labels = f'{{engine="0",model_name="{engine.config.model}"}}'
    kv = round(engine.kv_usage(), 6)
    c = engine.counters
    values = {
        "vllm:num_requests_running": engine.num_running,
        "vllm:num_requests_waiting": engine.num_waiting,
        "vllm:gpu_cache_usage_perc": kv,
        "vllm:kv_cache_usage_perc": kv,
        "vllm:prompt_tokens_total": c.prompt_tokens,
        "vllm:generation_tokens_total": c.generation_tokens,
        "vllm:prefix_cache_queries_total": engine.cache.queries,
        "vllm:prefix_cache_hits_total": engine.cache.hits,
        "vllm:request_success_total": c.finished,
    }
    lines: list[str] = []
    for kind, family in (("gauge", _GAUGES), ("counter", _COUNTERS)):
        for name, help_text in family:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name}{labels} {float(values[name])}"]
    return "\n".join(lines) + "\n"


def _slot(engine: Engine, slot_id: int, task: int, decoded: int, remain: int, params: dict[str, Any]) -> dict[str, Any]:
    processing = task >= 0
    return {
        "id": slot_id,
        "id_task": task,
        "n_ctx": engine.config.n_ctx,
        "speculative": False,
        "is_processing": processing,
        "params": {
            "n_predict": params.get("max_tokens", -1),
            "seed": params.get("seed", 4294967295),
            "temperature": params.get("temperature", 0.8),
            "stream": params.get("stream", True),
            "max_tokens": params.get("max_tokens", -1),
        },
        "next_token": {
            "has_next_token": processing,
            "has_new_line": False,
            "n_remain": remain,
            "n_decoded": decoded,
        },
    }


def slots(engine: Engine) -> list[dict[str, Any]]:
    """The /slots list: one slot per batch position."""
    out = [_slot(engine, i, s.id, s.decoded, len(s.output) - s.decoded, s.params) for i, s in enumerate(engine.running)]
    # Background streams are someone else's long requests: tasks numbered apart from the twin's own.
    for k in range(engine.background_running):
        out.append(_slot(engine, len(out), 1_000_000 + k, 0, -1, {}))
    while len(out) < engine.config.batch_limit:
        out.append(_slot(engine, len(out), -1, 0, -1, {}))
    return out
