"""What `sot ask` loads on its way to the first request (speed itself is measured in eval/bench_startup.py)."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from _fakes import FakeServer

PROBE = """
import json, sys
from sot.cli import app
try:
    app(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in ("openai", "numpy", "wordllama", "pydantic_core._pydantic_core") if m in sys.modules)))
"""


def test_a_sequential_ask_loads_neither_the_openai_sdk_nor_the_router_model() -> None:
    with FakeServer() as server:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "ask", "--mode", "sequential", "--base-url", server.url, "--model", "m", "q"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert len(server.requests) == 1
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "openai" not in loaded and "numpy" not in loaded and "wordllama" not in loaded


def test_the_openai_sdk_is_a_test_dependency_only() -> None:
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith("openai") for dep in project["dependencies"])
    assert any(dep.startswith("openai") for dep in project["optional-dependencies"]["dev"])
