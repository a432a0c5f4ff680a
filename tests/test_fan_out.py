"""Load-aware fan-out (issue #29): the server's load, read where it publishes it, narrows SoT's fan-out
or sends a mode-auto answer sequential; the decision is in the Answer, --json, and the proxy's headers.

Against eval/twin (a batched GPU server's twin serving llama.cpp's /slots and vLLM's /metrics) with
background streams holding its batch slots, and against a server that publishes no load at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _fakes import FakeServer, sot_script
from tests_support import SOT

import sot
from sot import constants
from sot.proxy import BackgroundProxy, ProxySettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from twin import TwinConfig, TwinServer

pytestmark = pytest.mark.anyio
# The rules router sends it to SoT (no model to load); the twin plans 4-6 sections for any question.
QUESTION = "What are the most effective ways to improve my sleep?"
SLOTS = 8


@pytest.fixture
def twin() -> Iterator[TwinServer]:
    with TwinServer(TwinConfig(time_scale=50.0, batch_limit=SLOTS)) as server:
        yield server


def _busy(twin: TwinServer, streams: int) -> None:
    httpx.post(
        twin.base_url.removesuffix("/v1") + "/admin/load", json={"streams": streams}, timeout=10
    ).raise_for_status()


async def _ask(twin: TwinServer, **options: object) -> sot.Answer:
    async with sot.Client(base_url=twin.base_url, model="m", router="rules", **options) as client:  # type: ignore[arg-type]
        return await client.ask(QUESTION)


async def test_an_idle_server_gets_the_full_fan_out(twin: TwinServer) -> None:
    answer = await _ask(twin)
    assert answer.mode == "sot" and answer.fan_out is not None
    assert answer.fan_out["mode"] == "sot" and answer.fan_out["width"] == min(SLOTS, constants.DEFAULT_MAX_POINTS)
    assert answer.fan_out["load"] == {
        "source": "llama.cpp-slots",
        "running": 0,
        "waiting": 0,
        "capacity": SLOTS,
        "kv_usage": None,
    }


async def test_a_partly_busy_server_narrows_it_to_its_free_slots(twin: TwinServer) -> None:
    _busy(twin, SLOTS - 3)
    answer = await _ask(twin)
    assert answer.mode == "sot" and answer.fan_out is not None
    assert answer.fan_out["width"] == 3 and "3 free" in answer.fan_out["reason"]
    assert max(_overlap(answer)) <= 3


async def test_a_full_server_gets_a_sequential_answer_in_mode_auto(twin: TwinServer) -> None:
    _busy(twin, SLOTS - 1)
    answer = await _ask(twin)
    assert answer.mode == "sequential" and answer.reason.startswith("load: server busy")
    assert answer.fan_out is not None and answer.fan_out["mode"] == "sequential"
    assert [call.purpose for call in answer.calls] == ["sequential"]  # not even an outline was asked for
    assert answer.extra_tokens is not None and not answer.extra_tokens.estimated


async def test_an_explicit_sot_is_only_narrowed_and_awareness_can_be_turned_off(twin: TwinServer) -> None:
    _busy(twin, SLOTS - 1)
    narrowed = await _ask(twin, mode="sot")
    assert narrowed.mode == "sot" and narrowed.fan_out is not None and narrowed.fan_out["width"] == 1
    assert max(_overlap(narrowed)) == 1
    unaware = await _ask(twin, load_aware=False)
    assert unaware.mode == "sot" and unaware.fan_out is None


async def test_a_server_publishing_no_load_still_answers() -> None:
    with FakeServer(sot_script()) as server:
        async with sot.Client(base_url=server.url, model="m", mode="sot") as client:
            answer = await client.ask(QUESTION)
    assert answer.mode == "sot" and answer.fan_out is not None
    assert answer.fan_out["load"] is None and "no load reading" in answer.fan_out["reason"]
    assert answer.extra_tokens is not None and answer.extra_tokens.estimated


async def test_the_proxy_says_its_decision_in_headers_usage_and_metrics(twin: TwinServer) -> None:
    settings = ProxySettings(upstream=(twin.base_url,), model="m", options={"router": "rules"})
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
    with BackgroundProxy(settings) as proxy:
        reply = httpx.post(proxy.url + "/chat/completions", json=body, timeout=60)
        metrics = httpx.get(proxy.url.removesuffix("/v1") + "/metrics", timeout=10).text
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-sot-fan-out"] == f"sot; width={min(SLOTS, constants.DEFAULT_MAX_POINTS)}"
    usage = reply.json()["usage"]
    assert usage["sot_extra_prompt_tokens"] > 0 and usage["sot_extra_completion_tokens"] > 0
    assert 'sot_proxy_fan_out_total{mode="sot"} 1' in metrics


def test_the_cli_turns_it_off_and_json_shows_it(twin: TwinServer, tmp_path: Path) -> None:
    base = [SOT, "ask", "--json", "--base-url", twin.base_url, "--model", "m", "--router", "rules", QUESTION]
    aware = json.loads(subprocess.run(base, capture_output=True, text=True, timeout=120, check=True).stdout)
    unaware = json.loads(
        subprocess.run([*base, "--no-load-aware"], capture_output=True, text=True, timeout=120, check=True).stdout
    )
    assert aware["fan_out"]["mode"] == "sot" and unaware["fan_out"] is None
    assert aware["extra_tokens"]["estimated"] is True


def _overlap(answer: sot.Answer) -> list[int]:
    """How many expansions were running at each one's start."""
    spans = [(c.start_s, c.end_s) for c in answer.calls if c.purpose == "expand"]
    return [sum(s <= start < e for s, e in spans) for start, _ in spans]
