"""The skeleton's shape, defined once: how many points, how they are numbered, how long each is.

The GBNF grammar (llama.cpp), the regular expression (vLLM's structured outputs), the skeleton
prompt's wording and the parser's limits are all made from one ``SkeletonShape``, so they cannot
disagree: ``--max-points 2`` gives a grammar and a regex of at most 2 lines, never ``{3,2}``.

The constraint numbers the lines itself (``1. `` then ``2. `` ...), so a constrained outline is
always numbered 1..n in order. A line may end early on a colon: small models write ``Title: a long
explanation``, and the grammar stops them after the title instead of letting a sentence run on
until a length cap cuts it mid-phrase and the rest spills onto the next line as a fake point.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import constants


@dataclass(frozen=True)
class SkeletonShape:
    """How many points an outline has, how they are numbered and how long each line may be."""

    max_points: int = constants.DEFAULT_MAX_POINTS
    min_points: int = constants.SKELETON_MIN_POINTS
    # Of the points an outline gives, the first this many distinct ones are kept (0: max_points); more
    # than are asked for where a model that plans more sections than asked keeps them.
    kept_points: int = 0
    point_words: int = constants.SKELETON_POINT_WORDS
    line_chars: int = constants.SKELETON_LINE_CHARS
    point_chars: int = constants.MAX_POINT_CHARS

    def __post_init__(self) -> None:
        # Asking for fewer points than the usual minimum lowers the minimum; it never inverts the range.
        object.__setattr__(self, "min_points", max(1, min(self.min_points, self.max_points)))
        object.__setattr__(self, "kept_points", self.kept_points or self.max_points)

    @property
    def whole_words(self) -> int:
        """A point asked for in `point_words` may keep a whole sentence of up to this many: cutting
        one inside a phrase to fit the ask loses its sense."""
        return 2 * self.point_words

    def gbnf(self) -> str:
        """A llama.cpp grammar: lines ``1. `` .. ``n. `` in order, min_points..max_points of them."""
        required = " ".join(f'"{n}. " point' for n in range(1, self.min_points + 1))
        optional = ""
        for n in range(self.max_points, self.min_points, -1):
            optional = f'("{n}. " point {optional})?'
        # A point starts with a visible character, runs to its newline and may end early on a
        # colon: the title. Lowercase starts stay possible so the parser can see a continuation.
        return (
            f"# A skeleton: {self.min_points} to {self.max_points} numbered lines (made by sot/_shape.py).\n"
            f"root ::= {required} {optional}\n"
            f'point ::= [^ \\n:] [^\\n:]{{1,{self.line_chars - 1}}} ":"? "\\n"\n'
        )

    def regex(self) -> str:
        """The same outline as a regular expression (vLLM's structured outputs)."""
        point = r"[^ \n:][^\n:]{1,%d}:?\n" % (self.line_chars - 1)  # noqa: UP031
        required = "".join(rf"{n}\. {point}" for n in range(1, self.min_points + 1))
        optional = ""
        for n in range(self.max_points, self.min_points, -1):
            optional = rf"(?:{n}\. {point}{optional})?"
        return required + optional

    def wording(self) -> dict[str, int]:
        """What the skeleton prompt tells the model (its template variables)."""
        return {
            "min_points": self.min_points,
            "max_points": self.max_points,
            "point_words": self.point_words,
        }
