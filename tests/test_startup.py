"""What `sot ask` loads on its way to the first request (speed itself is measured in eval/bench_startup.py)."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tomllib
from pathlib import Path

from _fakes import FakeServer

PROBE = """
import json, sys
import sot.cli
try:
    sot.cli.main()  # as the `sot` script does: builds the command named in sys.argv
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

# What only an SoT answer, a load-aware one, a server without a named model, a terminal (the live view,
# and with it rich) or a zipped install needs. (An https endpoint loads zipfile all the same, through
# certifi: the scripted server here speaks plain HTTP.)
NOT_FOR_A_SEQUENTIAL_ASK = (
    "sot._live",
    "sot._sot",
    "sot._expansion",
    "sot.outline",
    "sot.backends._load",
    "sot.backends._probe",
    "zipfile",
)


@functools.cache
def _loaded_by_a_sequential_ask() -> frozenset[str]:
    with FakeServer() as server:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "ask", "--mode", "sequential", "--base-url", server.url, "--model", "m", "q"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert len(server.requests) == 1
    return frozenset(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_sequential_ask_loads_neither_the_openai_sdk_nor_the_router_model() -> None:
    loaded = _loaded_by_a_sequential_ask()
    assert not loaded & {"openai", "numpy", "wordllama", "pydantic_core._pydantic_core"}


def test_a_sequential_ask_loads_none_of_what_only_other_answers_need() -> None:
    assert not _loaded_by_a_sequential_ask() & set(NOT_FOR_A_SEQUENTIAL_ASK)


def test_the_openai_sdk_is_a_test_dependency_only() -> None:
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith("openai") for dep in project["dependencies"])
    assert any(dep.startswith("openai") for dep in project["optional-dependencies"]["dev"])


def _run(code: str) -> object:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_importing_sot_loads_its_modules_only_when_a_name_is_used() -> None:
    code = (
        "import json, sys, sot; before = sorted(m for m in sys.modules if m.startswith('sot.')); sot.Client; "
        "print(json.dumps([before, 'sot.client' in sys.modules, set(sot.__all__) <= set(dir(sot))]))"
    )
    assert _run(code) == [[], True, True]


def test_sot_s_modules_stay_reachable_as_its_attributes() -> None:
    code = "import json, sot; print(json.dumps([sot.errors.SotError.__name__, sot.constants.DEFAULT_ROUTER]))"
    assert _run(code) == ["SotError", "auto"]


def test_the_proxy_s_settings_are_read_without_its_server_stack() -> None:
    code = (
        "import json, sys, sot.proxy; sot.proxy.ProxySettings; "
        "print(json.dumps([m for m in ('starlette', 'uvicorn') if m in sys.modules]))"
    )
    assert _run(code) == []
