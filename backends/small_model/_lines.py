"""An outline's lines as list items: their markers, numbers and indentation, and the markup on them."""

from __future__ import annotations

import re

# "1.", "1)", "(1)", "1:", "1 -", "Step 1.", "Point 1:", "**1.**", "### 1.", "> 1."
NUMBERED = re.compile(
    r"""^(?:[#>]+\s*)?(?:\*\*|__)?\s*
        (?:(?:step|point|part|item)\s+)?
        \(?(\d{1,2})(?:\s*[.):]|\s+-)(?=\s|\*|_|$|[^\W\d])
        \s*(?:\*\*|__)?\s*(.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
BULLET = re.compile(r"^([-*•+])\s+(.*)$")
# A marker inside a line, after a space or a sentence's end ("... effectively.2. Next point").
INLINE_MARK = re.compile(r"(?:(?<=\s)|(?<=[.;!?])|^)(?:(?:step|point)\s+)?\(?(\d{1,2})[.)](?=\s)", re.IGNORECASE)
EMPHASIS = re.compile(r"(\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)|`)")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# A line that starts like this carries on the line before it.
CONTINUES = re.compile(r"^(?:and|or|but|nor|which|that|so|because|then|while|than|whereas)\b", re.IGNORECASE)


def indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def key(text: str) -> str:
    """What two points that differ only in case, spacing or punctuation share."""
    return re.sub(r"[\W_]+", "", text.casefold())


def split_inline(body: str, first: int) -> list[tuple[int, str]] | None:
    """Split "A 2. B 3. C" (numbers following `first`) into numbered parts, or None."""
    parts: list[tuple[int, str]] = []
    expected = first + 1
    start = 0
    number = first
    for match in INLINE_MARK.finditer(body):
        if int(match.group(1)) != expected:
            continue
        parts.append((number, body[start : match.start()]))
        number, start, expected = expected, match.end(), expected + 1
    if not parts:
        return None
    parts.append((number, body[start:]))
    return parts
