"""A degenerate loop in a stream: one piece of text written again and again, back to back.

Models of every size fall into such loops at times (small ones often: "rain, rain, rain, ...", a line
repeated two dozen times), and then write until their token limit cuts them mid-word. ``LoopWatch`` sees
a loop once a piece of text has come back to back at least ``MIN_COPIES`` times over ``MIN_SPAN``
characters, ends the stream there, and cuts the text where the loop began (at its sentence's start).
Only exact repeats that long count, and none inside a code block (identical lines of code, a zero
matrix, a hex dump are code's own): a few identical table rows, a divider line or a refrain stay.

Views are shown the text as it comes, but for a repetition that is forming: from the sentence it began
in, its text waits until it either stops or becomes a loop, so a loop is never shown and then taken
back, and every view shows the same text. A loop whose first copies were shown before they could be
told from ordinary text is cut after the copy a view was showing. A profile whose cut answers end on
a whole sentence (``hold_sentences``: the bundled small model's) has every unfinished sentence wait
too, up to ``SENTENCE_HOLD`` characters; that delays the first text by a sentence, so only it does.
"""

from __future__ import annotations

import re

MIN_SPAN = 400  # characters of back-to-back repetition before it is a loop
MIN_COPIES = 8
MAX_UNIT = 200  # the longest piece whose repetition is looked for
SENTENCE_HOLD = 300  # with hold_sentences: a sentence still being written waits until it is this long
_PROBE = 6  # the text's last characters, looked up earlier in the text to find candidate periods
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]|\n")
_ENDED = re.compile(r"(?:[.!?。！？]\s*|\n)$")  # text that ends a sentence or a line
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
# How far back a sentence's start is looked for: a loop is cut from the sentence it began in, and a
# bounded window keeps each look cheap on long texts.
_LOOKBACK = 4 * MAX_UNIT + 1000


def _copies(text: str, unit: int) -> int:
    """How many times the last `unit` characters of `text` come back to back at its end."""
    copies = 1
    while len(text) >= (copies + 1) * unit and text[-(copies + 1) * unit : -copies * unit] == text[-unit:]:
        copies += 1
    return copies


def _repetition(text: str) -> tuple[int, int, int]:
    """(start, copies, unit) of the longest back-to-back repetition at the end of `text` (copies 1: none)."""
    best = (len(text), 1, 1)
    if len(text) < 2 * _PROBE:
        return best
    probe = text[-_PROBE:]
    low = max(0, len(text) - MAX_UNIT - _PROBE)
    end = len(text) - 1
    periods: list[int] = []
    while (found := text.rfind(probe, low, end)) >= 0:
        end = found + _PROBE - 1
        unit = len(text) - _PROBE - found
        # A multiple of a period already found only repeats that run: skipping it keeps a long repetitive
        # text from costing each of its pieces its length squared.
        if any(unit % period == 0 for period in periods):
            continue
        copies = _copies(text, unit)
        if copies < 2:
            continue
        periods.append(unit)
        start = len(text) - copies * unit
        while start > 0 and text[start - 1] == text[start - 1 + unit]:
            start -= 1  # the run began mid-copy: "rain, rain, ra" repeats "in, ra" from its first "rain"
        if start < best[0]:
            best = (start, copies, unit)
    return best


class LoopWatch:
    """Feed a stream's text; ``looping`` once it loops; ``held`` characters at its end to show no one yet."""

    def __init__(self, shown_live: bool = True, hold_sentences: bool = False) -> None:
        """`shown_live`: views show the text as it streams (a plain answer), so what is held is worked
        out as it comes; an expansion is shown whole once final, and needs none of that.
        `hold_sentences`: unfinished sentences wait too (see the module's docstring)."""
        self.shown_live = shown_live
        self.hold_sentences = hold_sentences
        self.text = ""
        self.loop_start: int | None = None
        self._unit = 1  # the repeating piece's length, once looping
        self._fences = 0  # code fences in the text's whole lines before _scanned
        self._scanned = 0
        self._looked = 0  # how much of the text was looked at for line ends
        self._held = 0
        self._forming = 0  # where the repetition now at the end began (len(text) when none)
        self._shown = 0  # the most of the text a view may have shown: a cut never goes back before it

    def restart(self) -> None:
        """A retried stream starts over."""
        self.text, self.loop_start, self._forming, self._shown = "", None, 0, 0
        self._fences, self._scanned, self._looked, self._held = 0, 0, 0, 0

    def _in_code(self) -> bool:
        """Whether the text ends inside an open code block (fences counted once per whole line)."""
        # The start of the line still being written: looked for only in what came since the last look.
        found = self.text.rfind("\n", self._looked)
        self._looked = len(self.text)
        whole = found + 1 if found >= 0 else self._scanned
        if whole > self._scanned:
            self._fences += len(_FENCE.findall(self.text, self._scanned, whole))
            self._scanned = whole
        # The line being written opens or closes a block only by how it starts: one look at its start.
        return (self._fences + bool(_FENCE.match(self.text, self._scanned))) % 2 == 1

    @property
    def looping(self) -> bool:
        return self.loop_start is not None

    def feed(self, delta: str) -> None:
        self.text += delta
        if not self.looping:
            self._look()
        if self.shown_live:  # an expansion is shown whole once final: nothing is held from it
            # Worked out once a piece: views ask for it as often as the watch does.
            self._held = self._holding()
            self._shown = max(self._shown, len(self.text) - self._held)

    def _look(self) -> None:
        if self._in_code():  # none inside an open code block, which streams as it comes
            self._forming = len(self.text)
            return
        start, copies, unit = _repetition(self.text)
        self._forming = start
        if copies >= MIN_COPIES and len(self.text) - start >= MIN_SPAN:
            self.loop_start, self._unit = start, unit

    @property
    def held(self) -> int:
        """Characters at the end of the text that no view should show yet: from the start of the sentence
        a forming repetition began in (its text may yet be cut away)."""
        return self._held

    def _holding(self) -> int:
        start = self.loop_start if self.loop_start is not None else self._forming
        forming = len(self.text) - _sentence_start(self.text, start) if start < len(self.text) else 0
        if not self.hold_sentences:
            return forming
        unfinished = len(self.text) - _sentence_start(self.text, len(self.text))
        return max(forming, unfinished if unfinished < SENTENCE_HOLD else 0)

    def cut(self, text: str) -> str:
        """`text` (the stream's, as it ended) without the loop, ending at its last whole sentence before it."""
        if self.loop_start is None:
            return text
        end = _sentence_start(text, self.loop_start)
        if self._shown > end:  # shown already: the cut goes on to the end of the copy it was showing
            end = self._shown
            if not _ENDED.search(text[:end]):
                copies = -(-max(0, end - self.loop_start) // self._unit)
                end = max(end, self.loop_start + copies * self._unit)
        return text[:end].rstrip()


def whole_sentences(text: str) -> str:
    """`text` up to its last whole sentence (or line); all of it where none ends."""
    end = _sentence_start(text, len(text))
    return text[:end].rstrip() if end else text


def _sentence_start(text: str, position: int) -> int:
    """Where the sentence holding `position` begins: just after the last sentence end before it (looked
    for within _LOOKBACK characters; past that, the window's start stands for it)."""
    low = max(0, position - _LOOKBACK)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, low, position)]
    return ends[-1] if ends else low
