"""`sot proxy` with real clients (the official openai SDK, curl, httpx) in front of the fake upstream."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import openai
import pytest
from _fakes import FakeServer, Handler, Reply, SeenRequest, sot_script

import sot
from sot.proxy import BackgroundProxy, ProxySettings

QUESTION = "What are good ways to sleep better?"
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}
]


def slow_first(n: int) -> float:
    """Point 1 finishes last: the proxy must still send the points in reading order."""
    return 0.15 if n == 1 else 0.0


def scripted(**kwargs: Any) -> Handler:
    """The SoT script, plus plain JSON answers to non-streamed pass-through requests."""
    sot_handler = sot_script(**kwargs)

    def handle(request: SeenRequest) -> Reply:
        if request.body.get("tools") or not request.body.get("stream", True) or request.path.endswith("/embeddings"):
            return Reply("passed through", stream=False)
        return sot_handler(request)

    return handle


@pytest.fixture
def proxied(fake: Callable[[Handler], FakeServer]) -> Iterator[Callable[..., tuple[FakeServer, BackgroundProxy]]]:
    proxies: list[BackgroundProxy] = []

    def start(handler: Handler | None = None, **settings: Any) -> tuple[FakeServer, BackgroundProxy]:
        server = fake(handler or scripted(expansion_delay=slow_first))
        settings.setdefault("options", {"router": "rules"})
        proxy = BackgroundProxy(ProxySettings(upstream=(server.url,), **settings)).__enter__()
        proxies.append(proxy)
        return server, proxy

    yield start
    for proxy in proxies:
        proxy.__exit__(None, None, None)


def sdk(proxy: BackgroundProxy, key: str = "client-key") -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.url, api_key=key, max_retries=0)


def upstream_prompt_tokens(server: FakeServer) -> int:
    """The prompt tokens the fake upstream reported over every call so far (one word, one token)."""
    return sum(len(r.prompt.split()) for r in server.requests)


def expected_sot(server: FakeServer) -> sot.Answer:
    """The SoT answer sot's own client gets from the same upstream."""

    async def ask() -> sot.Answer:
        async with sot.Client(base_url=server.url, model="fake-model", mode="sot") as client:
            return await client.ask(QUESTION)

    return anyio.run(ask)


def test_a_non_streamed_answer_is_the_sot_answer_with_its_usage(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    reply = sdk(proxy).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": QUESTION}], extra_body={"sot": {"mode": "sot"}}
    )
    prompt_tokens = upstream_prompt_tokens(server)
    expected = expected_sot(server)
    assert reply.object == "chat.completion" and reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.content == expected.text
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        prompt_tokens,
        expected.usage.completion_tokens,
    )
    summary = (reply.model_extra or {})["sot"]
    assert summary["mode"] == "sot" and summary["points"] == ["First idea", "Second idea", "Third idea"]
    assert summary["calls"] == 4 and summary["timings"]["total_s"] > 0


def test_a_streamed_answer_comes_point_by_point_in_reading_order_with_summed_usage(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    stream = sdk(proxy).chat.completions.create(
        model="fake-model+sot",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    prompt_tokens = upstream_prompt_tokens(server)
    expected = expected_sot(server)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(pieces) == expected.text
    # One piece per point, each in place, although point 1 finished last upstream.
    assert [p.strip()[:4] for p in pieces] == ["**1.", "**2.", "**3."]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == expected.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == prompt_tokens
    assert {c.id for c in chunks} == {chunks[0].id}


def test_a_model_suffix_or_sot_field_picks_the_mode_and_headers_say_what_was_done(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    client = sdk(proxy)
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model+seq", messages=[{"role": "user", "content": QUESTION}]
    )
    assert (
        raw.headers["x-sot-mode"] == "sequential" and raw.headers["x-sot-route-reason"] == "mode sequential requested"
    )
    assert raw.parse().choices[0].message.content == "A plain answer written in one go."
    assert server.requests[-1].body["model"] == "fake-model"  # the suffix never goes upstream
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": QUESTION}],
        extra_body={"sot": {"mode": "sot", "max_points": 2}},
    )
    assert raw.headers["x-sot-mode"] == "sot" and raw.headers["x-sot-points"] == "2"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "q"}], extra_body={"sot": {"model": "other"}}
        )
    assert caught.value.status_code == 400 and "unknown sot option" in caught.value.message


def test_a_second_turn_carries_the_first_answer_as_context(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    client = sdk(proxy)
    history: list[Any] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": QUESTION},
    ]
    first = client.chat.completions.create(model="fake-model+sot", messages=history)
    answer = first.choices[0].message.content or ""
    history += [{"role": "assistant", "content": answer}, {"role": "user", "content": "And for a newborn's parents?"}]
    before = len(server.requests)
    client.chat.completions.create(model="fake-model+sot", messages=history)
    second_turn = server.requests[before:]
    assert {r.kind for r in second_turn} == {"skeleton", "expand"} and len(second_turn) == 4
    for request in second_turn:
        sent = request.body["messages"]
        assert sent[:3] == history[:3]  # system prompt, first question, first final answer
        assert "And for a newborn's parents?" in sent[3]["content"] and len(sent) == 4
        assert QUESTION not in sent[3]["content"]  # the question of this turn is the last user turn
        assert "Outline:" not in json.dumps(sent[:3])  # history holds answers, not SoT prompts


def test_the_python_api_takes_a_message_list(fake: Callable[[Handler], FakeServer]) -> None:
    server = fake(sot_script())
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "First?"},
        {"role": "assistant", "content": "An answer."},
        {"role": "user", "content": [{"type": "text", "text": "Second?"}]},
    ]

    async def main() -> sot.Answer:
        async with sot.Client(base_url=server.url, model="m", mode="sequential") as client:
            with pytest.raises(sot.ConfigurationError, match="last message"):
                await client.ask(messages=messages[:3])
            return await client.ask(messages=messages)

    answer = anyio.run(main)
    assert answer.question == "Second?"
    sent = server.requests[-1].body["messages"]
    assert sent[:3] == messages[:3] and sent[3]["content"].strip() == "Second?"


def test_a_request_with_tools_reaches_the_upstream_unchanged(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied(upstream_api_key="upstream-key")
    body = {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": TOOLS,
        "tool_choice": "auto",
        "temperature": 0.3,
    }
    reply = sdk(proxy).chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=TOOLS,
        tool_choice="auto",
        temperature=0.3,
    )
    assert reply.choices[0].message.content == "passed through"
    seen = server.requests[-1]
    assert seen.body == body and seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer upstream-key"  # the configured key, never the client's


def test_without_an_upstream_key_the_clients_key_is_forwarded(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    sdk(proxy, key="the-clients-key").chat.completions.create(
        model="fake-model+seq", messages=[{"role": "user", "content": QUESTION}]
    )
    sdk(proxy, key="the-clients-key").embeddings.with_raw_response.create(model="e", input="hello")
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer the-clients-key"] * 2
    assert server.requests[-1].path == "/v1/embeddings" and server.requests[-1].body["input"] == "hello"


def test_other_cases_sot_cannot_serve_pass_through(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    client = sdk(proxy)
    cases: list[dict[str, Any]] = [
        {"n": 2},
        {"logprobs": True},
        {"response_format": {"type": "json_object"}},
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]},
    ]
    for extra in cases:
        body = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], **extra}
        client.post("/chat/completions", body=body, cast_to=object)
        assert server.requests[-1].body == body
    assert {r.kind for r in server.requests} == {"sequential"} and len(server.requests) == len(cases)


def test_a_client_leaving_mid_stream_closes_every_upstream_call_of_its_request(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied(scripted(expansion_delay=lambda n: 0.0 if n == 1 else 60.0))
    stream = sdk(proxy).chat.completions.create(
        model="fake-model+sot", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break  # point 1 is here; points 2 and 3 are still being written upstream
    assert server.wait_for(lambda s: s.in_flight == 2)  # both reached the upstream (they may lag point 1)
    stream.close()
    assert server.wait_for(lambda s: s.in_flight == 0, timeout=1.0)
    assert all(r.finished_at is not None for r in server.requests)


def test_errors_come_back_in_openais_shape_with_the_right_status(proxied: Callable[..., Any]) -> None:
    def refuse(request: SeenRequest) -> Reply:
        if "rate" in request.prompt:
            return Reply(status=429, headers={"Retry-After": "7"})
        return Reply(status=401, error_body={"error": {"message": "bad key sk-secret"}})

    _, proxy = proxied(refuse, options={"router": "rules", "max_retries": 0})
    client = sdk(proxy)
    with pytest.raises(openai.AuthenticationError) as auth:
        client.chat.completions.create(model="m+seq", messages=[{"role": "user", "content": "hi"}])
    assert auth.value.status_code == 401 and "sk-secret" not in auth.value.message
    assert isinstance(auth.value.body, dict) and auth.value.body["type"] == "authentication_error"
    with pytest.raises(openai.RateLimitError) as limited:
        client.chat.completions.create(model="m+sot", messages=[{"role": "user", "content": "rate me"}], stream=True)
    assert limited.value.status_code == 429 and limited.value.response.headers["retry-after"] == "7"
    missing = httpx.get(proxy.url.removesuffix("/v1") + "/nowhere")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"


def test_clients_must_present_the_proxys_key_which_never_goes_upstream(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied(api_key="proxy-key")
    with pytest.raises(openai.AuthenticationError):
        sdk(proxy, key="wrong").chat.completions.create(model="m+seq", messages=[{"role": "user", "content": "hi"}])
    assert server.requests == []
    sdk(proxy, key="proxy-key").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
    )
    assert "authorization" not in server.requests[-1].headers


def test_bodies_over_the_limit_are_refused(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied(max_body_bytes=1000)
    response = httpx.post(f"{proxy.url}/chat/completions", content=b"x" * 5000)
    assert response.status_code == 413 and response.json()["error"]["code"] == "request_too_large"
    assert server.requests == []


def test_past_the_queue_requests_get_429_with_retry_after(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied(scripted(expansion_delay=lambda n: 0.0 if n == 1 else 60.0), max_concurrent=1, max_queued=0)
    body = {"model": "m+sot", "messages": [{"role": "user", "content": QUESTION}], "stream": True}
    with httpx.Client(timeout=10) as http, http.stream("POST", f"{proxy.url}/chat/completions", json=body):
        # Point 1 is out; points 2 and 3 are still being written upstream, and the request holds the slot.
        assert server.wait_for(lambda s: s.in_flight == 2)
        second = httpx.post(f"{proxy.url}/chat/completions", json=body)
        assert second.status_code == 429 and second.headers["retry-after"] == "1"
        assert second.json()["error"]["type"] == "rate_limit_error"
    assert server.wait_for(lambda s: s.in_flight == 0)


def test_models_health_and_metrics(proxied: Callable[..., Any]) -> None:
    _, proxy = proxied()
    client = sdk(proxy)
    assert [m.id for m in client.models.list()] == ["fake-model", "fake-model+sot", "fake-model+seq"]
    client.chat.completions.create(model="fake-model+sot", messages=[{"role": "user", "content": QUESTION}])
    client.chat.completions.create(model="fake-model+seq", messages=[{"role": "user", "content": QUESTION}])
    root = proxy.url.removesuffix("/v1")
    assert httpx.get(f"{root}/health").json()["status"] == "ok"
    page = httpx.get(f"{root}/metrics").text
    assert 'sot_proxy_requests_total{endpoint="chat",status="200"} 2' in page
    assert 'sot_proxy_answers_total{mode="sot"} 1' in page and 'sot_proxy_answers_total{mode="sequential"} 1' in page
    assert 'sot_proxy_upstream_calls_total{purpose="expand"} 3' in page
    assert 'sot_proxy_request_seconds_count{endpoint="chat"} 2' in page


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_a_plain_curl_stream(proxied: Callable[..., Any]) -> None:
    server, proxy = proxied()
    body = json.dumps({"model": "fake-model+sot", "messages": [{"role": "user", "content": QUESTION}], "stream": True})
    out = subprocess.run(
        ["curl", "-N", "-sS", "-H", "Content-Type: application/json", "-d", body, f"{proxy.url}/chat/completions"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    events = [line.removeprefix("data: ") for line in out.split("\n\n") if line]
    assert all(line.startswith("data: ") for line in out.split("\n\n") if line)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == expected_sot(server).text


def test_the_outline_can_come_first_as_reasoning(proxied: Callable[..., Any]) -> None:
    _, proxy = proxied()
    chunks = list(
        sdk(proxy).chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            extra_body={"sot": {"mode": "sot", "outline": True}},
        )
    )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    reasoning = [(d.model_extra or {}).get("reasoning_content") for d in deltas]
    outline = [r for r in reasoning if r]
    assert outline == ["1. First idea\n", "2. Second idea\n", "3. Third idea\n"]
    first_text = next(i for i, d in enumerate(deltas) if d.content)
    assert all(not r for r in reasoning[first_text:])  # the whole outline before any of the answer


def test_a_failure_after_text_went_out_ends_the_stream_with_an_error_event(proxied: Callable[..., Any]) -> None:
    text_went_out = threading.Event()

    def handle(request: SeenRequest) -> Reply:
        if request.kind == "expand" and request.point == 3:  # fails only once the client has read text
            return Reply(status=400, hold_until=text_went_out)
        return sot_script()(request)

    _, proxy = proxied(handle, options={"router": "rules", "max_retries": 0})
    stream = sdk(proxy).chat.completions.create(
        model="fake-model+sot", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    texts: list[str] = []
    try:
        with pytest.raises(openai.APIError, match="point 3"):
            for chunk in stream:
                texts.append(chunk.choices[0].delta.content or "" if chunk.choices else "")
                if "".join(texts).startswith("**1. First idea"):
                    text_went_out.set()
    finally:
        text_went_out.set()
    assert "".join(texts).startswith("**1. First idea")  # points 1 and 2 had gone out


@pytest.mark.anyio
async def test_a_keyless_client_never_spends_the_operators_environment_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forwarding clients' keys, the proxy builds its clients without the environment's key fallback."""
    from sot.proxy.clients import ClientPool
    from sot.proxy.settings import ProxySettings

    monkeypatch.setenv("SOT_API_KEY", "operator-secret-key-123")
    assert sot.Client(base_url="http://127.0.0.1:9/v1", model="m").api_key == "operator-secret-key-123"
    settings = ProxySettings(upstream=("http://127.0.0.1:9/v1",), model="m")
    pool = ClientPool(settings)
    assert pool._make("m", None).api_key is None
    assert pool._make("m", "client-key-456").api_key == "client-key-456"
