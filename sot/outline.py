"""The generic outline parser: points as any model numbers them, titles kept as the model wrote them.

It knows list syntax, not a language: numbered lines ("1." "1)" "(1)" "1:" "Step 1:", roman numerals,
full-width digits and stops, markdown headings and emphasis around them), bullets or headings where
nothing is numbered. Lines before the list and after it are ignored; lines under a point (indented,
sub-items, text before the next item) are folded into that point's detail. "Title: description" and
"Title – description" are split, and the description is kept for that point's expansion prompt.

An outline is untrusted model output: the parser caps how many points it keeps and how long a
title may be, drops control characters and exact duplicates, and a point only ever reaches a
prompt as a variable. A title is kept whole unless it is over the length cap: then it is shortened at a
word boundary (inside a word only where it has no space), and what is cut off leads its detail.
"""

from __future__ import annotations

import re

from ._heading import OutlinePoint as OutlinePoint
from ._heading import split_settled
from ._heading import split_title as split_title
from ._shape import SkeletonShape

_ROMAN = "ivxlIVXL"
# A list marker: optional heading hashes, quote and emphasis, an optional word before the number
# ("Step 1:"), the number (digits of any script, a roman numeral, or in brackets) and its stop.
_NUMBERED = re.compile(
    rf"""^(?P<lead>(?:\#{{1,6}}\s*)?(?:>\s*)?(?:\*\*|__)?\s*)
        (?:[^\W\d_]+\s+(?=\d))??
        (?:[(（](?P<bracketed>\d{{1,3}}|[{_ROMAN}]{{1,5}})[)）]
          |(?P<number>\d{{1,3}}|[{_ROMAN}]{{1,5}})(?P<stop>\s*[.)）:：．、]|\s+[-–—](?=\s)))
        (?P<rest>.*)$""",
    re.VERBOSE,
)
_BULLET = re.compile(r"^(?:[-*•+‣◦]\s+|・\s*|\#{1,6}\s+)(?P<rest>.*)$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50}


def _roman(text: str) -> int | None:
    values = [_ROMAN_VALUES.get(c) for c in text.casefold()]
    if None in values:
        return None
    total = 0
    for value, after in zip(values, [*values[1:], 0], strict=True):
        assert value is not None and after is not None
        total += -value if value < after else value
    return total


def _number(match: re.Match[str]) -> int | None:
    """The item's number; None where the "stop" was part of the text ("1.5 litres", "10:30")."""
    rest = match.group("rest")
    if (match.group("stop") or "").strip() in (".", ":") and rest[:1].isdigit():
        return None
    raw = match.group("bracketed") or match.group("number")
    return int(raw) if raw.isdigit() else _roman(raw)


def _item_text(match: re.Match[str]) -> str:
    """The text after an item's marker, with the emphasis that opened before the number kept."""
    lead, rest = match.group("lead").strip(" #>"), match.group("rest").strip()
    if lead and rest.startswith(lead):  # "**1.** Title": the emphasis was the number's
        lead, rest = "", rest[len(lead) :].strip()
    return lead + rest


def _cut(title: str, limit: int) -> tuple[str, str]:
    """`title` within `limit` characters (shortened at a word boundary, marked "…"), and what was cut off."""
    title = " ".join(title.split())
    if len(title) <= limit:
        return title, ""
    cut = title[: limit - 1]
    kept = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return kept.rstrip(" ,;:-") + "…", title[len(kept) :].strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class SkeletonParser:
    """Incremental outline parser: ``feed`` stream deltas, get each point once it is complete.

    A point is complete when the next item of its list begins or the outline ends: the lines under
    it are its detail. The first item fixes the list's style (numbered, else bullets or headings)
    and indentation; deeper items are folded into their point. Numbers must increase, so a second
    list in a closing remark is not read as more points.
    """

    def __init__(self, *, shape: SkeletonShape | None = None, max_points: int | None = None) -> None:
        shape = shape or SkeletonShape()
        self.max_points = max_points or shape.kept_points
        self.max_point_chars = shape.point_chars
        self.points: list[str] = []
        self.details: list[str] = []
        self.items = 0  # list items read, kept or not
        self._buffer = ""
        self._style: str | None = None
        self._indent = 0
        self._last_number = 0
        self._open: OutlinePoint | None = None  # the item whose detail may still grow
        self._closed = False  # a blank line after the item: plain text now is a closing remark
        self._blank = False

    @property
    def full(self) -> bool:
        return len(self.points) >= self.max_points

    def keep(self, points: list[str]) -> None:
        """Points an earlier outline gave: repeats of them are dropped, and they count toward the cap."""
        for point in points:
            self._add(OutlinePoint(point))

    def detail(self, point: str) -> str:
        """What the outline said of `point` beyond its title ("" if nothing)."""
        return next((d for p, d in zip(self.points, self.details, strict=True) if p == point), "")

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the points that became complete."""
        self._buffer += text.replace("\r\n", "\n").replace("\r", "\n")
        before = len(self.points)
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            self._line(line)
        if self._open is not None and self._next_item() is not None:
            self._close()  # its detail is over: the point need not wait for the next line's end
        return self.points[before:]

    def _next_item(self) -> str | None:
        """The text after the marker of the next item at this level, if the unfinished line begins one."""
        partial = self._buffer
        if _indent(partial) > self._indent + 1 or not partial.strip():
            return None
        numbered = _NUMBERED.match(partial.strip() + " ")
        if self._style == "numbered":
            number = _number(numbered) if numbered else None
            if numbered is None or number is None or not self._last_number < number <= self._last_number + 3:
                return None
            return _item_text(numbered)
        bullet = _BULLET.match(partial.strip() + " ")
        return bullet.group("rest") if bullet else None

    def upcoming(self) -> str | None:
        """The title of the next point, as it will be kept, once no more text can change it: its line is
        complete (only its detail may still grow), or the unfinished line's description has begun.
        None before that, or where it would not be kept."""
        if self._open is not None:
            title = self._open.title
        else:
            text = self._next_item() if self._style is not None else None
            point, settled = split_settled(text or "")
            title = point.title if text is not None and settled else ""
        title = _cut(title, self.max_point_chars)[0]
        return title if title and not self.full and not self._known(title) else None

    def finish(self, *, cut: bool = False) -> list[str]:
        """End of the stream: the last line and the open point; return the points they add.
        (`cut`, the stream stopped by its token limit, changes nothing: no title is cut here.)"""
        before = len(self.points)
        line, self._buffer = self._buffer, ""
        if line.strip():
            self._line(line)
        self._close()
        return self.points[before:]

    def _line(self, raw: str) -> None:
        if not raw.strip():
            self._blank = True
            return
        indent, line = _indent(raw), raw.strip()
        item = self._item(indent, line)
        if item is not None:
            self._close()
            self._open, self._closed, self._blank = item, False, False
            self.items += 1
        elif self._open is not None and (indent > self._indent or not self._blank) and not self._closed:
            detail = f"{self._open.detail}\n{line}" if self._open.detail else line
            self._open = OutlinePoint(self._open.title, detail)
            self._blank = False
        elif self._open is not None:
            self._closed = True

    def _item(self, indent: int, line: str) -> OutlinePoint | None:
        """The list item `line` starts at this level, if it starts one."""
        if self._style is not None and indent > self._indent + 1:
            return None  # a sub-item: part of the point above
        numbered = _NUMBERED.match(line)
        number = _number(numbered) if numbered else None
        if numbered and number is not None and self._style == "bullet" and number == 1 and not self.points:
            # A heading or bullet before a numbered list was its title, not its first point.
            self._style, self._open, self.items = None, None, 0
        if numbered and number is not None and self._style in (None, "numbered"):
            if self._style is None and number > 2:
                return None
            if self._style is not None and not self._last_number < number <= self._last_number + 3:
                return None
            self._style, self._indent, self._last_number = "numbered", indent, number
            return split_title(_item_text(numbered))
        bullet = _BULLET.match(line)
        if bullet and self._style in (None, "bullet"):
            self._style, self._indent = "bullet", indent if self._style is None else self._indent
            return split_title(bullet.group("rest"))
        return None

    def _close(self) -> None:
        if self._open is not None:
            self._add(self._open)
            self._open = None

    def _known(self, title: str) -> bool:
        return title.casefold() in (p.casefold() for p in self.points)

    def _add(self, point: OutlinePoint) -> None:
        title, rest = _cut(point.title, self.max_point_chars)
        if not title or self.full or self._known(title):
            return
        self.points.append(title)
        # What the cap cut off leads the detail: the section's writer still reads the whole line (a line
        # with no "Title: description" split is all title).
        self.details.append("\n".join(part for part in (rest and f"…{rest}", point.detail) if part))


def parse_skeleton(text: str, *, shape: SkeletonShape | None = None, max_points: int | None = None) -> list[str]:
    """The titles of an outline, in order, without numbering or emphasis."""
    parser = SkeletonParser(shape=shape, max_points=max_points)
    parser.feed(text)
    parser.finish()
    return parser.points
