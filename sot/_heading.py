"""An outline item's text as its title and the description after it ("Title: description",
"**Title** – description"), and whether streaming more of it could still move that split."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._sanitize import sanitize

# Emphasis around the whole head of an item: "**Title**", "***Title***", "*Title*", "__Title__".
_EMPHASIS = re.compile(r"^(\*\*\*|\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")  # bold inside a title: "Use **strong** passwords"
# Where a title gives way to its description: a colon (else a spaced dash), outside code spans.
_COLON = re.compile(r":\s|:$|：")
_DASH = re.compile(r"\s[-–—]\s")


@dataclass(frozen=True)
class OutlinePoint:
    title: str
    detail: str = ""


def _plain(title: str) -> str:
    """A title without its bold markers; code spans are kept as written ("`**kwargs`")."""
    parts = title.split("`")
    parts[::2] = [_BOLD.sub(r"\1", part) for part in parts[::2]]
    return "`".join(parts).strip().rstrip(":：").strip()


_SHIELDED = re.compile(r"`[^`]*`|\*\*(?=\S).+?(?<=\S)\*\*")  # code spans and bold: no separator inside


def _split_at(text: str, separator: re.Pattern[str]) -> tuple[str, str] | None:
    masked = _SHIELDED.sub(lambda m: "x" * len(m.group()), text)
    found = next((m for m in separator.finditer(masked) if m.start() > 0), None)
    return (text[: found.start()], text[found.end() :].strip()) if found else None


def split_title(text: str) -> OutlinePoint:
    """A list item's text as its title and the description after it, emphasis aside."""
    return split_settled(text)[0]


def split_settled(text: str) -> tuple[OutlinePoint, bool]:
    """`split_title`, and whether more text after `text` could still move the split: not once the
    description has begun after emphasis or a colon (a dash gives way to a colon further on)."""
    text = sanitize(text).strip()
    emphasised = _EMPHASIS.match(text)
    rest = text[emphasised.end() :].strip() if emphasised else ""
    ends = emphasised is not None and emphasised.group(2).rstrip().endswith((":", "："))
    if emphasised and (ends or not rest or re.match(r"[:：]|[-–—]\s", rest)):  # "**Title**: description"
        title = emphasised.group(2).strip().rstrip(":：").strip()
        detail = re.sub(r"^(?:[:：]|[-–—](?=\s))\s*", "", rest)
        return OutlinePoint(_plain(title), detail), bool(detail)
    colon = _split_at(text, _COLON)
    head, detail = colon or _split_at(text, _DASH) or (text, "")
    # A code span or bold left open may yet shield the colon; emphasis opening the line may yet close
    # around the whole head ("*Title: description*").
    unclosed = re.sub(r"`[^`]*`", "", head)
    opened = "`" in unclosed or unclosed.count("**") % 2 == 1 or (emphasised is None and text[:1] in "*_")
    return OutlinePoint(_plain(head), detail), colon is not None and bool(detail) and not opened
