"""What the twin writes: text of realistic length and shape, the same every time for the same question.

Every question gets a plan, seeded by a hash of its text: a whole answer of 600-900 tokens (what an
8B instruct model writes for vicuna80's list-like questions) in 4-6 sections of about 120-200 tokens
each. An outline line reads ``N. Heading: what it covers, in one sentence (about W words)``, the form
sot's skeleton prompt asks for, at 23-33 tokens; each expansion writes its section's planned length;
a plain (sequential) answer writes the same sections in a row under their headings, after a one-line
opening, so it costs what the sections cost together. Brief prompts get titles and one to three
sentences per point. A routing prompt gets "yes", or "no" where the request names a story, code, a
calculation or the like.

Section texts are sentences of common words drawn from a seeded generator: no two spans repeat, so
sot's loop detector never fires, and they say nothing: this twin measures time, not quality.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from .recognise import Recognised
from .tokens import count

TOTAL_TOKENS = (600, 900)  # a whole answer
SECTIONS = (4, 6)
SECTION_TOKENS = 160  # the mean a section is planned around (the split gives about 120-200)
BRIEF_POINT_TOKENS = (30, 60)
TOKENS_PER_WORD = 1.25  # of the sections' prose in this twin's tokens (tokens.py), for a plan's "(about W words)"

# Section headings, each with what it covers in one sentence, as the outline prompt asks ("{topic}": a
# few words of the question). Lines come out at 24-31 tokens; outlines that capable models wrote for
# sot's prompt (eval/quality/full*/answers_*.jsonl) have a median of 18 words, 29 such tokens, a line.
_ASPECTS = (
    ("Core principles", "the few ideas behind {topic} that every later step builds on"),
    ("Practical first steps", "what to do in the first week, in order, with a concrete example"),
    ("Common mistakes to avoid", "the usual pitfalls people meet early on and how to dodge them"),
    ("Tools and resources", "apps, books and services that make {topic} easier, and what each is for"),
    ("Building lasting habits", "how to make {topic} part of a routine that survives busy weeks"),
    ("Measuring progress", "simple ways to check what works and when to change course"),
    ("Real-world examples", "two short cases that show the advice working in ordinary situations"),
    ("Costs and trade-offs", "what it takes in time, money and effort, and what you give up"),
    ("Risks and safeguards", "what can go wrong along the way and how to stay safe"),
    ("Getting help from others", "when to ask for support, whom to ask and how to ask well"),
    ("Adapting to your situation", "how to fit the advice to your own constraints, schedule and goals"),
    ("Long-term outlook", "what changes over months and years, and how to keep going"),
)
_VOCABULARY = (
    "plan time energy focus simple small daily clear goal step result habit method choice detail "
    "context reason example effect change support practice review balance record pattern routine "
    "value risk benefit cost effort outcome measure progress limit priority schedule signal feedback "
    "source team friend budget tool list week month morning evening start finish pause check adjust "
    "compare choose avoid keep build learn share write track reduce increase protect improve explain "
    "often usually rarely early later together alone quickly steadily carefully honestly gently "
    "useful practical common important careful realistic flexible consistent specific visible "
    "organization responsibility communication environment relationship understanding experience "
    "information development performance opportunity perspective commitment preparation alternatively"
)
_WORDS = _VOCABULARY.split()
_QUESTION_WORDS = (
    "a an the how what why when which who whom can could should would will i my me you your we our do does did "
    "is are was were be been being had has have if of to in on for and or with about some most there their "
    "that this these those into between any much many"
)
_STOP = set(_QUESTION_WORDS.split())
_NOT_LISTS = re.compile(
    r"\b(story|poem|letter|email|essay|speech|song|code|program|function|script|calculate|solve|"
    r"how many|estimate|prove|equation|pretend|imagine you are|as a [a-z]+,)\b",
    re.IGNORECASE,
)


def _seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _topic(question: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", question) if w.lower() not in _STOP]
    return " ".join(words[:3]).lower() or "the question"


@dataclass(frozen=True)
class Plan:
    """One question's answer, as sections of planned length."""

    question: str
    headings: tuple[str, ...]
    covers: tuple[str, ...]
    section_tokens: tuple[int, ...]

    @property
    def total_tokens(self) -> int:
        return sum(self.section_tokens)

    def outline_line(self, i: int) -> str:
        words = max(10, round(self.section_tokens[i] / TOKENS_PER_WORD / 10) * 10)
        return f"{i + 1}. {self.headings[i]}: {self.covers[i]} (about {words} words)"


def plan(question: str, min_points: int = 0, max_points: int = 0) -> Plan:
    """The question's plan; an outline asked for fewer or more sections spreads the same total over them."""
    rng = random.Random(_seed("plan", question))
    total = rng.randint(*TOTAL_TOKENS)
    n = min(max(round(total / SECTION_TOKENS), SECTIONS[0]), SECTIONS[1])
    if max_points:
        n = min(n, max_points)
    n = max(n, min_points, 1)
    weights = [1 + rng.uniform(-0.2, 0.2) for _ in range(n)]
    lengths = tuple(max(20, round(total * w / sum(weights))) for w in weights)
    aspects = _ASPECTS if n <= len(_ASPECTS) else tuple((f"Part {k + 1}", "one more aspect") for k in range(n))
    picked = rng.sample(aspects, k=n)
    topic = _topic(question)
    return Plan(question, tuple(h for h, _ in picked), tuple(c.format(topic=topic) for _, c in picked), lengths)


def prose(tokens: int, *seed: object) -> str:
    """Sentences of `tokens` tokens (give or take one), the last one shortened to fit."""
    rng = random.Random(_seed("prose", *seed))
    sentences: list[str] = []
    left = tokens
    while left > 1:
        words = rng.choices(_WORDS, k=rng.randint(8, 16))
        while len(words) > 1 and count(" ".join(words) + ".") > left:
            words.pop()
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        left -= count(sentence)
    return " ".join(sentences)


class Writer:
    """Answers recognised requests; remembers the plans its outlines gave, so expansions match them."""

    def __init__(self) -> None:
        self._plans: dict[str, Plan] = {}

    def plan_for(self, question: str) -> Plan:
        return self._plans.get(question) or plan(question)

    def write(self, request: Recognised) -> str:
        q = request.question
        if request.kind in ("outline", "outline_brief"):
            made = plan(q, request.min_points, request.max_points)
            self._plans[q] = made
            if request.kind == "outline_brief":
                return "\n".join(f"{i + 1}. {h}" for i, h in enumerate(made.headings))
            return "\n".join(made.outline_line(i) for i in range(len(made.headings)))
        if request.kind == "expand":
            made = self.plan_for(q)
            i = request.index - 1 if 0 < request.index <= len(made.headings) else None
            length = made.section_tokens[i] if i is not None else SECTION_TOKENS
            return prose(length, q, request.index, request.title)
        if request.kind == "expand_brief":
            rng = random.Random(_seed("brief", q, request.index, request.title))
            return prose(rng.randint(*BRIEF_POINT_TOKENS), q, request.index, request.title)
        if request.kind == "route":
            return "no" if _NOT_LISTS.search(q) else "yes"
        return self._whole(q)

    def _whole(self, question: str) -> str:
        made = self.plan_for(question)
        parts = [f"Here is how to approach {_topic(question)}, point by point."]
        for i, heading in enumerate(made.headings):
            parts.append(f"**{heading}**\n\n{prose(made.section_tokens[i], question, i + 1, '')}")
        return "\n\n".join(parts)
