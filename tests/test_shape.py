"""The shape of the code (issue #30): no import cycle, short functions and modules, every answer option
a flag of every answering command, errors in the caller's terms, and each command whole on its own."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import typer
from _fakes import FakeServer, sot_script
from typer.testing import CliRunner

import sot
from sot.backends.base import ChatRequest
from sot.backends.mock import MockBackend
from sot.cli import app
from sot.options import Options, flag

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("sot", "backends", "prompts")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in ("backends", "prompts"):
        parts.insert(0, "sot")  # installed inside the sot package (pyproject's package-dir)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for base in SOURCES for path in (ROOT / base).rglob("*.py")}


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every sot module `name` imports, at any depth of its code (lazy imports count: a cycle is a cycle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            submodules = {f"{target}.{alias.name}" for alias in node.names} & known.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(target)
    return {module for module in found if module in known and module != name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == 1:
                return [*path[path.index(imported) :], imported]
            if imported not in state and (found := visit(imported)) is not None:
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_no_import_cycle_among_sots_modules() -> None:
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_checker_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_functions_and_modules_are_short() -> None:
    long: list[str] = []
    for path in _modules().values():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines")
    assert not long, "\n".join(long)


def _flags(command: str) -> set[str]:
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {name for param in click_command.params for name in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize("command", ["ask", "batch", "proxy"])
def test_every_answer_option_is_a_flag_of_every_answering_command(command: str) -> None:
    expected = {flag(spec.name) for spec in fields(Options)}
    assert expected - _flags(command) == set()


def test_an_answer_option_given_to_batch_reaches_its_answers(tmp_path: Path) -> None:
    """--seed and --reasoning were missing from `sot batch`; every option now reaches the requests."""
    prompts = tmp_path / "q.txt"
    prompts.write_text("Tell me a story about a dragon.\n", encoding="utf-8")
    with FakeServer(sot_script()) as server:
        result = CliRunner().invoke(
            app,
            ["batch", str(prompts), "--out", str(tmp_path / "r.jsonl"), "--modes", "sequential", "--seed", "7",
             "--reasoning", "off", "--base-url", server.url, "--model", "m", "--no-progress"],
        )  # fmt: skip
        bodies = [request.body for request in server.requests if request.kind == "sequential"]
    assert result.exit_code == 0, result.output
    assert [body.get("seed") for body in bodies] == [7]
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": False}


@pytest.mark.parametrize("command", ["ask", "batch", "report", "judge", "route", "serve", "proxy"])
def test_each_commands_help_works_on_its_own(command: str, tmp_path: Path) -> None:
    executable = shutil.which("sot", path=str(Path(sys.executable).parent)) or "sot"
    # In a fresh process and away from the checkout, so only the installed package is imported.
    done = subprocess.run([executable, command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout


def test_library_errors_name_fields_and_the_cli_names_flags() -> None:
    with pytest.raises(sot.ConfigurationError) as info:
        sot.Client(mode="fast")
    assert str(info.value) == "'mode' must be one of auto, sot, sequential, not 'fast'"
    result = CliRunner().invoke(app, ["ask", "q", "--mode", "fast"])
    assert result.exit_code == 2
    assert "--mode must be one of auto, sot, sequential, not 'fast'" in result.output


def test_the_proxy_names_its_own_flags(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["proxy", "--max-queued", "-1"])
    assert result.exit_code == 2 and "--max-queued must be at least 0" in result.output


@pytest.mark.anyio
async def test_a_per_call_override_can_reset_temperature_and_seed() -> None:
    async def handler(request: ChatRequest):  # type: ignore[no-untyped-def]
        yield "An answer."

    backend = MockBackend(handler)
    async with sot.Client(backend=backend, mode="sequential", temperature=0.7, seed=3) as client:
        await client.ask("q")
        await client.ask("q", temperature=None, seed=None)
    first, second = backend.requests
    assert (first.temperature, first.seed) == (0.7, 3)
    assert (second.temperature, second.seed) == (None, None)


def test_none_is_refused_where_an_option_needs_a_value() -> None:
    with pytest.raises(sot.ConfigurationError, match="'max_tokens' needs a value"):
        Options().updated(max_tokens=None)


def test_respelling_leaves_titles_server_text_and_child_output_alone() -> None:
    from sot.errors import ContextLengthError, point_error

    cause = ContextLengthError(
        "the prompt and the answer do not fit the model's context (HTTP 400: 'max_tokens' is too large): "
        "lower 'max_tokens' / 'point_max_tokens'",
        options=("max_tokens", "point_max_tokens"),
    )
    cause.own_from = str(cause).index("lower")
    error = point_error(0, "timeout", cause)
    shown = error.message_in(flag)
    assert shown.startswith("point 1 ('timeout') failed:")  # the title as it is
    assert "(HTTP 400: 'max_tokens' is too large)" in shown  # the server's words as they came
    assert shown.endswith("lower --max-tokens / --point-max-tokens")
