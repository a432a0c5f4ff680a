"""The routers: the learned default and the rules on both classes, other languages, odd inputs, the
hard cases, labelled sets, calibration, the threshold, lazy loading, the LLM router, auto mode."""
# mypy: allow-untyped-defs, allow-incomplete-defs

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from _fakes import Reply, sot_script
from tests_support import SOT as SOT_COMMAND

import sot
from sot.backends.openai_compat import OpenAICompatBackend
from sot.router import LearnedRouter, LLMRouter, route_rules
from sot.router.evaluate import evaluate, load_labelled
from sot.templates import Prompts

ROOT = Path(__file__).resolve().parents[1]
VICUNA = ROOT.parent / "shared" / "data" / "vicuna80.jsonl"
OWN_SETS = sorted((ROOT / "eval" / "prompts").glob("router_*.jsonl"))
CORPUS = ROOT / "eval" / "router" / "corpus.jsonl"
ROUTERS = {"learned": sot.route, "rules": route_rules}

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


@pytest.mark.parametrize("router", ROUTERS)
@pytest.mark.parametrize("prompt", SEQUENTIAL)
def test_prompts_needing_sequential_thought_go_sequential(router: str, prompt: str) -> None:
    decision = ROUTERS[router](prompt)
    assert decision.mode == "sequential", decision.reason
    assert 0.5 <= decision.confidence <= 1 and decision.reason


@pytest.mark.parametrize("router", ROUTERS)
@pytest.mark.parametrize("prompt", SOT)
def test_list_prompts_go_to_sot(router: str, prompt: str) -> None:
    decision = ROUTERS[router](prompt)
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
@pytest.mark.parametrize("router", ROUTERS)
def test_other_languages(router: str, prompt: str, mode: str) -> None:
    assert ROUTERS[router](prompt).mode == mode


@pytest.mark.parametrize("prompt", ["", "   ", "\n\n", "?", "🙂🙂🙂"])
@pytest.mark.parametrize("router", ROUTERS)
def test_empty_and_odd_inputs_go_sequential(router: str, prompt: str) -> None:
    assert ROUTERS[router](prompt).mode == "sequential"


@pytest.mark.parametrize("router", ROUTERS)
def test_very_long_input_is_routed(router: str) -> None:
    prompt = "What are the benefits of exercise? " + "word " * 200_000
    assert ROUTERS[router](prompt).mode in ("sot", "sequential")


@pytest.mark.parametrize("router", ROUTERS)
def test_code_blocks_go_sequential(router: str) -> None:
    assert ROUTERS[router]("What are some ways to improve this?\n```js\nfor (;;) {}\n```").mode == "sequential"


def _score(path: Path, router: str = "learned") -> sot.router.evaluate.RouterReport:
    async def decide(prompt: str) -> sot.Route:
        return ROUTERS[router](prompt)

    return anyio.run(evaluate, load_labelled(path), decide)


@pytest.mark.skipif(not VICUNA.is_file(), reason="../shared/data is not beside this checkout")
@pytest.mark.parametrize(("router", "false_sot"), [("learned", 0.10), ("rules", 0.05)])
def test_accuracy_on_vicuna80(router: str, false_sot: float) -> None:
    report = _score(VICUNA, router)
    assert report.accuracy >= 0.90
    assert report.sequential_sent_to_sot() <= false_sot


@pytest.mark.parametrize("path", OWN_SETS, ids=[p.stem for p in OWN_SETS])
@pytest.mark.parametrize("router", ROUTERS)
def test_accuracy_on_the_projects_own_labelled_sets(router: str, path: Path) -> None:
    report = _score(path, router)
    assert report.total >= 40
    assert report.accuracy >= 0.90
    assert report.sequential_sent_to_sot() <= 0.05


@pytest.mark.parametrize(
    "prompt",
    [
        "Write a persuasive essay arguing for or against a ban on private cars in the old town. Use evidence.",
        "Six friends sit around a round table. Ana is opposite Bo, Cy is left of Ana, and Di is not next to Bo. "
        "Who sits between Ed and Fa?",
        "Which conclusion follows from the premises? All pilots are licensed. Some licensed people are teachers.",
        "Define functional and imperative programming and show code examples of each in Haskell and C.",
        "Write a 300-word blog post about adopting a rescue cat. Then tell me: who is the audience, what tone did "
        "you use, and what title would you give it?",
    ],
)
def test_the_hard_cases_go_sequential(prompt: str) -> None:
    decision = sot.route(prompt)
    assert decision.mode == "sequential", decision.reason


def test_the_corpus_is_large_varied_and_labelled_per_task() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 1500 and len({r["task"] for r in rows}) >= 30
    assert {r["label"] for r in rows} == {"sot", "sequential"} and len({r["lang"] for r in rows}) >= 5
    by_task: dict[str, set[str]] = {}
    for row in rows:
        by_task.setdefault(row["task"], set()).add(row["label"])
    assert all(len(labels) == 1 for labels in by_task.values())  # the label is the task type's
    test_templates = {r["template"] for r in rows if r["split"] == "test"}
    assert test_templates and not test_templates & {r["template"] for r in rows if r["split"] == "train"}


def test_confidence_is_the_probability_of_the_chosen_mode() -> None:
    sure = sot.route("What are the health benefits of regular swimming for older adults?")
    assert sure.mode == "sot" and 0.5 < sure.confidence <= 1
    p = float(sure.reason.split("P(SoT-suitable) ")[1].split()[0])
    assert abs(p - sure.confidence) <= 0.01
    essay = sot.route("Write a persuasive essay in favour of free public transport.")
    assert essay.mode == "sequential" and essay.confidence > 0.5


def test_the_threshold_moves_the_decision() -> None:
    prompt = "What are the health benefits of regular swimming for older adults?"
    assert sot.route(prompt, threshold=0.0).mode == "sot"
    assert sot.route(prompt, threshold=1.0).mode == "sequential" or sot.route(prompt).confidence >= 0.999
    assert sot.route("Solve 3x + 4 = 19", threshold=0.0).mode == "sot"  # everything goes to SoT at 0
    with pytest.raises(sot.ConfigurationError):
        LearnedRouter(threshold=1.5, background=False)


def test_importing_sot_does_not_load_the_model_or_numpy() -> None:
    code = (
        "import sys, sot, sot.router.learned as m; print('numpy' in sys.modules, 'tokenizers' in sys.modules, m._model)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "None"]


def test_the_model_loads_once_even_when_asked_from_many_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        models = list(pool.map(lambda _: sot.router.learned.model(), range(8)))
    assert all(m is models[0] for m in models)
    assert models[0].weights.shape[0] == 2 * models[0].embeddings.vectors.shape[1] + len(sot.router.rules.CUES) + len(
        sot.router._features.STRUCTURE
    )


def test_the_shipped_model_is_small_and_offline() -> None:
    model_file = ROOT / "sot" / "router" / "router_model.json"
    assert model_file.stat().st_size < 1_000_000
    code = (
        "import socket\n"
        "def no_net(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = no_net\n"
        "import sot\n"
        "print(sot.route('Give me some tips for learning to cook.').mode)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "sot"


def test_cli_route_and_eval(tmp_path: Path) -> None:
    labelled = tmp_path / "set.jsonl"
    labelled.write_text(
        '{"prompt": "Solve 2x = 4", "route": "sequential"}\n'
        '{"question": "What are tips for sleep?", "sot_suitable": true}\n'
    )
    one = subprocess.run([SOT_COMMAND, "route", "Write a poem"], capture_output=True, text=True)
    assert one.returncode == 0 and one.stdout.startswith("sequential") and "learned" in one.stdout
    rules = subprocess.run([SOT_COMMAND, "route", "--router", "rules", "Write a poem"], capture_output=True, text=True)
    assert rules.stdout.startswith("sequential") and "learned" not in rules.stdout
    everything = subprocess.run(
        [SOT_COMMAND, "route", "--threshold", "0", "--eval", str(labelled)],
        capture_output=True,
        text=True,
    )
    assert "false-SoT rate: 1.000   SoT recall: 1.000" in everything.stdout, everything.stderr
    report = subprocess.run([SOT_COMMAND, "route", "--eval", str(labelled)], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert "accuracy: 1.000" in report.stdout and "confusion" in report.stdout and "precision" in report.stdout
    assert "false-SoT rate: 0.000   SoT recall: 1.000" in report.stdout
    wrong = subprocess.run(
        [SOT_COMMAND, "route", "--router", "rules", "--threshold", "0.5", "x y z"],
        capture_output=True,
        text=True,
    )
    assert wrong.returncode != 0 and "--threshold" in wrong.stderr


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


@pytest.mark.anyio
async def test_llm_router_call_is_part_of_the_answer_and_holds_the_request_limit() -> None:
    """Its call is in Answer.calls and usage, and it waits for the shared request limit like any call."""
    from sot.backends.base import ChatChunk, ChatRequest
    from sot.backends.mock import MockBackend
    from sot.result import Usage

    in_flight = 0
    most = 0

    async def handler(request: ChatRequest) -> AsyncIterator[str | ChatChunk]:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await anyio.sleep(0)  # a checkpoint: lets a second, unlimited call start here
        in_flight -= 1
        if request.max_tokens == 3:  # the router's yes/no
            yield ChatChunk(text="no", usage=Usage(prompt_tokens=40, completion_tokens=1))
            return
        yield ChatChunk(text="An answer.", usage=Usage(prompt_tokens=10, completion_tokens=3))

    answers: list[sot.Answer] = []
    async with sot.Client(backend=MockBackend(handler), router="llm", request_limit=1) as client:

        async def one(q: str) -> None:
            answers.append(await client.ask(q))

        async with anyio.create_task_group() as tg:
            for q in ("What are tips for sleep?", "How do plants grow?"):
                tg.start_soon(one, q)
    assert most == 1
    for answer in answers:
        assert [c.purpose for c in answer.calls] == ["route", "sequential"]
        assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (50, 4)
