"""Parse skeletons as real models write them, all at once or line by line while they stream.

A skeleton is untrusted model output: the parser caps how many points it keeps and how long each
may be, drops duplicates and control characters, and nothing in a point can choose a model, a
parameter or a template; points only ever enter prompts as variables.
"""

from __future__ import annotations

import re
import unicodedata

from . import constants

# "1.", "1)", "(1)", "1:", "1 -", "Step 1.", "Point 1:", "**1.**", "### 1.", "> 1."
_NUMBERED = re.compile(
    r"""^(?:[#>]+\s*)?(?:\*\*|__)?\s*
        (?:(?:step|point|part|item)\s+)?
        \(?(\d{1,2})(?:\s*[.):]|\s+-)(?=\s|\*|_|$|[^\W\d])
        \s*(?:\*\*|__)?\s*(.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_BULLET = re.compile(r"^([-*•+])\s+(.*)$")
# A marker inside a line, after a space or a sentence's end ("... effectively.2. Next point").
_INLINE_MARK = re.compile(r"(?:(?<=\s)|(?<=[.;!?])|^)(?:(?:step|point)\s+)?\(?(\d{1,2})[.)](?=\s)", re.IGNORECASE)
_EMPHASIS = re.compile(r"(\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)|`)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _clean(text: str, max_chars: int) -> str:
    text = _CONTROL.sub("", unicodedata.normalize("NFC", text))
    text = _EMPHASIS.sub("", text).strip()
    text = re.sub(r"\s+", " ", text)
    # Points are titles: a trailing period, colon or separator is formatting, not content.
    text = text.rstrip(" .,;:")
    if len(text) > max_chars:
        cut = text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]
        text = cut.rstrip(" ,;:-") + "…"
    return text


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _split_inline(body: str, first: int) -> list[tuple[int, str]] | None:
    """Split "A 2. B 3. C" (numbers following `first`) into numbered parts, or None."""
    parts: list[tuple[int, str]] = []
    expected = first + 1
    start = 0
    number = first
    for match in _INLINE_MARK.finditer(body):
        if int(match.group(1)) != expected:
            continue
        parts.append((number, body[start : match.start()]))
        number, start, expected = expected, match.end(), expected + 1
    if not parts:
        return None
    parts.append((number, body[start:]))
    return parts


class SkeletonParser:
    """Incremental skeleton parser: ``feed`` stream deltas, get points as their lines complete.

    The first list item fixes the list's style (numbered or bulleted) and indentation; items of
    the other style or deeper indentation are sub-points and are ignored, as are preambles and
    closing remarks. Numbers must increase, so a second list in a closing remark is not merged in.
    """

    def __init__(
        self,
        *,
        max_points: int = constants.DEFAULT_MAX_POINTS,
        max_point_chars: int = constants.MAX_POINT_CHARS,
    ) -> None:
        self.max_points = max_points
        self.max_point_chars = max_point_chars
        self.points: list[str] = []
        self._seen: set[str] = set()
        self._buffer = ""
        self._style: str | None = None
        self._indent = 0
        self._last_number = 0

    @property
    def full(self) -> bool:
        return len(self.points) >= self.max_points

    def reset_stream(self) -> None:
        """A new stream of the same skeleton begins (a retry): keep the points, forget the line."""
        self._buffer = ""
        self._style = None
        self._indent = 0
        self._last_number = 0

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the points whose lines became complete."""
        self._buffer += text.replace("\r\n", "\n").replace("\r", "\n")
        new: list[str] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            new.extend(self._line(line))
        return new

    def finish(self) -> list[str]:
        """End of the stream: parse what is left; return the points it adds."""
        line, self._buffer = self._buffer, ""
        return self._line(line) if line.strip() else []

    def _line(self, raw: str) -> list[str]:
        if self.full:
            return []
        indent = _indent(raw)
        line = raw.strip()
        numbered = _NUMBERED.match(line)
        if numbered and self._style in (None, "numbered"):
            return self._numbered(indent, int(numbered.group(1)), numbered.group(2))
        if self._style is None and not numbered:
            inline = _INLINE_MARK.search(line)
            if inline and int(inline.group(1)) == 1:
                return self._numbered(indent, 1, line[inline.end() :])
        bullet = _BULLET.match(line)
        if bullet and self._style in (None, "bullet"):
            if self._style is None:
                self._style, self._indent = "bullet", indent
            elif indent > self._indent + 1:
                return []
            return self._accept([bullet.group(2)])
        return []

    def _numbered(self, indent: int, number: int, body: str) -> list[str]:
        if self._style is None:
            if number > 2:
                return []
            self._style, self._indent = "numbered", indent
        elif indent > self._indent + 1 or not (self._last_number < number <= self._last_number + 3):
            return []
        parts = _split_inline(body, number) or [(number, body)]
        self._last_number = parts[-1][0]
        return self._accept([text for _, text in parts])

    def _accept(self, texts: list[str]) -> list[str]:
        added: list[str] = []
        for text in texts:
            point = _clean(text, self.max_point_chars)
            key = _key(point)
            if not key or key in self._seen or self.full:
                continue
            self._seen.add(key)
            self.points.append(point)
            added.append(point)
        return added


def parse_skeleton(
    text: str,
    *,
    max_points: int = constants.DEFAULT_MAX_POINTS,
    max_point_chars: int = constants.MAX_POINT_CHARS,
) -> list[str]:
    """Return the points of a skeleton, in order, without numbering or markdown."""
    parser = SkeletonParser(max_points=max_points, max_point_chars=max_point_chars)
    parser.feed(text)
    parser.finish()
    return parser.points
