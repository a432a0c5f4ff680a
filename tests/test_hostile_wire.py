"""Hostile servers against the wire layer: real HTTP on loopback, the API and the CLI."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import zlib
from collections.abc import Callable

import pytest
from _fakes import FakeServer, Reply, SeenRequest, sot_script
from tests_support import SOT

import sot
from sot._sanitize import sanitize

pytestmark = pytest.mark.anyio

POINTS = ["Alpha point", "Beta point", "Gamma point"]
GOOD = "The full text of the second point."


def chunk(delta: object = None, finish: object = None, **extra: object) -> str:
    payload: dict[str, object] = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    payload.update(extra)
    return f"data: {json.dumps(payload)}\n\n"


def first_then_good(replies: list[Reply]) -> Callable[[SeenRequest], Reply]:
    """Point 2's expansion answers with `replies` (one per attempt), then well; the rest is well-behaved."""
    base = sot_script(POINTS)
    remaining = list(replies)

    def handler(request: SeenRequest) -> Reply:
        if request.kind == "expand" and request.point == 2:
            return remaining.pop(0) if remaining else Reply(GOOD)
        return base(request)

    return handler


def point_attempts(server: FakeServer) -> int:
    return len([r for r in server.of_kind("expand") if r.point == 2])


async def ask(server: FakeServer, **options) -> sot.Answer:
    return await sot.ask("q", base_url=server.url, model="m", mode="sot", **options)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SOT, "ask", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SOT_API_KEY": "", "OPENAI_API_KEY": "", **(env or {})},
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("sot: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
async def test_raw_unicode_line_separators_inside_json_answer(fake, separator: str) -> None:
    text = f"Line one{separator}still the same line."
    server = fake(first_then_good([Reply(text, ensure_ascii=False)]))
    answer = await ask(server)
    assert answer.expansions[1] == sanitize(text)  # U+0085 is a C1 control: the terminal sanitiser drops it
    assert "still the same line" in answer.expansions[1]
    assert point_attempts(server) == 1


MALFORMED = {
    "choices: string": 'data: {"choices": "abc"}\n\n',
    "choices: [1]": 'data: {"choices": [1]}\n\n',
    "delta: string": 'data: {"choices": [{"index": 0, "delta": "hi"}]}\n\n',
    "content: number": 'data: {"choices": [{"index": 0, "delta": {"content": 123}}]}\n\n',
    "usage.prompt_tokens: list": 'data: {"choices": [], "usage": {"prompt_tokens": [1]}}\n\n',
    "finish_reason: object": 'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": {}}]}\n\n',
    "top level: list": "data: [1, 2]\n\n",
}


@pytest.mark.parametrize("shape", list(MALFORMED))
async def test_each_malformed_chunk_shape_is_retried_and_answers(fake, shape: str) -> None:
    server = fake(first_then_good([Reply(events=[chunk({"content": "Partial "}), MALFORMED[shape]])]))
    answer = await ask(server)
    assert point_attempts(server) == 2
    assert answer.expansions[1] == GOOD


@pytest.mark.parametrize("shape", ["choices: [1]", "content: number", "usage.prompt_tokens: list"])
async def test_a_malformed_chunk_that_persists_is_a_protocol_error_naming_the_field(fake, shape: str) -> None:
    server = fake(first_then_good([Reply(events=[MALFORMED[shape]])] * 3))
    with pytest.raises(sot.ProtocolError) as info:
        await ask(server, max_retries=2)
    field = shape.split(":")[0]
    assert f"`{field}" in str(info.value) or field.split(".")[0] in str(info.value)
    assert isinstance(info.value, sot.PointError)


def test_cli_malformed_chunks_end_in_one_line_and_the_protocol_exit_code() -> None:
    with FakeServer(lambda request: Reply(events=[MALFORMED["delta: string"]])) as server:
        done = cli("--base-url", server.url, "--model", "m", "--mode", "sequential", "--max-retries", "1", "q")
    assert done.returncode == sot.ProtocolError.exit_code
    assert "choices[0].delta" in one_line_error(done)


async def test_provider_stream_shapes_are_understood(fake) -> None:
    # Azure's first chunk (no choices, filter results), comments, Gemini's usage on every chunk.
    usage = {"prompt_tokens": 7, "completion_tokens": 1}
    events = [
        ": OPENROUTER PROCESSING\n\n",
        'data: {"choices": [], "prompt_filter_results": [{"prompt_index": 0}]}\n\n',
        chunk({"role": "assistant", "reasoning_content": "hidden thoughts"}),
        chunk({"content": "Visible "}, usage=usage),
        ": keep-alive\n\n",
        chunk({"content": "answer."}, usage={**usage, "completion_tokens": 2}),
        chunk({}, "stop", usage={**usage, "completion_tokens": 3}),
        "data: [DONE]\n\n",
    ]
    server = fake(first_then_good([Reply(events=events)]))
    answer = await ask(server)
    assert answer.expansions[1] == "Visible answer."
    assert [c.usage.completion_tokens for c in answer.calls if c.index == 1 and c.usage] == [3]


@pytest.mark.parametrize(
    "ending",
    ['data: {"error": {"code": 502, "message": "upstream died"}}\n\n', chunk({}, "error")],
    ids=["error object", "finish_reason error"],
)
async def test_an_error_inside_a_200_stream_is_retried_and_its_partial_text_dropped(fake, ending: str) -> None:
    events = [chunk({"content": "Doomed partial "}), ending]
    server = fake(first_then_good([Reply(events=events)]))
    answer = await ask(server)
    assert point_attempts(server) == 2
    assert answer.expansions[1] == GOOD and "Doomed" not in answer.text


@pytest.mark.parametrize("value", ["soon", "-5", "nan", "inf", "Wed, 21 Oct 2015 07:28:00 GMT"])
async def test_garbage_retry_after_is_the_normal_backoff(fake, value: str) -> None:
    server = fake(first_then_good([Reply(status=503, headers={"Retry-After": value})]))
    answer = await ask(server)
    first, second = [r for r in server.of_kind("expand") if r.point == 2]
    assert answer.expansions[1] == GOOD
    assert second.received_at - (first.finished_at or 0) >= 0.45  # the backoff, not an instant retry


async def test_the_fail_fast_message_names_the_wait_asked_for(fake) -> None:
    server = fake(first_then_good([Reply(status=429, headers={"Retry-After": "3600"})]))
    with pytest.raises(sot.RateLimitError) as info:
        await ask(server)
    assert "3600 s" in str(info.value) and point_attempts(server) == 1


async def test_error_bodies_keep_their_fields_and_request_id(fake) -> None:
    mistral = {
        "detail": [{"loc": ["body", "seed"], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}]
    }
    gemini = [
        {
            "error": {
                "code": 400,
                "message": 'Invalid JSON payload received. Unknown name "seed"',
                "status": "INVALID_ARGUMENT",
            }
        }
    ]
    # A field sot never sends (a refusal of one it sends is adapted and sent again: tests/test_providers.py).
    openai_style = {
        "error": {"message": "Unsupported parameter: 'logprobs'", "param": "logprobs", "code": "unsupported_parameter"}
    }
    for body, status, param, code in [
        (mistral, 422, "seed", "extra_forbidden"),
        (gemini, 400, None, "400"),
        (openai_style, 400, "logprobs", "unsupported_parameter"),
    ]:
        server = fake(first_then_good([Reply(status=status, error_body=body, headers={"x-request-id": "req_42"})]))
        with pytest.raises(sot.BadRequestError) as info:
            await ask(server)
        assert (info.value.param, info.value.code, info.value.request_id) == (param, code, "req_42")
        assert point_attempts(server) == 1
    assert info.value.server_message == "Unsupported parameter: 'logprobs'"


async def test_408_and_409_have_their_own_retried_classes(fake) -> None:
    for status, cls in [(408, sot.RequestTimeoutError), (409, sot.ConflictError)]:
        server = fake(first_then_good([Reply(status=status)] * 5))
        with pytest.raises(cls):
            await ask(server, max_retries=1)
        assert point_attempts(server) == 2


async def test_context_too_long_names_the_options_that_change_it(fake) -> None:
    body = {
        "error": {"message": "This model's maximum context length is 2048 tokens.", "code": "context_length_exceeded"}
    }
    server = fake(first_then_good([Reply(status=400, error_body=body)]))
    with pytest.raises(sot.ContextLengthError) as info:
        await ask(server)
    # The library names its fields; the CLI respells them as its flags.
    assert "'point_max_tokens'" in str(info.value) and "'max_tokens'" in str(info.value)
    in_flags = info.value.message_in(lambda name: "--" + name.replace("_", "-"))
    assert "--point-max-tokens" in in_flags and "--max-tokens" in in_flags


def test_cli_html_page_is_not_an_api_and_is_not_retried() -> None:
    page = Reply(body=b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>", content_type="text/html")
    with FakeServer(lambda request: page) as server:
        done = cli("--base-url", server.url, "--model", "m", "--mode", "sequential", "q")
        assert len(server.requests) == 1
    message = one_line_error(done)
    assert "not an OpenAI-compatible API" in message and "--base-url" in message and "127.0.0.1" not in message


def test_cli_base_url_without_v1_says_to_add_it() -> None:
    def handler(request: SeenRequest) -> Reply:
        if request.path.startswith("/v1/"):
            return Reply("fine")
        return Reply(status=404, body=b"404 page not found", content_type="text/plain")

    with FakeServer(handler) as server:
        done = cli("--base-url", server.url.removesuffix("/v1"), "--model", "m", "--mode", "sequential", "q")
    assert done.returncode == sot.BadRequestError.exit_code
    assert "add /v1" in one_line_error(done)


def test_cli_connection_refused_is_not_retried_in_silence_and_says_what_to_check() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = cli("--base-url", f"http://user:hunter2secret@127.0.0.1:{port}/v1", "--model", "m", "--debug", "q")
    message = one_line_error(done) if "Traceback" not in done.stderr else ""
    assert done.returncode == sot.BackendConnectionError.exit_code
    assert "retrying in" not in done.stderr  # the retry loop's log line: no retry happened
    # The address nothing answers at is named, its user info never.
    assert "hunter2secret" not in done.stderr and "user:" not in done.stderr
    assert not message or (f"127.0.0.1:{port}" in message and "--base-url" in message and "running" in message)


def test_cli_slow_models_list_obeys_timeout_and_never_shows_url_credentials() -> None:
    with FakeServer(models_byte_delay=1.0) as server:
        secret_url = server.url.replace("http://", "http://admin:s3cretpassw0rd@")
        done = cli("--base-url", secret_url, "--timeout", "1.5", "--mode", "sequential", "q")
        debug = cli("--base-url", secret_url, "--timeout", "1", "--mode", "sequential", "--debug", "q")
    assert done.returncode == sot.ConfigurationError.exit_code
    assert "1.5 s" in one_line_error(done)
    assert debug.returncode == sot.ConfigurationError.exit_code
    for output in (done.stderr, debug.stderr, debug.stdout):
        assert "s3cretpassw0rd" not in output and "admin:" not in output


def test_a_redirect_is_not_followed_and_says_so() -> None:
    moved = Reply(status=301, body=b"", content_type="text/plain", headers={"Location": "http://elsewhere.example/v1"})
    with FakeServer(lambda request: moved) as server:
        done = cli("--base-url", server.url, "--model", "m", "--mode", "sequential", "q")
        assert len(server.requests) == 1
    message = one_line_error(done)
    assert "redirect" in message and "elsewhere" not in message


async def test_a_stalled_endpoint_with_keepalives_fails_over_to_the_healthy_one(fake) -> None:
    stalled = fake(lambda request: Reply("never finishes", fault="stall", fault_after=1, keepalive_s=0.05))
    healthy = fake(sot_script(POINTS))
    answer = await sot.ask(
        "q", base_url=[stalled.url, healthy.url], model="m", mode="sot", stall_timeout=0.5, max_parallel=2
    )
    assert answer.expansions == [f"Details on {p} for point {n}." for n, p in enumerate(POINTS, 1)]
    assert stalled.requests and healthy.requests
    # Out of rotation on its first stall: no request reached the stalled server after that.
    assert stalled.wait_for(lambda s: all(r.finished_at for r in s.requests))
    first_stall_end = min(r.finished_at or 0 for r in stalled.requests)
    assert all(r.received_at < first_stall_end for r in stalled.requests)


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * (1 << 20)
    parts = [squeeze.compress(zeros) for _ in range(1024)]  # 1 GiB, no newline anywhere
    return b"".join([*parts, squeeze.flush()])


def test_cli_gzip_bomb_is_bounded(gzip_bomb: bytes) -> None:
    bomb = Reply(body=gzip_bomb, content_type="text/event-stream", content_encoding="gzip")
    with FakeServer(lambda request: bomb) as server:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        done = cli("--base-url", server.url, "--model", "m", "--mode", "sequential", "--max-retries", "1", "q")
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert done.returncode == sot.ProtocolError.exit_code
    assert "sot stopped reading it" in one_line_error(done)
    assert max(peak_kb, before) < 600 * 1024


async def test_a_trickling_health_check_is_bounded() -> None:
    from sot.backends._probe import healthy

    with FakeServer(models_byte_delay=1.0) as server:
        assert await healthy(server.url.removesuffix("/v1") + "/health", deadline_s=0.5) is False
    with FakeServer() as server:
        assert await healthy(server.url.removesuffix("/v1") + "/health", deadline_s=5) is True


async def test_a_refusing_endpoint_fails_over_while_another_is_in_rotation(fake) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    healthy = fake(sot_script(POINTS))
    answer = await sot.ask("q", base_url=[dead, healthy.url], model="m", mode="sot", max_parallel=4)
    assert answer.expansions == [f"Details on {p} for point {n}." for n, p in enumerate(POINTS, 1)]
    assert len(healthy.of_kind("expand")) == len(POINTS)
    assert any(call.attempts == 2 for call in answer.calls)  # some call met the refusal, then went elsewhere
