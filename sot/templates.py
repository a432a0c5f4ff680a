"""Prompt templates: loaded from the package (or a user's directory) into a sandbox.

User and model text enter templates only as variables, never as template source, so a question
such as ``{{ 7*7 }}`` reaches the model verbatim. Undefined variables are errors, not blanks.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

import jinja2

from ._shape import SkeletonShape
from ._template_limits import LimitedSandbox
from .backends.base import Message as Message  # defined with the backends, which send it
from .errors import ConfigurationError, TemplateError

# The full answer: a plan of sections with what each covers and its length, each section written in full.
SKELETON = "skeleton.j2"
EXPAND = "expand.j2"
# Brief: the SoT paper's short points (titles of a few words, one to three sentences each).
SKELETON_BRIEF = "skeleton_brief.j2"
EXPAND_BRIEF = "expand_brief.j2"
# The start of the expansion written as the assistant: small models then go on with the point itself.
EXPAND_LEAD = "expand_lead.j2"
# For a small model: its own point only (with the whole outline in view, a 135M model recites it).
EXPAND_SMALL = "expand_small.j2"
# Profiles' own expansion prompts: a --prompts directory with only an expand.j2 overrides them too.
PROFILE_EXPANSIONS = (EXPAND_SMALL, EXPAND_BRIEF)
SEQUENTIAL = "sequential.j2"
SKELETON_GRAMMAR = "skeleton.gbnf"  # none is shipped (sot/_shape.py makes it); a --prompts DIR may hold one

# Untrusted text (a skeleton point) keeps to its own line of the prompt: no line break of any kind,
# no square brackets (delimiters of a --prompts template may be), and no chat-template marker
# ("<|im_end|>") that a server such as llama.cpp would read as the end of the turn.
_DELIMITERS = str.maketrans(dict.fromkeys("\n\r\v\f\x85\u2028\u2029", " ") | {"[": "(", "]": ")"})


def neutral(text: str) -> str:
    """Keep untrusted text on one line, unable to forge a delimiter or a chat-template marker."""
    return str(text).translate(_DELIMITERS).replace("<|", "< |").replace("|>", "| >")


def _package_dir() -> Path:
    # The package's own folder, not importlib.resources: that imports zipfile (milliseconds at start-up)
    # for zipped installs, whose templates a file-system loader could not read anyway.
    from . import prompts

    return Path(prompts.__file__).parent


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _expansion_variables(
    question: str, points: list[str], index: int, details: list[str], so_far: bool
) -> dict[str, object]:
    """What an expansion template is rendered with, for point `index` (0-based)."""
    return {
        "question": question,
        "points": points,
        "details": details,
        "index": index + 1,
        "point": points[index],
        "detail": details[index],
        "outline_so_far": so_far,
    }


def shared_prefix_fraction(prompts: list[str]) -> float | None:
    """Share of expansion prompt tokens that sit in the prefix common to all of them.

    Tokens are approximated by words and punctuation (no tokenizer is needed for a ratio).
    """
    if len(prompts) < 2:
        return None
    tokenized = [_TOKEN.findall(p) for p in prompts]
    common = 0
    for column in zip(*tokenized, strict=False):
        if any(tok != column[0] for tok in column):
            break
        common += 1
    mean = sum(len(t) for t in tokenized) / len(tokenized)
    return round(common / mean, 4) if mean else None


class Prompts:
    """Renders the project's prompts; a user directory overrides templates by file name."""

    def __init__(self, user_dir: str | Path | None = None) -> None:
        searchpath = [str(_package_dir())]
        if user_dir is not None:
            path = Path(user_dir)
            if not path.is_dir():
                raise ConfigurationError(
                    f"prompt directory not found: {path} ('prompts_dir')", options=("prompts_dir",)
                )
            searchpath.insert(0, str(path))
        self._env = LimitedSandbox(
            loader=jinja2.FileSystemLoader(searchpath),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        self._env.filters["neutral"] = neutral
        self._searchpath = searchpath
        self._user_dir = Path(user_dir) if user_dir is not None else None
        self._raw: dict[str, str] = {}
        self._instructions: dict[str, list[str]] = {}

    def render(self, name: str, **variables: object) -> str:
        try:
            return self._env.get_template(name).render(**variables).strip()
        except jinja2.TemplateNotFound as exc:
            raise ConfigurationError(f"prompt template not found: {name}") from exc
        except jinja2.TemplateError as exc:
            raise TemplateError(f"prompt template {name} failed: {exc}") from exc

    def raw(self, name: str) -> str:
        """A prompt file's text (read once)."""
        if name not in self._raw:
            found = [Path(d) / name for d in self._searchpath if (Path(d) / name).is_file()]
            if not found:
                raise ConfigurationError(f"prompt file not found: {name}")
            self._raw[name] = found[0].read_text(encoding="utf-8")
        return self._raw[name]

    def user_file(self, name: str) -> str | None:
        """A file of the user's prompt directory, if it has one by that name."""
        if self._user_dir is None or not (self._user_dir / name).is_file():
            return None
        return self.raw(name)

    def skeleton_grammar(self, shape: SkeletonShape) -> str:
        """The skeleton's GBNF grammar: the user's skeleton.gbnf, else the one made from `shape`."""
        return self.user_file(SKELETON_GRAMMAR) or shape.gbnf()

    def skeleton(
        self, question: str, shape: SkeletonShape | None = None, template: str = SKELETON, *, pipelined: bool = True
    ) -> list[Message]:
        """`pipelined`: each point's writer will see the outline only up to its own line, which a plan
        prompt may tell the planner (the variable ``pipelined``)."""
        wording = (shape or SkeletonShape()).wording()
        return [Message("user", self.render(template, question=question, pipelined=pipelined, **wording))]

    def sequential(self, question: str) -> list[Message]:
        return [Message("user", self.render(SEQUENTIAL, question=question))]

    def expansion_instructions(self, template: str = EXPAND) -> list[str]:
        """The expansion prompt's own sentences (no question or point in them): what an echo repeats."""
        name = self._template(template)
        if name not in self._instructions:
            blank = "\x00"
            text = "\n".join(  # pipelined or not: an echo may repeat either wording
                self.render(name, **_expansion_variables(blank, [blank], 0, [""], so_far)) for so_far in (False, True)
            )
            sentences = list(dict.fromkeys(re.split(r"(?<=[.!?:])\s+|\n", text)))
            self._instructions[name] = [s for s in sentences if s and blank not in s and len(s.split()) >= 4]
        return self._instructions[name]

    def _template(self, name: str) -> str:
        """A --prompts directory's expand.j2 is used for every expansion, unless it has the profile's own
        template too (decided once, not with a file check per point)."""
        if name == EXPAND or name not in self._fallback:
            return name
        return self._fallback[name]

    @cached_property
    def _fallback(self) -> dict[str, str]:
        if self.user_file(EXPAND) is None:
            return {}
        return {name: EXPAND for name in PROFILE_EXPANSIONS if self.user_file(name) is None}

    def expansion(
        self,
        question: str,
        points: list[str],
        index: int,
        *,
        template: str = EXPAND,
        lead: bool = False,
        details: list[str] | None = None,
        so_far: bool = False,
    ) -> list[Message]:
        """Expansion prompt for point `index` (0-based); every point's prompt shares one prefix.

        `template`: the profile's expansion prompt. `details`: what the outline said of each point beyond
        its title. `lead`: end with the point's first words as the assistant's ("2. Title:"), as the SoT
        paper does for open models; only for servers that accept a conversation ending on the assistant.
        `so_far`: `points` is the outline as far as the point saw it (pipelined: up to its own line, and
        the next one's heading where the style looks ahead): more may follow, unseen.
        """
        variables = _expansion_variables(question, points, index, details or [""] * len(points), so_far)
        messages = [Message("user", self.render(self._template(template), **variables))]
        if lead:
            messages.append(Message("assistant", self.render(EXPAND_LEAD, **variables)))
        return messages
