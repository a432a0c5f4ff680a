"""`sot serve --port`: the server listens there, or the port is refused at once in one line; never ignored."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import anyio
import pytest
from tests_support import SOT, require_binary

from sot import constants
from sot.backends._probe import healthy
from sot.backends.local import advertised_url
from sot.backends.model_files import bundled_model
from sot.backends.process import free_port
from sot.batch.records import read_records


def serve_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A cache of its own: were the port ignored, the server it started would meet no other test's.
    env = {**os.environ, "SOT_CACHE_DIR": str(tmp_path / "cache")}
    command = [SOT, "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("backend", [[], ["--backend", "vllm", "--model", "some/model"]])
def test_a_busy_port_fails_at_once_in_one_line_naming_it(tmp_path: Path, backend: list[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = serve_cli(tmp_path, *backend, "--port", str(port))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"sot: error: port {port} is already in use on 127.0.0.1: choose another --port, or leave it out for a free one"
    )
    assert not (tmp_path / "cache" / "local-server.json").exists()


@pytest.mark.parametrize("port", ["0", "65536", "70000"])
@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_port_out_of_range_is_refused(tmp_path: Path, port: str, dry_run: list[str]) -> None:
    result = serve_cli(tmp_path, "--port", port, *dry_run)
    assert result.returncode == 2
    assert result.stderr.strip() == f"sot: error: --port must be between 1 and 65535, not {port}"


@pytest.mark.local
def test_serve_listens_on_the_port_given_and_a_judge_can_use_it(tmp_path: Path, monkeypatch) -> None:
    require_binary()
    model = bundled_model()  # the local tests' cached model: the server below has a cache of its own
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    cache = tmp_path / "cache"
    env = {**os.environ, "SOT_CACHE_DIR": str(cache), "SOT_GGUF": str(model), "COLUMNS": "200"}
    command = [SOT, "serve", "--port", str(port), "--slots", "2"]
    serve = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert serve.stderr is not None
        said = ""
        for said in serve.stderr:  # ends at the server's announcement, or at EOF if it failed
            if "serving" in said:
                break
        assert f" at {url} with 2 slots" in said, said
        assert anyio.run(healthy, f"http://127.0.0.1:{port}/health")
        # What `sot ask` and the others look up to reuse a running `sot serve`.
        monkeypatch.setenv("SOT_CACHE_DIR", str(cache))
        assert anyio.run(advertised_url) == url
        assert json.loads((cache / "local-server.json").read_text())["url"] == url

        # README's judge example, pointed at it; the model is the server's own (it lists one).
        results = tmp_path / "r.jsonl"
        rows = [
            {
                "id": "q0",
                "mode": mode,
                "category": "c",
                "question": "How can I sleep better?",
                "text": text,
                "error": None,
            }
            for mode, text in (("sot", "1. Keep a schedule.\n2. Avoid screens late."), ("sequential", "Sleep more."))
        ]
        results.write_text("".join(json.dumps(r) + "\n" for r in rows))
        judged = subprocess.run(
            [SOT, "judge", str(results), "--judge-base-url", url],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        # A 135M model seldom writes a readable verdict: whichever way, the run ends and keeps its replies.
        assert judged.returncode in (0, constants.EXIT_SOME_FAILED), judged.stderr
        [record] = read_records(tmp_path / "r.judge.jsonl")
        assert record["judge_model"] == constants.LOCAL_MODEL_NAME and record["error"] is None
        assert isinstance(record["sot_first_reply"], str) and isinstance(record["sequential_first_reply"], str)
        assert "sot: judged 1/1 (q0): " in judged.stderr
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    assert serve.returncode == 130
    assert not anyio.run(healthy, f"http://127.0.0.1:{port}/health")
