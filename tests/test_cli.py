"""The command line as a user runs it: a real process against the fake server."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _fakes import Reply, SeenRequest, sot_script
from tests_support import SOT

import sot

CANARY = "sk-canary-0123456789abcdef"


def run_cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SOT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_json_output_has_the_whole_answer(fake) -> None:
    server = fake(sot_script(["One", "Two", "Three"]))
    result = run_cli("ask", "--mode", "sot", "--json", "--base-url", server.url, "--model", "m", "How?")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for key in ("text", "mode", "points", "expansions", "failed_points", "timings", "usage"):
        assert key in data
    assert data["mode"] == "sot" and data["points"] == ["One", "Two", "Three"]
    assert data["timings"]["total_s"] > 0 and data["usage"]["total_tokens"] > 0


def test_question_from_stdin_and_plain_output_in_order(fake) -> None:
    server = fake(sot_script(["One", "Two", "Three"], expansion_delay=lambda n: (4 - n) * 0.05))
    result = run_cli("ask", "--mode", "sot", "--base-url", server.url, "--model", "m", "-", stdin="Why?\n")
    assert result.returncode == 0, result.stderr
    sections = [f"**{i}. {p}**\n\nDetails on {p} for point {i}." for i, p in enumerate(["One", "Two", "Three"], 1)]
    assert result.stdout == "\n\n".join(sections) + "\n"
    assert "Why?" in server.requests[0].prompt


def _leaky_401(request: SeenRequest) -> Reply:
    auth = request.headers.get("authorization", "")
    message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')} see https://example.invalid/keys"
    return Reply(status=401, error_body={"error": {"message": message}})


@pytest.mark.parametrize("debug", [False, True])
def test_401_is_one_line_nonzero_and_never_shows_the_key(fake, debug: bool) -> None:
    server = fake(_leaky_401)
    args = ["ask", "--mode", "sot", "--base-url", server.url, "--model", "m", "--api-key", CANARY, "hi"]
    result = run_cli(*args, *(["--debug"] if debug else []))
    assert result.returncode == sot.AuthenticationError.exit_code  # the root cause's code, whichever call met it
    assert len(server.requests) == 1
    assert CANARY not in result.stdout + result.stderr
    assert server.url not in result.stderr and "example.invalid" not in result.stderr
    assert "401" in result.stderr
    if not debug:
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr


def test_api_key_from_environment_reaches_the_server_only(fake) -> None:
    server = fake(_leaky_401)
    env = {"PATH": "", "SOT_API_KEY": CANARY, "SOT_BASE_URL": server.url, "SOT_MODEL": "m"}
    result = run_cli("ask", "--mode", "sequential", "hi", env=env)
    assert server.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    assert result.returncode == sot.AuthenticationError.exit_code
    assert CANARY not in result.stdout + result.stderr


@pytest.mark.anyio
async def test_key_absent_from_reprs_errors_and_logs(fake, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    server = fake(_leaky_401)
    client = sot.Client(base_url=server.url, model="m", api_key=CANARY, mode="sequential")
    with pytest.raises(sot.AuthenticationError) as info:
        await client.ask("hi")
    backend = await client.backend()
    await client.aclose()
    for text in (str(info.value), repr(info.value), repr(client), repr(backend), caplog.text):
        assert CANARY not in text


def test_bad_option_is_a_configuration_error() -> None:
    result = run_cli("ask", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--mode", "fast", "hi")
    assert result.returncode == sot.ConfigurationError.exit_code
    assert "mode" in result.stderr


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("sot ")


def test_debug_logs_what_sot_does_and_is_quiet_without_it(fake) -> None:
    def one_point(request: SeenRequest) -> Reply:
        return Reply("1. Only point\n") if request.kind == "skeleton" else Reply("A sequential answer.")

    server = fake(one_point)
    args = ["ask", "--mode", "sot", "--no-pipeline", "--base-url", server.url, "--model", "m", "hi"]
    quiet = run_cli(*args)
    loud = run_cli(*args, "-v")
    assert quiet.returncode == loud.returncode == 0
    assert quiet.stdout == loud.stdout == "A sequential answer.\n"
    # Without --debug, one line says the answer is not what was asked for, and nothing more.
    assert (
        quiet.stderr
        == "sot: answered sequentially: the skeleton had 1 usable point(s); answered sequentially instead\n"
    )
    assert "falling back to sequential decoding" in loud.stderr


def test_json_failures_are_one_json_object_and_bad_stdin_is_named(fake) -> None:
    server = fake(lambda request: Reply(status=400, error_body={"error": {"message": "no such model"}}))
    result = run_cli("ask", "--json", "--mode", "sequential", "--base-url", server.url, "--model", "m", "hi")
    assert result.returncode == sot.BadRequestError.exit_code
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "BadRequestError" and error["exit_code"] == result.returncode
    latin1 = subprocess.run(
        [SOT, "ask", "--base-url", server.url, "--model", "m", "-"],
        input="caf\xe9?".encode("latin-1"),
        capture_output=True,
        check=False,
    )
    assert latin1.returncode == sot.ConfigurationError.exit_code
    assert b"not UTF-8" in latin1.stderr and len(server.requests) == 1


def _in_process(*args: str):
    from typer.testing import CliRunner

    from sot.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("ask", "--timeout", "nan"),
        ("ask", "--timeout", "inf"),
        ("ask", "--timeout", "-1"),
        ("ask", "--temperature", "nan"),
        ("ask", "--temperature", "3"),
        ("batch", "--timeout", "nan"),
        ("batch", "--temperature", "-inf"),
        ("route", "--threshold", "nan"),
        ("route", "--threshold", "1.5"),
    ],
)
def test_float_options_reject_nan_inf_and_out_of_range(tmp_path, command: str, option: str, value: str) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("one question\n")
    head = {"ask": ["ask", "hi"], "batch": ["batch", str(prompts), "--out", str(tmp_path / "r.jsonl")]}
    args = [*head.get(command, ["route", "hi"]), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", option, value]
    result = _in_process(*args)
    assert result.exit_code == sot.ConfigurationError.exit_code, result.output
    assert result.output.strip().count("\n") == 0 and result.output.startswith(f"sot: error: {option} must be")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "r.jsonl").exists()


def test_batch_on_an_empty_file_fails(tmp_path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    result = _in_process("batch", str(empty), "--out", str(tmp_path / "r.jsonl"), "--base-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == sot.ConfigurationError.exit_code
    assert "empty.jsonl has no prompts" in result.output


@pytest.mark.parametrize(
    "template",
    [
        "{% for i in range(10**8) %}x{% endfor %}",
        "{{ 'x' * 10**9 }}",
        "{{ '{:>1000000000}'.format(question) }}",
        "{{ question|center(10**9) }}",
        "{% set ns = namespace(s=question) %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
        "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
        "{{ 1 / 0 }}",
    ],
)
def test_prompt_templates_that_hang_or_allocate_are_stopped_in_one_line(fake, tmp_path, template: str) -> None:
    server = fake(sot_script())
    (tmp_path / "sequential.j2").write_text(template)
    args = ["ask", "--mode", "sequential", "--prompts", str(tmp_path), "--base-url", server.url, "--model", "m", "hi"]
    result = _in_process(*args)
    assert result.exit_code == sot.TemplateError.exit_code, result.output
    assert result.output.strip().count("\n") == 0 and "prompt template sequential.j2 failed" in result.output
    assert server.requests == []


def test_batch_progress_goes_to_stderr_never_stdout(fake, tmp_path) -> None:
    server = fake(sot_script())
    prompts = tmp_path / "p.txt"
    prompts.write_text("one\ntwo\n")
    out = tmp_path / "r.jsonl"
    result = run_cli("batch", str(prompts), "--out", str(out), "--modes", "sequential", "--base-url", server.url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and "2 answered" in result.stderr


def test_an_ignored_model_on_the_local_backend_is_named(monkeypatch, capsys) -> None:
    from sot.cli._common import warn_ignored_model

    monkeypatch.delenv("SOT_BASE_URL", raising=False)
    warn_ignored_model(sot.Client(mode="sequential"), "gpt-4o")
    warn_ignored_model(sot.Client(base_url="http://127.0.0.1:9/v1", mode="sequential"), "gpt-4o")
    warn_ignored_model(sot.Client(mode="sequential"), None)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model 'gpt-4o' is ignored by the embedded local backend" in err


def test_help_shows_no_python_types() -> None:
    shown_for: dict[str, str] = {}
    for command in ("ask", "batch", "judge", "report", "route", "serve"):
        shown = subprocess.run(
            [SOT, command, "--help"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
            timeout=60,
        )
        assert shown.returncode == 0
        assert "<bool>" not in shown.stdout and "<list" not in shown.stdout, command
        shown_for[command] = shown.stdout
    assert "--base-url" in shown_for["ask"] and "<url>" in shown_for["ask"]


def test_the_readme_python_example_runs_as_written_and_streams_readably(fake, tmp_path) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Python\n", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "localhost" not in code
    server = fake(sot_script(["Clear names", "Stable versions", "Good errors"]))
    # The example uses the embedded backend; $SOT_BASE_URL points the same code at the test server.
    env = {**os.environ, "SOT_BASE_URL": server.url, "SOT_MODEL": "m"}
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    titles = ["Clear names", "Stable versions", "Good errors"]
    sections = [f"**{i}. {t}**\n\nDetails on {t} for point {i}." for i, t in enumerate(titles, 1)]
    assert done.stdout.count("\n\n".join(sections)) == 2  # printed whole, then streamed piece by piece


def test_the_proxy_takes_every_option_that_shapes_an_answer_in_ask() -> None:
    import click
    import typer.main

    from sot.cli import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]

    def options(name: str) -> set[str]:
        return {opt for param in commands[name].params if isinstance(param, click.Option) for opt in param.opts}

    # How ask shows its answer, and its key (the proxy's --api-key is the key its clients present).
    ask_only = {"--stream", "--json", "--keep-reasoning", "--api-key"}
    missing = options("ask") - ask_only - options("proxy")
    assert not missing, f"sot proxy lacks {sorted(missing)}"


def test_a_cut_answer_and_a_fallback_are_said_on_stderr_and_in_json(fake) -> None:
    def handler(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            return Reply("1. Only one point")
        return Reply("A plain answer that ran into its", finish_reason="length")

    server = fake(handler)
    args = ("ask", "--mode", "sot", "--base-url", server.url, "--model", "m", "How?")
    plain = run_cli(*args)
    as_json = run_cli(*args, "--json")
    for result in (plain, as_json):
        assert result.returncode == 0
        assert "sot: answered sequentially: the skeleton had 1 usable point(s)" in result.stderr
        assert "cut at its token limit (raise --max-tokens" in result.stderr
    data = json.loads(as_json.stdout)
    assert data["truncated"] and data["fell_back"]
    assert [c["finish_reason"] for c in data["calls"]] == ["stop", "length"]


def test_a_whole_sot_answer_says_nothing_more(fake) -> None:
    server = fake(sot_script(["One", "Two", "Three"]))
    result = run_cli("ask", "--mode", "sot", "--json", "--base-url", server.url, "--model", "m", "How?")
    assert result.returncode == 0 and result.stderr == ""
    data = json.loads(result.stdout)
    assert not data["truncated"] and not data["fell_back"]


def test_debug_tells_each_call_and_the_outline_of_a_whole_answer(fake) -> None:
    server = fake(sot_script(["One", "Two", "Three"]))
    result = run_cli("ask", "--mode", "sot", "--debug", "--base-url", server.url, "--model", "m", "How?")
    assert result.returncode == 0
    log = result.stderr
    assert "answering with sot (mode sot requested; profile generic)" in log
    assert "outline: 3 point(s) kept of 3 item(s)" in log
    assert "skeleton call:" in log and all(f"expand {n} call:" in log for n in (1, 2, 3))
    assert "answered: sot, 4 call(s)" in log
