"""Compose the router's labelled corpus from hand-written parts (deterministic: same seed, same file).

    python eval/router/make_corpus.py            # writes eval/router/corpus.jsonl

Each row: id, prompt, label (sot|sequential), task, lang, template, split (train|test). The label
is a property of the task type (rules in _parts_sot.py and _parts_seq.py). The split holds out
whole templates, the last one of every task type with at least four, so the test figures measure
phrasings the model never saw rather than new fillers in a seen sentence.
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _parts_seq import SEQ_FOREIGN, SEQ_TASKS
from _parts_sot import SOT_FOREIGN, SOT_TASKS, THINGS_PAIR

SEED = 11
OUT = Path(__file__).with_name("corpus.jsonl")
PER_TASK = 44
PER_FOREIGN = 14

# Shared by both classes so that neither greetings nor sign-offs carry the label.
PREAMBLES = [
    "",
    "",
    "",
    "",
    "Hi! ",
    "Hello, ",
    "Quick question. ",
    "I need some help. ",
    "Hey there, ",
    "Good morning. ",
    "Please help: ",
    "This is for work. ",
    "Asking for a friend: ",
    "I'm new to this, so bear with me. ",
    "Thanks in advance for reading this long message. ",
]
SIGNOFFS = [
    "",
    "",
    "",
    "",
    " Thanks!",
    " Thank you so much.",
    " Please be detailed.",
    " Keep it concise.",
    " Thanks in advance.",
    " I appreciate any help.",
    " Be specific please.",
    " :)",
    " Answer in English.",
    " Please use simple language.",
]
# Follow-ups that keep each class's nature: extra independent points, or constraints on one artefact.
SOT_FOLLOWUPS = [
    " Also, which of these matter most for beginners?",
    " Please include examples for each point.",
    " What are the common pitfalls too?",
    " Also mention anything people usually overlook.",
    " Organise the answer by short-term and long-term.",
    " And how do costs compare?",
]
SEQ_FOLLOWUPS = [
    " Make sure the final answer is clearly stated.",
    " Use at least 300 words.",
    " Include a title.",
    " Explain your reasoning.",
    " Please double-check the result.",
    " Keep the same tone throughout.",
]


def _fill(template: str, slots: dict[str, list[str]], rng: random.Random) -> str:
    text = template
    if "{a}" in text and "{b}" in text and "pair" in slots:
        a, b = rng.choice(THINGS_PAIR)
        text = text.replace("{a}", a).replace("{b}", b)
    for name in re.findall(r"\{(\w+)\}", text):
        if slots.get(name):
            text = text.replace("{" + name + "}", rng.choice(slots[name]), 1)
    return text


def _typos(text: str, rng: random.Random) -> str:
    """Real users' slips: dropped or swapped letters, no capitals, doubled spaces."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(max(1, len(chars) - 1))
        if not chars[i].isalpha():
            continue
        kind = rng.random()
        if kind < 0.4 and i + 1 < len(chars):
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        elif kind < 0.7:
            chars[i] = ""
        else:
            chars[i] = rng.choice(string.ascii_lowercase)
    out = "".join(chars)
    if rng.random() < 0.3:
        out = out.lower()
    return out


def _compose(kind: str, template: str, slots: dict[str, list[str]], rng: random.Random, english: bool) -> str:
    text = _fill(template, slots, rng)
    if english:
        followups = SOT_FOLLOWUPS if kind == "sot" else SEQ_FOLLOWUPS
        if rng.random() < 0.25:
            text += rng.choice(followups)
        text = rng.choice(PREAMBLES) + text + rng.choice(SIGNOFFS)
    if rng.random() < 0.2:
        text = _typos(text, rng)
    return text.strip()


def _rows_for(
    task: str, label: str, lang: str, spec: dict[str, list[str]], count: int, rng: random.Random
) -> list[dict[str, Any]]:
    templates = spec["templates"]
    held_out = len(templates) - 1 if len(templates) >= 4 else -1
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    for attempt in range(count * 20):
        t = attempt % len(templates)
        prompt = _compose(label, templates[t], spec, rng, english=lang == "en")
        if prompt in seen:
            continue
        seen.add(prompt)
        rows.append(
            {
                "prompt": prompt,
                "label": label,
                "task": task,
                "lang": lang,
                "template": f"{task}/{t}",
                "split": "test" if t == held_out else "train",
            }
        )
        if len(rows) >= count:
            break
    return rows


def build() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    rows: list[dict[str, Any]] = []
    for label, tasks in (("sot", SOT_TASKS), ("sequential", SEQ_TASKS)):
        for task, spec in tasks.items():
            rows += _rows_for(task, label, "en", spec, PER_TASK, rng)
    for label, foreign in (("sot", SOT_FOREIGN), ("sequential", SEQ_FOREIGN)):
        for lang, spec in foreign.items():
            task = f"{'advice_compare' if label == 'sot' else 'compose_compute'}_{lang}"
            rows += _rows_for(task, label, lang, spec, PER_FOREIGN, rng)
    for i, row in enumerate(rows):
        row["id"] = f"c{i:04d}"
    return rows


def main() -> None:
    rows = build()
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            ordered = {k: row[k] for k in ("id", "prompt", "label", "task", "lang", "template", "split")}
            f.write(json.dumps(ordered, ensure_ascii=False) + "\n")
    tasks = {r["task"] for r in rows}
    by_label = {lab: sum(r["label"] == lab for r in rows) for lab in ("sot", "sequential")}
    test = sum(r["split"] == "test" for r in rows)
    print(f"{len(rows)} prompts, {len(tasks)} task types, {by_label}, test {test}: {OUT}")


if __name__ == "__main__":
    main()
