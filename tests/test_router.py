"""The router: both classes, other languages, odd inputs, labelled sets, the LLM router, auto mode."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import sot
from sot.backends.openai_compat import OpenAICompatBackend
from sot.fake_server import Reply, sot_script
from sot.router import LLMRouter
from sot.router.evaluate import evaluate, load_labelled
from sot.templates import Prompts

ROOT = Path(__file__).resolve().parents[1]
VICUNA = ROOT.parent / "shared" / "data" / "vicuna80.jsonl"
OWN_SETS = sorted((ROOT / "eval" / "prompts").glob("router_*.jsonl"))

SEQUENTIAL = [
    "Solve for x: 4x - 7 = 21.",
    "What is 15% of 80?",
    "Write a Python function that returns the n-th prime number.",
    "Write a short story about a lost umbrella.",
    "Compose a haiku about winter.",
    "Pretend you are a Viking and describe your voyage.",
    "How many tennis balls fit in a swimming pool? Explain your reasoning step by step.",
    "Draft a complaint letter to my internet provider.",
    "Translate 'good morning' into Japanese.",
    "```python\nprint(sum(range(10)))\n```\nWhat does this print?",
]
SOT = [
    "What are the benefits of meditation?",
    "How can I improve my sleep quality?",
    "What are the main differences between cats and dogs as pets?",
    "What if the Industrial Revolution had started in China?",
    "Give me some tips for learning to cook.",
    "What factors affect house prices in a city?",
]


@pytest.mark.parametrize("prompt", SEQUENTIAL)
def test_prompts_needing_sequential_thought_go_sequential(prompt: str) -> None:
    decision = sot.route(prompt)
    assert decision.mode == "sequential", decision.reason
    assert 0.5 <= decision.confidence <= 1 and decision.reason


@pytest.mark.parametrize("prompt", SOT)
def test_list_prompts_go_to_sot(prompt: str) -> None:
    decision = sot.route(prompt)
    assert decision.mode == "sot", decision.reason


@pytest.mark.parametrize(
    ("prompt", "mode"),
    [
        ("Écris un poème sur la mer.", "sequential"),
        ("Escribe una carta de presentación.", "sequential"),
        ("Berechne 17 mal 23.", "sequential"),
        ("计算 3 + 5 × 2", "sequential"),
        ("Quels sont les avantages du télétravail ?", "sot"),
        ("¿Cuáles son las ventajas de aprender idiomas?", "sot"),
        ("Welche Vorteile hat Radfahren?", "sot"),
    ],
)
def test_other_languages(prompt: str, mode: str) -> None:
    assert sot.route(prompt).mode == mode


@pytest.mark.parametrize("prompt", ["", "   ", "\n\n", "?", "🙂🙂🙂"])
def test_empty_and_odd_inputs_go_sequential(prompt: str) -> None:
    assert sot.route(prompt).mode == "sequential"


def test_very_long_input_is_routed() -> None:
    prompt = "What are the benefits of exercise? " + "word " * 200_000
    assert sot.route(prompt).mode in ("sot", "sequential")


def test_code_blocks_go_sequential() -> None:
    assert sot.route("What are some ways to improve this?\n```js\nfor (;;) {}\n```").mode == "sequential"


def _score(path: Path) -> sot.router.evaluate.RouterReport:
    async def decide(prompt: str) -> sot.Route:
        return sot.route(prompt)

    return anyio.run(evaluate, load_labelled(path), decide)


@pytest.mark.skipif(not VICUNA.is_file(), reason="../shared/data is not beside this checkout")
def test_accuracy_on_vicuna80() -> None:
    report = _score(VICUNA)
    assert report.accuracy >= 0.90
    assert report.sequential_sent_to_sot() <= 0.05


@pytest.mark.parametrize("path", OWN_SETS, ids=[p.stem for p in OWN_SETS])
def test_accuracy_on_the_projects_own_labelled_sets(path: Path) -> None:
    report = _score(path)
    assert report.total >= 40
    assert report.accuracy >= 0.90
    assert report.sequential_sent_to_sot() <= 0.05


def test_cli_route_and_eval(tmp_path: Path) -> None:
    labelled = tmp_path / "set.jsonl"
    labelled.write_text(
        '{"prompt": "Solve 2x = 4", "route": "sequential"}\n'
        '{"question": "What are tips for sleep?", "sot_suitable": true}\n'
    )
    one = subprocess.run([sys.executable, "-m", "sot", "route", "Write a poem"], capture_output=True, text=True)
    assert one.returncode == 0 and one.stdout.startswith("sequential")
    report = subprocess.run(
        [sys.executable, "-m", "sot", "route", "--eval", str(labelled)], capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    assert "accuracy: 1.000" in report.stdout and "confusion" in report.stdout and "precision" in report.stdout


@pytest.mark.anyio
@pytest.mark.parametrize(("reply", "mode"), [("Yes.", "sot"), ("no", "sequential")])
async def test_llm_router_follows_the_model(fake, reply: str, mode: str) -> None:
    server = fake(lambda request: Reply(reply))
    backend = OpenAICompatBackend(server.url, "m")
    try:
        decision = await LLMRouter(backend, Prompts()).route("What are tips for sleep?")
    finally:
        await backend.aclose()
    assert decision.mode == mode and "LLM router" in decision.reason
    assert "What are tips for sleep?" in server.requests[0].prompt


@pytest.mark.anyio
async def test_llm_router_falls_back_to_rules_when_unclear_or_failing(fake) -> None:
    replies = iter([Reply("perhaps"), Reply(status=400)])
    server = fake(lambda request: next(replies))
    backend = OpenAICompatBackend(server.url, "m")
    try:
        unclear = await LLMRouter(backend, Prompts()).route("Solve 2x + 1 = 5")
        failing = await LLMRouter(backend, Prompts()).route("What are the benefits of tea?")
    finally:
        await backend.aclose()
    assert unclear.mode == "sequential" and "unclear" in unclear.reason
    assert failing.mode == "sot" and "failed" in failing.reason


@pytest.mark.anyio
async def test_auto_mode_routes_and_records_the_route(fake) -> None:
    server = fake(sot_script())
    async with sot.Client(base_url=server.url, model="m") as client:
        math = await client.ask("Solve for x: 3x + 4 = 19.")
        tips = await client.ask("What are the benefits of learning to swim?")
    assert math.mode == "sequential" and math.route and math.route["mode"] == "sequential"
    assert "router" in math.reason and math.timings.route_s is not None
    assert tips.mode == "sot" and tips.route and tips.route["mode"] == "sot"
    kinds = [r.kind for r in server.requests]
    assert kinds[0] == "sequential" and kinds[1] == "skeleton"
