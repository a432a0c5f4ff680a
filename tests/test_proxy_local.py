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
        assert len(text.splitlines()) == len(summary["points"]) and text.startswith("1. ")
        assert reply.usage is not None and reply.usage.completion_tokens > 0
        stream = client.chat.completions.create(
            model="any+sot",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        final = next(c for c in chunks if c.choices and c.choices[0].finish_reason)
        points = (final.model_extra or {})["sot"]["points"]
        # Batched decoding is not bit-exact across runs, so the two answers may differ: check the
        # streamed one against its own outline, in order, and its usage.
        lines = streamed.splitlines()
        assert len(lines) == len(points) >= 2 and final.choices[0].finish_reason == "stop"
        for number, (line, point) in enumerate(zip(lines, points, strict=True), 1):
            assert line.startswith(f"{number}. {point.rstrip('.:; ')}")
        assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
