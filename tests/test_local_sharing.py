"""One local server shared by every sot command, whichever started it; what cannot be shared is refused at once.

Whole commands run against a stand-in llama-server (tests/_fakes/llama_server.py: llama-server's flags,
real HTTP on loopback) with a cache directory of their own; the last test does the same with the real
embedded server and model.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import psutil
import pytest
from _fakes.llama_server import answer_of
from tests_support import QUESTION, SOT, require_binary

import sot
from sot import events
from sot.backends import local
from sot.backends.local import LocalBackend, LocalConfig, describe_command, read_holder

EXIT_CONFIGURATION, EXIT_LOCAL_SERVER = 2, 8
TESTS = Path(__file__).resolve().parent  # on the stand-in's PYTHONPATH, for `python -m _fakes.llama_server`


class Lines:
    """A process's stderr, read on a thread, so a test waits for a line with a deadline and never hangs."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(process.stderr,), daemon=True).start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def until(self, wanted: Callable[[str], bool], timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"the process ended before the line; it said: {self.seen}")
            self.seen.append(line)
            if wanted(line):
                return line


@dataclass
class Machine:
    """A cache directory, a model file and a stand-in llama-server: what the commands of one machine share."""

    tmp: Path
    env: dict[str, str]
    starts: Path
    processes: list[subprocess.Popen[str]]

    def run(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
        command = [SOT, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env={**self.env, **env})

    def spawn(self, *args: str, **env: str) -> tuple[subprocess.Popen[str], Lines]:
        command = [SOT, *args]
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**self.env, **env})
        self.processes.append(process)
        return process, Lines(process)

    def started(self) -> list[int]:
        """The pids of the stand-in servers started so far."""
        return [int(line) for line in self.starts.read_text().split()] if self.starts.exists() else []

    def model(self, name: str) -> Path:
        path = self.tmp / name
        path.write_bytes(b"GGUF")
        return path


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nPYTHONPATH="{TESTS}" exec "{sys.executable}" -m _fakes.llama_server "$@"\n')
    binary.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    ours = {
        "SOT_CACHE_DIR": str(tmp_path / "cache"),
        "SOT_GGUF": str(model),
        "SOT_LLAMA_SERVER": str(binary),
        "FAKE_LLAMA_STARTS": str(tmp_path / "starts"),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_", "OPENAI_", "FAKE_LLAMA"))}
    env["COLUMNS"] = "200"
    for key in [k for k in os.environ if k.startswith(("SOT_", "OPENAI_", "FAKE_LLAMA"))]:
        monkeypatch.delenv(key)
    for key, value in ours.items():
        monkeypatch.setenv(key, value)
    found = Machine(tmp_path, {**env, **ours}, tmp_path / "starts", [])
    yield found
    for process in found.processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    _, alive = psutil.wait_procs([psutil.Process(p) for p in found.started() if psutil.pid_exists(p)], timeout=10)
    assert alive == [], "a stand-in llama-server outlived its command"


def _stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    return process.wait(timeout=30)


def _gone(pids: list[int]) -> bool:
    _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=10)
    return alive == []


def test_ask_batch_and_the_proxy_share_one_server_and_serve_and_a_second_proxy_are_refused_at_once(
    machine: Machine,
) -> None:
    proxy, said = machine.spawn("proxy", "--port", "0")
    url = said.until(lambda line: line.startswith("sot proxy: ")).split()[2]
    holder = read_holder()
    assert holder is not None and (holder.command, holder.pid, holder.state) == ("sot proxy", proxy.pid, "running")
    [server] = machine.started()

    # sot ask with no --base-url answers from the proxy's server, with no wait and nothing said.
    asked = machine.run("ask", "--json", "--mode", "sequential", QUESTION)
    assert asked.returncode == 0 and asked.stderr == "", asked.stderr
    assert json.loads(asked.stdout)["text"].startswith(f"Answered by {server}.")
    prompts = machine.tmp / "prompts.txt"
    prompts.write_text("How can I sleep better?\nWhat makes a good API?\n")
    batch = machine.run("batch", str(prompts), "--out", str(machine.tmp / "out.jsonl"), "--modes", "sequential")
    assert batch.returncode == 0, batch.stderr
    records = [json.loads(line) for line in (machine.tmp / "out.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["text"].startswith(f"Answered by {server}.") for r in records)
    reply = httpx.post(
        url + "/chat/completions", json={"model": "m+seq", "messages": [{"role": "user", "content": "Hi"}]}
    )
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"].startswith("Answered by")

    # Neither a second proxy on its port nor sot serve waits: each says why in one line, at once.
    port = url.split(":")[2].split("/")[0]
    started = time.monotonic()
    second = machine.run("proxy", "--port", port, timeout=20)
    assert second.returncode == EXIT_CONFIGURATION
    assert second.stderr == (
        f"sot: error: port {port} is already in use on 127.0.0.1: choose another --port (0: a free one)\n"
    )
    served = machine.run("serve", timeout=20)
    assert served.returncode == EXIT_LOCAL_SERVER
    assert served.stderr == (
        f"sot: error: sot proxy (pid {proxy.pid}) already runs the local server at {holder.url}, and sot ask, "
        "batch and proxy use it while it runs: stop that command first, or run sot serve again once it has ended\n"
    )
    assert time.monotonic() - started < 15
    assert machine.started() == [server] and read_holder() == holder

    assert _stop(proxy) == 130
    assert _gone([server]) and read_holder() is None


def test_the_proxy_uses_a_running_serve_and_goes_on_alone_when_it_ends(machine: Machine) -> None:
    serve, said = machine.spawn("serve")
    said.until(lambda line: "serving" in line)
    proxy, proxy_said = machine.spawn("proxy", "--port", "0")
    url = proxy_said.until(lambda line: line.startswith("sot proxy: ")).split()[2]
    [first] = machine.started()
    body = {"model": "m+seq", "messages": [{"role": "user", "content": "Hi"}]}
    assert (
        httpx.post(url + "/chat/completions", json=body)
        .json()["choices"][0]["message"]["content"]
        .startswith(f"Answered by {first}.")
    )

    assert _stop(serve) == 130 and _gone([first])
    reply = httpx.post(url + "/chat/completions", json=body, timeout=60)
    assert reply.status_code == 200, reply.text
    [_, second] = machine.started()
    assert reply.json()["choices"][0]["message"]["content"].startswith(f"Answered by {second}.")
    holder = read_holder()
    assert holder is not None and (holder.command, holder.pid) == ("sot proxy", proxy.pid)
    # Pass-through requests follow it to the new server too.
    assert httpx.get(url + "/anything-else").status_code == 200  # the stand-in answers any GET; a dead one: 502
    proxy_said.until(lambda line: "has stopped; going on without it" in line)
    assert _stop(proxy) == 130 and _gone([second])


@pytest.mark.anyio
async def test_an_answer_streaming_when_the_servers_owner_ends_is_finished_on_a_server_of_its_own(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in {"FAKE_LLAMA_TOKEN_DELAY": "0.05", "FAKE_LLAMA_ANONYMOUS": "1"}.items():
        monkeypatch.setenv(key, value)  # for the server this process starts: the same model as theirs
    serve, said = machine.spawn("serve", FAKE_LLAMA_TOKEN_DELAY="0.05", FAKE_LLAMA_ANONYMOUS="1")
    said.until(lambda line: "serving" in line)
    [theirs] = machine.started()
    backend = await LocalBackend.start(LocalConfig())
    try:
        assert backend.server is None  # sot serve's, not ours
        async with (
            sot.Client(backend=backend.backend, mode="sequential", max_retries=2) as client,
            client.stream(QUESTION) as answer_events,
        ):
            done = None
            async for event in answer_events:
                if isinstance(event, events.AnswerText) and serve.poll() is None:
                    serve.send_signal(signal.SIGINT)  # mid-answer: its owner ends and stops the server
                    await anyio.to_thread.run_sync(serve.wait)
                if isinstance(event, events.AnswerDone):
                    done = event.answer
        assert serve.returncode == 130 and _gone([theirs])
        assert backend.server is not None and backend.server.process is not None
        assert machine.started() == [theirs, backend.server.process.pid]
        # Whole, once: the cut attempt was retried from the start on our own server.
        assert done is not None and done.text == answer_of(None).strip() and done.calls[0].attempts == 2
        holder = read_holder()
        assert holder is not None and holder.pid == os.getpid() and holder.url == backend.server.url
    finally:
        await backend.aclose()
    assert read_holder() is None


def test_another_model_is_refused_at_once_naming_the_holder_and_the_ways_out(machine: Machine) -> None:
    serve, said = machine.spawn("serve")
    said.until(lambda line: "serving" in line)
    other = machine.model("other.gguf")
    asked = machine.run("ask", "--gguf", str(other), QUESTION, timeout=20)
    assert asked.returncode == EXIT_LOCAL_SERVER
    assert asked.stderr == (
        f"sot: error: sot serve (pid {serve.pid}) runs the local server with model.gguf, not other.gguf, and one "
        "runs at a time: give the same --gguf (model.gguf) to use it, stop that command, or give --base-url for "
        "another server\n"
    )
    # The proxy says it in its own options, in one line, not in a traceback.
    proxied = machine.run("proxy", "--port", "0", "--gguf", str(other), timeout=20)
    assert proxied.returncode == EXIT_LOCAL_SERVER
    assert proxied.stderr.count("\n") == 1 and "--upstream for another server" in proxied.stderr, proxied.stderr
    assert "--base-url" not in proxied.stderr and "Traceback" not in proxied.stderr
    assert len(machine.started()) == 1 and _stop(serve) == 130


HOLDER = textwrap.dedent(
    """
    import sys
    from filelock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    sys.stdin.read()
    """
)


def test_a_holder_that_does_not_share_is_named_not_waited_for(machine: Machine) -> None:
    (machine.tmp / "cache").mkdir(exist_ok=True)
    script = machine.tmp / "holder.py"
    script.write_text(HOLDER)
    other = subprocess.Popen(
        [sys.executable, str(script), str(machine.tmp / "cache" / local.LOCK_NAME)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    machine.processes.append(other)
    assert other.stdout is not None and other.stdout.readline() == "held\n"
    asked = machine.run("ask", QUESTION, timeout=30)
    assert asked.returncode == EXIT_LOCAL_SERVER
    assert asked.stderr == (
        f"sot: error: the local server is held by holder.py (pid {other.pid}), which does not share it: wait for it "
        "to end (or stop it), or give --base-url for another server\n"
    )
    assert machine.started() == []


@pytest.mark.parametrize(
    ("argv", "described"),
    [
        (["/usr/bin/sot", "ask", "--api-key", "sk-secret"], "sot ask"),
        (["/venv/lib/python3.11/site-packages/sot/__main__.py", "proxy"], "sot proxy"),
        (["/usr/bin/python3.11", "-P", "-m", "sot", "batch", "x.jsonl"], "sot batch"),
        (["python", "eval/small_profile_outlines.py", "record"], "small_profile_outlines.py"),
        (["/venv/bin/pytest", "-k", "x"], "pytest"),
        (["python3", "-c", "import sot"], "python -c"),
        (["-c"], "python -c"),
        (["/usr/bin/sot", "--url=https://user:pass@host"], "sot"),
        ([], "python"),
    ],
)
def test_a_holder_is_described_by_its_command_never_its_arguments(argv: list[str], described: str) -> None:
    assert describe_command(argv) == described


@pytest.mark.local
def test_ask_uses_the_proxys_embedded_server_for_real(tmp_path: Path) -> None:
    require_binary()
    from sot.backends.model_files import bundled_model

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_", "OPENAI_"))}
    # A cache of its own, the bundled model from the shared one: no other test's server is met.
    env |= {"SOT_CACHE_DIR": str(tmp_path / "cache"), "SOT_GGUF": str(bundled_model())}
    proxy = subprocess.Popen(
        [SOT, "proxy", "--port", "0", "--max-parallel", "2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        Lines(proxy).until(lambda line: line.startswith("sot proxy: "), timeout=300)
        servers = [c for c in psutil.Process(proxy.pid).children(recursive=True) if c.name() == "llama-server"]
        asked = subprocess.run(
            [SOT, "ask", "--json", "--mode", "sequential", "--max-tokens", "32", QUESTION],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert asked.returncode == 0 and "waiting" not in asked.stderr, asked.stderr
        assert json.loads(asked.stdout)["text"].strip()
        assert len(servers) == 1 and servers[0].is_running()
    finally:
        assert _stop(proxy) == 130
    assert _gone([s.pid for s in servers])
