"""Parse skeletons as real models write them, all at once or line by line while they stream.

A skeleton is untrusted model output: the parser caps how many points it keeps and how long each
may be, drops duplicates and control characters, and nothing in a point can choose a model, a
parameter or a template; points only ever enter prompts as variables.

Points are titles of a few words that end at a phrase boundary. Small models write sentences
("Set clear goals and break them down into small"), run past a length cap, and carry the sentence
on as the next line ("actionable steps ..."): a point is cut back to its title ("Title: more" keeps
"Title"), a long one to its first phrase, one that ends inside a phrase ("... into small") back to
the last whole phrase, and a line that continues the one before (it starts with a connective, or
lowercase after a line that was cut) is not a point.

The rules live beside this module: list markers in ``_lines``, title ends in ``_phrases``, a line
made a title in ``_titles``, half sentences in ``_fragments``, what a point is about in ``_topics``
and what says a kept point again in ``_repeats``.
"""

from __future__ import annotations

import re

from sot._shape import SkeletonShape

from ._fragments import fragment
from ._lines import BULLET, CONTINUES, EMPHASIS, INLINE_MARK, NUMBERED, indent, key, split_inline
from ._phrases import dangles, shape_title
from ._repeats import repeats
from ._titles import clean
from ._topics import Question, Traits, stems, traits
from ._vocabulary import DANGLING_WORDS, word_list, word_set

_LETTER_WORDS = re.compile(r"[^\W\d_]+")
# Adjectives a small model leaves alone as a title ("Strategic", "Political" on the causes of Rome's fall).
# Where the question asks for kinds of something ("causes", "benefits"), the title says which kind of it; a
# larger model's "Political" / "Economic" heads a list by kind, and stays as written.
_BARE_ADJECTIVES = word_set(
    "political strategic economic social cultural financial physical mental emotional environmental "
    "technological natural religious spiritual practical personal legal ethical moral medical historical"
)
_KINDS_ASKED = re.compile(
    r"\b(?:causes?|benefits?|factors?|reasons?|effects?|impacts?|risks?|advantages?|disadvantages?"
    r"|consequences?|challenges?|aspects?|costs?|skills?|changes?|issues?|problems?)\b",
    re.IGNORECASE,
)
# "Wetlands play a crucial role": a role in nothing; dropped where its subject is the question's own
# ("Genetics plays a role" in what affects weight says which factor).
_ROLE = re.compile(r"^(.+?)\s+plays?\s+an?\s+(?:\w+\s+)?role$", re.IGNORECASE)


class SkeletonParser:
    """Incremental skeleton parser: ``feed`` stream deltas, get points as their lines complete.

    The first list item fixes the list's style (numbered or bulleted) and indentation; items of
    the other style or deeper indentation are sub-points and are ignored, as are preambles and
    closing remarks. Numbers must increase, so a second list in a closing remark is not merged in.
    Limits come from the skeleton's shape (sot/_shape.py); ``max_points`` / ``max_point_chars``
    override its count and length.
    """

    def __init__(
        self,
        *,
        max_points: int | None = None,
        max_point_chars: int | None = None,
        shape: SkeletonShape | None = None,
        strict: bool = False,
        question: str = "",
    ) -> None:
        shape = shape or SkeletonShape()
        self._question = Question.read(question, strict)
        kind = _KINDS_ASKED.search(question)
        self._kind = kind.group().casefold() if kind else ""
        self.max_points = max_points or shape.kept_points
        self.max_point_chars = max_point_chars or shape.point_chars
        self.max_words = shape.point_words + 2  # a few words asked; a little more still reads as a title
        self.whole_words = shape.whole_words
        self.line_chars = shape.line_chars
        self.points: list[str] = []
        self.items = 0  # list items read, kept or not: more than points kept means repeats or fragments
        self._seen: set[str] = set()
        self._kept: list[Traits] = []
        self._last_cut = False  # the line before was stopped mid-phrase
        self._cut_line = False  # the line being parsed was stopped by the token limit
        self._buffer = ""
        self._style: str | None = None
        self._indent = 0
        self._last_number = 0

    def keep(self, points: list[str]) -> None:
        """Points an earlier outline gave: this one's repeats of them are dropped, and they count
        toward ``max_points``."""
        for point in points:
            self._remember(point, traits(point, self._question))

    @property
    def full(self) -> bool:
        return len(self.points) >= self.max_points

    def detail(self, point: str) -> str:
        """Nothing: a small model's title is all of its point that is kept."""
        return ""

    def upcoming(self) -> str | None:
        """None: a small model's title is settled only when its line ends (it may be cut or tidied)."""
        return None

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the points whose lines became complete."""
        self._buffer += text.replace("\r\n", "\n").replace("\r", "\n")
        new: list[str] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            new.extend(self._line(line))
        return new

    def finish(self, *, cut: bool = False) -> list[str]:
        """End of the stream: parse what is left; return the points it adds.

        `cut`: the stream was stopped by its token limit, so its last line ends wherever that fell.
        """
        line, self._buffer = self._buffer, ""
        self._cut_line = cut
        try:
            return self._line(line) if line.strip() else []
        finally:
            self._cut_line = False

    def _line(self, raw: str) -> list[str]:
        if self.full:
            return []
        at = indent(raw)
        line = raw.strip()
        numbered = NUMBERED.match(line)
        if numbered and self._style in (None, "numbered"):
            # (Its trailing spaces stay: the grammar's length cap counts them.)
            return self._numbered(at, int(numbered.group(1)), numbered.group(2) + raw[len(raw.rstrip()) :])
        if self._style is None and not numbered:
            inline = INLINE_MARK.search(line)
            if inline and int(inline.group(1)) == 1:
                return self._numbered(at, 1, line[inline.end() :])
        bullet = BULLET.match(line)
        if bullet and self._style in (None, "bullet"):
            if self._style is None:
                self._style, self._indent = "bullet", at
            elif at > self._indent + 1:
                return []
            return self._accept([bullet.group(2)])
        return []

    def _numbered(self, at: int, number: int, body: str) -> list[str]:
        if self._style is None:
            if number > 2:
                return []
            self._style, self._indent = "numbered", at
        elif at > self._indent + 1 or not (self._last_number < number <= self._last_number + 3):
            return []
        body = re.sub(rf"^\s*{number}\s*[.)]\s+", "", body)  # "6. 6. Social connections"
        parts = split_inline(body, number) or [(number, body)]
        # A line stopped by the length cap is cut in its last part only.
        span = len(body.lstrip())
        line_cut = self._cut_line or span >= self.line_chars - 1
        # "1. ... 2. The Earth's atmosphere scatters," then "2. Blue light ...": a point begun inside a
        # line the grammar's cap stopped; the next line mostly begins it again, under its number. (A
        # line longer than the cap had none, and one the token limit ended has no next line.)
        capped = not self._cut_line and self.line_chars - 1 <= span <= self.line_chars + 1
        if capped and len(parts) > 1:
            parts.pop()
            line_cut = False
        self._last_number = parts[-1][0]
        return self._accept([text for _, text in parts], last_cut=line_cut)

    def _continues(self, text: str) -> bool:
        """Whether `text` carries on the line before it rather than starting a point."""
        text = EMPHASIS.sub("", text).strip()
        if CONTINUES.match(text):
            return True
        # Lowercase after a cut line, or in a list whose points start uppercase: "2. actionable steps".
        return text[:1].islower() and (self._last_cut or self.points[0][:1].isupper())

    def _accept(self, texts: list[str], last_cut: bool | None = None) -> list[str]:
        added: list[str] = []
        for i, text in enumerate(texts):
            self.items += 1
            cut = last_cut if last_cut is not None and i == len(texts) - 1 else self._cut_line
            cut = cut or len(text.strip()) >= self.line_chars - 1
            continues = bool(self.points) and self._continues(text)
            self._last_cut = cut or dangles(text)
            if continues:  # a line that carries on the one before it
                continue
            point = self._title(text, cut, several=len(texts) > 1)
            if point is None:
                continue
            point_traits = traits(point, self._question)
            if repeats(point_traits, self._kept, self._question):
                continue
            self._remember(point, point_traits)
            added.append(point)
        return added

    def _title(self, text: str, cut: bool, several: bool) -> str | None:
        """The point a list item's `text` gives, or None where it gives none or one already kept."""
        point = clean(text, self.max_point_chars, self.max_words, self.whole_words, cut=cut)
        if (cut or several) and len(word_list(point)) == 1 and point.casefold() in DANGLING_WORDS:
            return None  # "4. Be": what was left of a line when its limit fell
        letters = _LETTER_WORDS.findall(point)
        if fragment(point) or all(w.casefold() in DANGLING_WORDS for w in letters):
            return None  # "The most", "If they", "Use": the start of a sentence the line never finished
        if not any(len(w) >= 2 for w in letters) or (len(letters) >= 3 and not any(len(w) >= 3 for w in letters)):
            return None  # no title: a number, a symbol, or a run of letters ("B", "D, E, F, G")
        point_key = key(point)
        if not point_key or point_key in self._seen or self.full:
            return None
        strict = self._question.strict
        if strict and point_key in _BARE_ADJECTIVES and self._kind:
            point = f"{point} {self._kind}"  # "Political causes"
        role = _ROLE.match(point) if strict else None
        if role and set(stems(role.group(1), same=True)) <= self._question.asked:
            return None  # "Wetlands play a crucial role" on why wetlands matter: in what, never said
        return point

    def _remember(self, point: str, point_traits: Traits) -> None:
        self._seen.add(key(point))
        self._kept.append(point_traits)
        self.points.append(point)


def parse_skeleton(
    text: str,
    *,
    max_points: int | None = None,
    max_point_chars: int | None = None,
    shape: SkeletonShape | None = None,
    strict: bool = False,
    question: str = "",
) -> list[str]:
    """Return the points of a skeleton, in order, without numbering or markdown (`strict`: a small
    model's outline, for the `question` it answers)."""
    parser = SkeletonParser(
        max_points=max_points, max_point_chars=max_point_chars, shape=shape, strict=strict, question=question
    )
    parser.feed(text)
    parser.finish()
    return parser.points


__all__ = ["DANGLING_WORDS", "SkeletonParser", "parse_skeleton", "shape_title"]
