"""The generic path keeps a strong model's text as written, in every view: `sot ask` piped and --json,
the proxy (with the official openai SDK) and the Python API; one outline call per answer."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import anyio
import openai
from _fakes import FakeServer, Handler, Reply, SeenRequest
from tests_support import SOT

import sot
from sot.proxy import BackgroundProxy, ProxySettings

QUESTION = "How do I start learning Python for data work?"
OUTLINE = """Here's an outline for your answer:

1. **Brown v. Board of Education (1954)** – why precedent matters
2. What GDPR is: the rules on personal data
3. Then fund the account
   - with a transfer
   - or a card
4. So why isn't it working?
5. Move more

I hope this helps!
"""
TITLES = [
    "Brown v. Board of Education (1954)",
    "What GDPR is",
    "Then fund the account",
    "So why isn't it working?",
    "Move more",
]
EXPANSIONS = {
    1: 'The case overturned "separate but equal."\n\nIt set a precedent (see *Plessy v. Ferguson*, 1896) [1].',
    2: "GDPR is the EU's data law. Key rights:\n\n- access\n- erasure\n- portability",
    3: 'Load the data first:\n\n```python\nimport pandas as pd\n\ndf = pd.read_csv("data.csv")\nprint(df.head())\n```',
    4: "> Check the logs first.\n\n1. Restart it.\n2. Clear the cache, e.g. `rm -rf ~/.cache`.",
    5: "Walk 30 min/day, i.e. about 8,000 steps.",
}


def handler(request: SeenRequest) -> Reply:
    if request.kind == "skeleton":
        return Reply(OUTLINE)
    if request.kind == "expand":
        n = request.point or 0
        # A strong model sometimes echoes its point's number and title as a heading first.
        echo = f"**{n}. {TITLES[n - 1]}**\n\n" if n == 2 else ""
        return Reply(echo + EXPANSIONS[n])
    return Reply("A plain answer.")


def check_answer(points: list[str], expansions: list[str], text: str) -> None:
    assert points == TITLES
    assert expansions == [EXPANSIONS[n] for n in range(1, 6)]
    for title, body in zip(TITLES, expansions, strict=True):
        assert title in text and body in text


def test_the_python_api_keeps_every_title_and_expansion(fake: Callable[[Handler], FakeServer]) -> None:
    server = fake(handler)

    async def ask() -> sot.Answer:
        async with sot.Client(base_url=server.url, model="m", mode="sot", pipeline=False) as client:
            return await client.ask(QUESTION)

    answer = anyio.run(ask)
    check_answer(answer.points, answer.expansions, answer.text)
    assert len(server.of_kind("skeleton")) == 1
    expansions = server.of_kind("expand")
    assert len(expansions) == 5 and all(not r.body.get("stop") for r in expansions)
    # The outline's description of a point reaches that point's prompt.
    assert "why precedent matters" in next(r.prompt for r in expansions if r.point == 1)
    assert "- with a transfer" in next(r.prompt for r in expansions if r.point == 3)
    # Every expansion prompt shares one prefix (instructions, question, outline): only the point differs.
    assert answer.shared_prefix_fraction is not None and answer.shared_prefix_fraction > 0.8
    # Multi-line points read as markdown: the title in bold on its own line, the body as written below.
    assert f"**3. {TITLES[2]}**\n\n{EXPANSIONS[3]}\n\n**4. " in answer.text


def test_the_cli_piped_and_json_show_the_same_text(fake: Callable[[Handler], FakeServer]) -> None:
    server = fake(handler)
    base = [SOT, "ask", "--mode", "sot", "--base-url", server.url, "--model", "m", QUESTION]
    plain = subprocess.run(base, capture_output=True, text=True, timeout=60)
    as_json = subprocess.run([*base, "--json"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and as_json.returncode == 0, plain.stderr + as_json.stderr
    data = json.loads(as_json.stdout)
    check_answer(data["points"], data["expansions"], data["text"])
    assert plain.stdout.strip() == data["text"]
    assert len(server.of_kind("skeleton")) == 2  # one per answer


def test_the_proxy_streams_the_same_text(fake: Callable[[Handler], FakeServer]) -> None:
    server = fake(handler)
    settings = ProxySettings(upstream=(server.url,), options={"router": "rules"})
    with BackgroundProxy(settings) as proxy:
        client = openai.OpenAI(base_url=proxy.url, api_key="k", max_retries=0)
        stream = client.chat.completions.create(
            model="fake-model+sot", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        whole = client.chat.completions.create(model="fake-model+sot", messages=[{"role": "user", "content": QUESTION}])
    assert whole.choices[0].message.content == text
    for title, body in zip(TITLES, EXPANSIONS.values(), strict=True):
        assert title in text and body in text
    assert len(server.of_kind("skeleton")) == 2


def test_a_pipelined_section_sees_the_outline_up_to_its_own_line_and_the_next_heading(
    fake: Callable[[Handler], FakeServer],
) -> None:
    # It knows where its part ends; it sees no more than that, however the outline's stream was chunked,
    # so that prompt caches and replays can rely on the same prompt.
    server = fake(handler)

    async def ask() -> sot.Answer:
        async with sot.Client(base_url=server.url, model="m", mode="sot") as client:
            return await client.ask(QUESTION)

    anyio.run(ask)
    for request in server.of_kind("expand"):
        n = request.point or 0
        listed = [title for title in TITLES if f"\n{TITLES.index(title) + 1}. {title}" in request.prompt]
        assert listed == TITLES[: n + 1]
        assert "the rules on personal data" in request.prompt if n >= 2 else "personal data" not in request.prompt
    assert len(server.of_kind("expand")) == len(TITLES)


import pytest  # noqa: E402

from sot import strip_echo  # noqa: E402


@pytest.mark.parametrize(
    ("text", "index", "title", "kept"),
    [
        ("2. **Exercise**: Aim for 150 minutes.", 1, "Exercise", "Aim for 150 minutes."),
        ("**Exercise**\n\n- walk\n- swim", 0, "Exercise", "- walk\n- swim"),
        ("### 3. Sleep more\nAdults need 8 hours.", 2, "Sleep more", "Adults need 8 hours."),
        ("Node.js runs JavaScript on the server.", 0, "Node", "Node.js runs JavaScript on the server."),
        ("Python 3.12 adds a JIT.", 0, "Python 3", "Python 3.12 adds a JIT."),
        ("Direct answer: **Yes** — use Postgres.", 0, "Direct answer", "**Yes** — use Postgres."),
        ("Exercise regularly to keep fit.", 0, "Exercise regularly", "Exercise regularly to keep fit."),
        ("**Sleep** more than you do.", 1, "Sleep", "**Sleep** more than you do."),
        ("So why isn't it working? Because.", 0, "So why isn't it working?", "Because."),
    ],
)
def test_only_an_echoed_number_and_title_leave_an_expansion(text: str, index: int, title: str, kept: str) -> None:
    assert strip_echo(text, index, title) == kept
