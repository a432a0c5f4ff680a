"""Which of sot's prompts a request is: an outline (a plan), one point's expansion, a routing question,
or anything else (answered as a whole, sequentially).

Nothing here copies a template's wording. Each of sot's packaged templates is rendered twice with
different variables: what the two renderings share at their start is that template's signature, and
where a variable lands on its line, between the fixed text around it, is where the twin reads it back.
A reworded template is recognised the day it changes; a prompt that starts with no signature is
answered as a plain question, which is what sot sends for a sequential answer (the question alone).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sot import templates
from sot.templates import Prompts

from .tokens import message_text

Kind = Literal["outline", "outline_brief", "expand", "expand_brief", "route", "plain"]
_MARK = "\x01"  # sentinels never met in a real prompt; a mark on each side of a variable's name
_MIN_SIGNATURE = 24  # shorter shared starts are too common to tell templates apart

# What each kind's template is rendered with; the second set differs in every variable.
_FIRST: dict[str, Any] = {
    "question": "How do plants grow?",
    "min_points": 3,
    "max_points": 10,
    "point_words": 6,
    "points": ["Light", "Water"],
    "details": ["why light matters", "how much water"],
    "index": 2,
    "point": "Water",
    "detail": "how much water",
    "outline_so_far": False,
    "pipelined": True,
}
_SECOND: dict[str, Any] = {
    "question": "Why is the sea salty?",
    "min_points": 4,
    "max_points": 7,
    "point_words": 5,
    "points": ["Rivers", "Vents", "Evaporation"],
    "details": ["minerals carried", "hydrothermal", "salt stays behind"],
    "index": 3,
    "point": "Evaporation",
    "detail": "salt stays behind",
    "outline_so_far": True,
    "pipelined": False,
}
_TEMPLATES: tuple[tuple[Kind, str], ...] = (
    ("outline", templates.SKELETON),
    ("outline_brief", templates.SKELETON_BRIEF),
    ("expand", templates.EXPAND),
    ("expand_brief", templates.EXPAND_BRIEF),
    ("expand_brief", templates.EXPAND_SMALL),
    ("route", "route.j2"),
)


@dataclass(frozen=True)
class Recognised:
    """A request as the twin understands it."""

    kind: Kind
    question: str
    index: int = 0  # the point to write (1-based), for an expansion whose prompt names it
    min_points: int = 0  # what an outline prompt asks for
    max_points: int = 0
    title: str = ""  # the point's title, for an expansion


@dataclass(frozen=True)
class _Shape:
    kind: Kind
    signature: str
    fields: dict[str, tuple[re.Pattern[str], ...]]


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _field_patterns(prompts: Prompts, name: str, variable: str) -> tuple[re.Pattern[str], ...]:
    """Where `variable` sits in the template `name`: the fixed text on either side of it, on its line.

    Every other variable is a sentinel too, so neither side holds a value that changes. With the
    outline's range the template may say "3 to 10" or just "5": both are tried."""
    found: list[re.Pattern[str]] = []
    for equal in (False, True):
        values: dict[str, Any] = {k: f"{_MARK}{k}{_MARK}" for k in _FIRST}
        values["points"], values["details"] = [values["points"]], [values["details"]]
        if equal:
            values["min_points"] = values["max_points"]
        try:
            text = prompts.render(name, **values)
        except Exception:  # a template that needs a real value there (a loop over a number, a test)
            continue
        mark = f"{_MARK}{variable}{_MARK}"
        line = next((ln for ln in text.splitlines() if mark in ln), None)
        if line is None:
            continue
        before, after = line.split(mark, 1)
        before = before.rsplit(_MARK, 1)[-1]
        after = after.split(_MARK, 1)[0]
        numeric = variable in ("index", "min_points", "max_points")
        if numeric:  # what follows a number may depend on a variable left empty ("only (detail)" or "only,")
            after = re.split(r"[^\w ]", after, maxsplit=1)[0].rstrip()
        value = r"(\d+)" if numeric else r"(.+?)"
        anchor = "^" if before == line.split(mark, 1)[0] else ""
        tail = "$" if after == line.split(mark, 1)[1] else ""
        found.append(re.compile(anchor + re.escape(before) + value + re.escape(after) + tail, re.MULTILINE))
    return tuple(dict.fromkeys(found))


@functools.cache
def _shapes() -> tuple[_Shape, ...]:
    prompts = Prompts()
    shapes: list[_Shape] = []
    for kind, name in _TEMPLATES:
        try:
            first, second = prompts.render(name, **_FIRST), prompts.render(name, **_SECOND)
        except Exception:  # a template this sot no longer ships
            continue
        signature = _common_prefix(first, second)
        if len(signature) < _MIN_SIGNATURE:
            continue
        names = ("question", "index", "point", "min_points", "max_points")
        fields = {v: _field_patterns(prompts, name, v) for v in names}
        shapes.append(_Shape(kind, signature, {k: p for k, p in fields.items() if p}))
    # Longest signatures first: one template's start may begin another's.
    return tuple(sorted(shapes, key=lambda s: -len(s.signature)))


def warm_up() -> None:
    _shapes()


def _read(shape: _Shape, text: str, variable: str) -> str:
    for pattern in shape.fields.get(variable, ()):
        match = pattern.search(text)
        if match:
            return match.group(1).strip()
    return ""


def _number(text: str) -> int:
    return int(text) if text.isdigit() else 0


def recognise(messages: Sequence[Mapping[str, Any]]) -> Recognised:
    """What the conversation's last user turn asks for (earlier turns are context only)."""
    users = [m for m in messages if m.get("role") == "user"]
    text = message_text(users[-1].get("content")).strip() if users else ""
    for shape in _shapes():
        if text.startswith(shape.signature):
            return Recognised(
                kind=shape.kind,
                question=_read(shape, text, "question") or text,
                index=_number(_read(shape, text, "index")),
                min_points=_number(_read(shape, text, "min_points")),
                max_points=_number(_read(shape, text, "max_points")),
                title=_read(shape, text, "point"),
            )
    return Recognised(kind="plain", question=text)
