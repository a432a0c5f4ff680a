"""`sot proxy` in front of the embedded local backend (the real llama.cpp server and bundled model)."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from tests_support import QUESTION, require_binary

from sot.proxy import BackgroundProxy, ProxySettings

pytestmark = pytest.mark.local


def test_the_sdk_gets_sot_answers_from_the_local_backend_streamed_and_not() -> None:
    require_binary()
    options = {"temperature": 0, "seed": 1, "max_parallel": 4, "max_points": 3, "point_max_tokens": 32}
    with BackgroundProxy(ProxySettings(options=options)) as proxy:
        client = openai.OpenAI(base_url=proxy.url, api_key="unused", max_retries=0)
        assert client.models.list().data[0].id == "smollm2-135m-instruct"
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        reply = client.chat.completions.create(model="any+sot", messages=messages)
        text = reply.choices[0].message.content or ""
        summary = (reply.model_extra or {})["sot"]
        assert summary["mode"] == "sot" and 2 <= len(summary["points"]) <= 3
        assert text.splitlines()[0].startswith("1. ") and reply.usage is not None and reply.usage.completion_tokens > 0
        stream = client.chat.completions.create(
            model="any+sot",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert streamed == text  # temperature 0 and a fixed seed: the same answer, now in pieces
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == reply.usage.total_tokens
