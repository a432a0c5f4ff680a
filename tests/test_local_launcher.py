"""The local backend's launcher without a model: which server runs, failures in one line, the lock."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from tests_support import SOT

from sot.backends import local
from sot.backends.llama_server import ServerSettings, find_server, lacks_avx2
from sot.errors import LocalServerError

EXIT_LOCAL_SERVER = 8


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOT_", "OPENAI_", "PYTHONPATH"))}
    # Only the interpreter's folder on PATH: a llama-server on the machine's PATH would win.
    env["PATH"] = str(Path(sys.executable).parent)
    env["SOT_CACHE_DIR"] = str(tmp_path / "cache")
    return {**env, **extra}


def test_a_given_llama_server_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    (tmp_path / "llama-quantize").write_text("#!/bin/sh\n")
    (tmp_path / "llama-quantize").chmod(0o755)
    monkeypatch.setenv("SOT_LLAMA_SERVER", str(binary))
    program = find_server()
    assert program.argv == (str(binary),) and not program.embedded
    assert program.tool("llama-quantize") == tmp_path / "llama-quantize"
    assert find_server(str(binary)).argv == (str(binary),)
    with pytest.raises(LocalServerError, match="not executable: nowhere"):
        find_server(str(tmp_path / "nowhere"))


def test_the_embedded_server_takes_llama_servers_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOT_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    pytest.importorskip("xllamacpp")
    program = find_server()
    assert program.embedded and program.argv[0] == sys.executable and program.tool("llama-quantize") is None
    command = ServerSettings(program, Path("m.gguf"), slots=4, threads=2, gpu_layers=99).command(1234)
    assert command[: len(program.argv)] == list(program.argv)
    flags = command[len(program.argv) :]
    assert flags[flags.index("--parallel") + 1] == "4" and flags[flags.index("--ctx-size") + 1] == "8192"
    assert flags[flags.index("--n-gpu-layers") + 1] == "99" and "--no-kv-unified" in flags


CPUINFO = "processor\t: 0\nflags\t\t: fpu sse sse2 avx {extra} fma\n"


def test_a_cpu_without_avx2_is_named() -> None:
    assert lacks_avx2(CPUINFO.format(extra="f16c"), "x86_64")
    assert not lacks_avx2(CPUINFO.format(extra="avx2"), "x86_64")
    assert not lacks_avx2(CPUINFO.format(extra=""), "aarch64")
    assert not lacks_avx2("", "x86_64")  # unknown: let the server try


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        ("libgomp.so.1: cannot open shared object file: No such file or directory", "apt-get install libgomp1"),
        ("undefined symbol: ggml_init", "reinstall it (pip install 'sot-llm[local]')"),
    ],
)
def test_an_unloadable_prebuilt_server_is_one_line(tmp_path: Path, failure: str, expected: str) -> None:
    pytest.importorskip("xllamacpp")
    # A stand-in for the wheel that fails to load the way a missing system library makes it fail.
    fake = tmp_path / "fake" / "xllamacpp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise ImportError({failure!r})\n")
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    env = _env(tmp_path, PYTHONPATH=str(fake.parent), SOT_GGUF=str(gguf))
    result = subprocess.run([SOT, "ask", "What is tea?"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == EXIT_LOCAL_SERVER
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("sot: error: llama-server (embedded) exited with code 3 while starting: ")
    assert expected in lines[0] and result.stdout == ""


def test_a_bad_model_file_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    gguf = tmp_path / "broken.gguf"
    gguf.write_bytes(b"not a gguf file")
    result = subprocess.run(
        [SOT, "ask", "--gguf", str(gguf), "What is tea?"],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
    )
    assert result.returncode == EXIT_LOCAL_SERVER
    assert result.stderr.count("\n") == 1 and f"llama.cpp could not start with {gguf}:" in result.stderr


HOLDER = textwrap.dedent(
    """
    import json, os, sys
    from filelock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    record = {"pid": os.getpid(), "command": "sot ask", "state": "starting", "bundled": True}
    with open(sys.argv[2], "w") as state:
        json.dump(record, state)
    print("held", flush=True)
    sys.stdin.read()
    os.remove(sys.argv[2])
    lock.release()
    """
)


@pytest.mark.anyio
async def test_a_contended_lock_is_released_for_the_next_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another command holds the lock while it starts its server; ours says it waits, takes the lock when
    the other gives it up, and gives it back so that the next command gets it at once."""
    monkeypatch.setenv("SOT_CACHE_DIR", str(tmp_path))
    path = str(tmp_path / local.LOCK_NAME)
    other = subprocess.Popen(
        [sys.executable, "-c", HOLDER, path, str(tmp_path / local.STATE_NAME)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None and other.stdin is not None
    assert other.stdout.readline() == "held\n"
    waiting = anyio.Event()
    said: list[str] = []

    def say(message: str) -> None:
        said.append(message)
        waiting.set()

    monkeypatch.setattr(local, "say", say)
    claims: list[local._Claim] = []

    async def take() -> None:
        claims.append(await local._claim(None))

    async with anyio.create_task_group() as tg:
        tg.start_soon(take)
        await waiting.wait()  # the other holds the lock and is starting: ours waits
        other.stdin.close()
    assert said == [f"waiting for sot ask (pid {other.pid}) to start the local server"]
    assert other.wait(timeout=30) == 0
    [claim] = claims
    assert claim.lock is not None and claim.holder is None
    claim.lock.release()  # from the event loop's thread, as LocalBackend.aclose does
    # The next command must get it at once (with a per-thread lock it waited forever).
    probe = f"from filelock import FileLock; FileLock({path!r}).acquire(timeout=5)"
    assert subprocess.run([sys.executable, "-c", probe], timeout=60).returncode == 0


def test_llama_cpp_dry_run_downloads_and_writes_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "SOT_CACHE_DIR": str(cache)}
    env.pop("SOT_GGUF", None)
    result = subprocess.run(
        [SOT, "serve", "--dry-run", "--port", "8123"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    if "llama-server not found" in result.stderr and not os.environ.get("CI"):
        pytest.skip("no llama.cpp server installed")
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout)
    assert command[command.index("--port") + 1] == "8123"
    assert Path(command[command.index("--model") + 1]).parent == cache / "models"
    assert not cache.exists() or not any(cache.rglob("*.gguf")), "a dry run fetched or wrote the model"
    assert "fetching" not in result.stderr
