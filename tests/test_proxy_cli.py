"""`sot proxy` as a newcomer meets it: a busy port refused at once, errors in the proxy's own options,
a warning when anyone may use it, and a failed start in one line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _fakes import FakeServer, Reply, SeenRequest
from tests_support import SOT

from sot import constants
from sot.backends.process import free_port
from sot.errors import ConfigurationError
from sot.proxy import BackgroundProxy, ProxySettings
from sot.proxy.server import listen_sockets

EXIT_CONFIGURATION = 2
CHAT = {"model": "m+seq", "messages": [{"role": "user", "content": "How can I sleep better?"}]}


@pytest.fixture
def upstream() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_", "OPENAI_"))}
    return {**env, "SOT_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200", **extra}


def _proxy(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    command = [SOT, "proxy", *args]
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=_env(tmp_path, **env))


def _said_before_serving(proxy: subprocess.Popen[str]) -> tuple[list[str], str]:
    """The lines the proxy said before it announced itself, and the announcement."""
    assert proxy.stderr is not None
    before: list[str] = []
    for line in proxy.stderr:  # ends at the announcement, or at EOF if it failed
        if line.startswith("sot proxy: "):
            return before, line
        before.append(line)
    raise AssertionError(f"the proxy ended before serving: {before}")


def _stop(proxy: subprocess.Popen[str]) -> int:
    proxy.send_signal(signal.SIGINT)
    return proxy.wait(timeout=30)


# A busy port -------------------------------------------------------------------------------------


def test_a_busy_port_fails_at_once_in_one_line_naming_it_and_the_flag(tmp_path: Path, upstream: FakeServer) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for where in (["--upstream", upstream.url], []):  # an upstream, and the local backend (never started)
            started = time.monotonic()
            result = subprocess.run(
                [SOT, "proxy", "--port", str(port), *where],
                capture_output=True,
                text=True,
                timeout=30,
                env=_env(tmp_path),
            )
            assert result.returncode == EXIT_CONFIGURATION
            assert result.stderr == (
                f"sot: error: port {port} is already in use on 127.0.0.1: choose another --port (0: a free one)\n"
            )
            assert time.monotonic() - started < 15
    assert not (tmp_path / "cache" / "local-server.json").exists()


def test_a_second_proxy_on_the_same_port_is_refused_while_the_first_serves(
    tmp_path: Path, upstream: FakeServer
) -> None:
    first = _proxy(tmp_path, "--port", "0", "--upstream", upstream.url)
    try:
        _, announced = _said_before_serving(first)
        url = announced.split()[2]
        port = url.split(":")[2].split("/")[0]
        second = subprocess.run(
            [SOT, "proxy", "--port", port, "--upstream", upstream.url],
            capture_output=True,
            text=True,
            timeout=30,
            env=_env(tmp_path),
        )
        assert second.returncode == EXIT_CONFIGURATION and f"port {port} is already in use" in second.stderr
        assert httpx.post(url + "/chat/completions", json=CHAT).status_code == 200  # the first still serves
    finally:
        assert _stop(first) == 130


def test_listening_sockets_take_a_free_port_and_refuse_bad_ones() -> None:
    sockets = listen_sockets("127.0.0.1", 0)
    try:
        port = sockets[0].getsockname()[1]
        assert port > 0
        with pytest.raises(
            ConfigurationError, match=f"^port {port} is already in use on 127.0.0.1: choose another 'port'"
        ):
            listen_sockets("127.0.0.1", port)
    finally:
        for sock in sockets:
            sock.close()
    with pytest.raises(ConfigurationError, match=r"^'port' must be between 0 and 65535 .*, not 70000$"):
        listen_sockets("127.0.0.1", 70000)
    with pytest.raises(ConfigurationError, match=r"check 'host'$"):
        listen_sockets("no-such-host.invalid", 0)


# The proxy's own options in its errors ------------------------------------------------------------


def test_an_upstream_with_nothing_listening_is_a_502_that_names_upstream() -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    settings = ProxySettings(upstream=(dead,), model="m", options={"max_retries": 0})
    with BackgroundProxy(settings) as proxy:
        for stream in (False, True):
            reply = httpx.post(proxy.url + "/chat/completions", json={**CHAT, "stream": stream})
            assert reply.status_code == 502, reply.text
            message = reply.json()["error"]["message"]
            assert "--upstream" in message and "--base-url" not in message, message


def test_a_refused_upstream_key_names_upstream_api_key_not_the_client_key(upstream: FakeServer) -> None:
    def refuse(request: SeenRequest) -> Reply:
        return Reply(status=401, error_body={"error": {"message": "bad key", "code": "invalid_api_key"}})

    with FakeServer(refuse) as server:
        settings = ProxySettings(upstream=(server.url,), model="m", upstream_api_key="sk-upstream-secret-1234")
        with BackgroundProxy(settings) as proxy:
            reply = httpx.post(proxy.url + "/chat/completions", json=CHAT)
    assert reply.status_code == 401
    message = reply.json()["error"]["message"]
    assert "--upstream-api-key" in message and "sk-upstream" not in message, message
    assert "--api-key " not in message.replace("--upstream-api-key", "")


def test_a_failed_start_is_one_line_in_the_proxys_terms(tmp_path: Path) -> None:
    result = subprocess.run(
        [SOT, "proxy", "--port", "0", "--gguf", str(tmp_path / "missing.gguf")],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
    )
    assert result.returncode == EXIT_CONFIGURATION
    assert result.stderr.startswith("sot: error: GGUF file not found: ") and result.stderr.count("\n") == 1
    assert "missing.gguf" in result.stderr and "Traceback" not in result.stderr


# Open to anyone ----------------------------------------------------------------------------------

HOW = f"set one with --api-key KEY or ${constants.ENV_PROXY_API_KEY}"


@pytest.mark.parametrize(
    ("args", "env", "warning"),
    [
        (["--api-key", ""], {}, "the client key is empty, so clients need none: anyone who can reach {url} may use it"),
        ([], {constants.ENV_PROXY_API_KEY: ""}, "the client key is empty"),
        (
            ["--host", "0.0.0.0"],
            {},
            "no client key, and {url} is reachable from other machines: anyone there may use it",
        ),
        ([], {}, None),
        (["--host", "0.0.0.0", "--api-key", "k-123456"], {}, None),
        (["--host", "0.0.0.0"], {constants.ENV_PROXY_API_KEY: "k-123456"}, None),
    ],
)
def test_a_proxy_anyone_may_use_says_so_in_one_line_with_how_to_set_a_key(
    tmp_path: Path, upstream: FakeServer, args: list[str], env: dict[str, str], warning: str | None
) -> None:
    proxy = _proxy(tmp_path, "--port", "0", "--upstream", upstream.url, *args, **env)
    try:
        said, announced = _said_before_serving(proxy)
    finally:
        assert _stop(proxy) == 130
    url = announced.split()[2]
    if warning is None:
        assert said == []
    else:
        [line] = said
        assert line.startswith("sot: warning: " + warning.format(url=url)) and line.endswith(f"; {HOW}\n"), line
    assert "k-123456" not in "".join(said) + announced


def test_the_announcement_shows_no_secret_of_the_upstream_url(tmp_path: Path, upstream: FakeServer) -> None:
    secret_url = upstream.url.replace("http://", "http://user:pass-9f8e7d6c@") + "?api-key=k-5a4b3c2d1e"
    proxy = _proxy(tmp_path, "--port", "0", "--upstream", secret_url)
    try:
        said, announced = _said_before_serving(proxy)
    finally:
        assert _stop(proxy) == 130
    assert said == [] and announced.endswith(f" -> {upstream.url} (Ctrl-C stops it)\n"), announced


def test_a_cut_answer_finishes_with_length_and_says_so(fake) -> None:  # type: ignore[no-untyped-def]
    import openai
    from _fakes import Reply

    from sot.proxy import BackgroundProxy, ProxySettings

    server = fake(lambda request: Reply("An answer cut by its", finish_reason="length"))
    with BackgroundProxy(ProxySettings(upstream=(server.url,), options={"router": "rules"})) as proxy:
        client = openai.OpenAI(base_url=proxy.url, api_key="k", max_retries=0)
        whole = client.chat.completions.create(model="fake-model+seq", messages=[{"role": "user", "content": "q"}])
        stream = client.chat.completions.create(
            model="fake-model+seq", messages=[{"role": "user", "content": "q"}], stream=True
        )
        finishes = [c.choices[0].finish_reason for c in stream if c.choices and c.choices[0].finish_reason]
    assert whole.choices[0].finish_reason == "length" and finishes == ["length"]
