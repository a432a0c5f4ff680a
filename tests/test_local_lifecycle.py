"""The local server's lifecycle: started, stopped, never orphaned, shared through a lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import psutil
import pytest
from tests_support import QUESTION, SOT, llama_servers_since, require_binary

from sot.backends.local import LocalBackend, LocalConfig

pytestmark = [pytest.mark.local]


@pytest.mark.anyio
async def test_stopping_leaves_no_process() -> None:
    require_binary()
    backend = await LocalBackend.start(LocalConfig(slots=2))
    assert backend.server is not None and backend.server.process is not None
    pid = backend.server.process.pid
    assert psutil.pid_exists(pid)
    await backend.aclose()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_cli_answers_with_no_configuration_and_leaves_no_process() -> None:
    require_binary()
    started = time.time()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_", "OPENAI_")) or k == "SOT_CACHE_DIR"}
    result = subprocess.run(
        [SOT, "ask", "--json", "--mode", "sot", "--temperature", "0", QUESTION],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["mode"] == "sot" and len(answer["points"]) >= 3
    assert [p.pid for p in llama_servers_since(started) if p.is_running()] == []


def _child_server(parent: psutil.Process, timeout: float = 60) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in parent.children(recursive=True):
            if child.name() == "llama-server":
                return child
        time.sleep(0.1)
    raise AssertionError("no llama-server child appeared")


@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_no_orphan_when_the_parent_is_interrupted_or_killed(how: str) -> None:
    require_binary()
    parent = subprocess.Popen(
        [SOT, "ask", "--mode", "sequential", "--max-tokens", "2000", "Write a long essay."],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = _child_server(psutil.Process(parent.pid))
    parent.send_signal(signal.SIGINT if how == "sigint" else signal.SIGKILL)
    code = parent.wait(timeout=30)
    _gone, alive = psutil.wait_procs([server], timeout=10)
    assert alive == [], "llama-server outlived its parent"
    assert code == (130 if how == "sigint" else -signal.SIGKILL)


def _count_servers_while(processes: list[subprocess.Popen[str]], started: float) -> int:
    """The most llama-server processes seen at once while `processes` run (sampled)."""
    most = 0
    while any(p.poll() is None for p in processes):
        most = max(most, len([s for s in llama_servers_since(started) if s.is_running()]))
        time.sleep(0.05)
    return most


def _ask(*extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_BASE", "SOT_MODEL", "OPENAI_"))}
    args = [SOT, "ask", "--json", "--mode", "sot", "--temperature", "0", *extra, QUESTION]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_two_commands_never_run_two_servers() -> None:
    require_binary()
    started = time.time()
    asks = [_ask(), _ask()]
    most = _count_servers_while(asks, started)
    for ask in asks:
        out, err = ask.communicate(timeout=300)
        assert ask.returncode == 0, err
        assert json.loads(out)["mode"] == "sot"
    assert most == 1


def test_ask_reuses_a_running_serve() -> None:
    require_binary()
    started = time.time()
    serve = subprocess.Popen([SOT, "serve", "--slots", "4"], stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stderr is not None
        for line in serve.stderr:
            if "serving" in line:
                break
        servers = [s.pid for s in llama_servers_since(started)]
        assert len(servers) == 1
        ask = _ask()
        most = _count_servers_while([ask], started)
        _out, err = ask.communicate(timeout=300)
        assert ask.returncode == 0, err
        assert most == 1 and [s.pid for s in llama_servers_since(started) if s.is_running()] == servers
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    _gone, alive = psutil.wait_procs([psutil.Process(pid) for pid in servers if psutil.pid_exists(pid)], timeout=10)
    assert alive == []
