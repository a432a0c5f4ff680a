"""The text of one answer as it forms: the only place that decides what the answer says.

Every view (piped text, ``--stream``, ``--json``, batch records, the proxy, ``AnswerText`` events)
reads the answer from here, so none of them has to handle retries, tidying or fallbacks itself. The
rule that makes that possible: text is *committed* only once it can no longer change, committed text
is never taken back, and ``Draft.text`` (which becomes ``Answer.text``) is exactly the concatenation
of the ``AnswerText`` events emitted.

- SoT: point i is committed, as its whole stitched line, once it is final (expanded and cleaned, or
  failed) and every point before it is committed, and never before the skeleton is complete: until
  then the answer may still fall back to sequential decoding.
- Sequential: text streams as the model writes it (surrounding whitespace held back). A retry after
  text was shown continues after what was shown while it writes the same words; where it takes another
  way (a sampled answer does), what was shown stays and the retried answer follows it whole, after a
  paragraph break (logged as a warning): never spliced in at the same character.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from . import events
from ._sanitize import sanitize

log = logging.getLogger("sot.answer")
_FIRST_SHOWN = re.compile(r"\S")


def point_line(index: int, title: str, body: str, *, headed: bool = False) -> str:
    """One point as the answer shows it: ``N. Title: body`` (just the title, or its heading where sections are
    `headed`, when it has no body; a title that asks or exclaims is followed by its body as by a sentence:
    "Can you afford it? Check ...").
    A body of several lines (paragraphs, a list, a code block), or any body where every section is
    `headed`, starts on a line of its own under its number and title in bold, a paragraph and no list
    item, so markdown renders the body whole (its own numbered lists stay its own) and plain text keeps
    its lines as the model wrote them."""
    head = heading(title)
    bold = f"**{index + 1}. {head}**"
    if not body or body == title:
        return bold if headed else f"{index + 1}. {head}"
    if headed or _multiline(body):
        return f"{bold}\n\n{body}"
    return f"{index + 1}. {head}{after_title(head)}{body}"


def _multiline(body: str) -> bool:
    return "\n" in body


def point_gap(before: str, body: str, *, headed: bool = False) -> str:
    """What separates a point from the one before it: a line break, or a blank line where either has
    several lines or sections are headed (else markdown would run the next point into the last paragraph)."""
    return "\n\n" if headed or _multiline(before) or _multiline(body) else "\n"


def heading(title: str) -> str:
    """A title as a line shows it: without the colon or stop the model may have ended it on."""
    return title.rstrip(".:; ")


def after_title(head: str) -> str:
    """What joins a title to its text: a colon, or a space after a title that asks or exclaims."""
    return " " if head.endswith(("?", "!")) else ": "


class Draft:
    """Commits an answer's text in reading order and emits it as ``AnswerText`` events."""

    def __init__(self, emit: Callable[[events.Event], None], *, headed: bool = False) -> None:
        self._emit = emit
        self._headed = headed  # every point under its own heading (Style.headed_sections)
        self._committed: list[str] = []
        # SoT state.
        self._titles: list[str] = []
        self._bodies: dict[int, str] = {}
        self._outline_complete = False
        self._next_point = 0
        # Sequential state: the current attempt's raw text, its sanitised text up to _raw_done (kept as it
        # grows: cleaning the whole text again for every piece made a long answer cost its length squared),
        # and how much of the answer is shown.
        self._attempt = ""
        self._clean = ""
        self._raw_done = 0
        self._lead: int | None = None  # the first character of _clean that is not whitespace
        self._shown = ""
        self._before = ""  # what the current attempt's text follows: "" unless an earlier attempt diverged
        self._agreed = True  # the current attempt has caught up with what is shown: its new text is all new

    @property
    def text(self) -> str:
        return "".join(self._committed)

    def _commit(self, text: str) -> None:
        # Already sanitised: points by the orchestrator, sequential text in _show.
        if text:
            self._committed.append(text)
            self._emit(events.AnswerText(text))

    # SoT -----------------------------------------------------------------------------------------

    def add_point(self, title: str) -> None:
        self._titles.append(title)

    def point_final(self, index: int, body: str) -> None:
        """Point `index` will not change any more: its cleaned expansion, or its title if it failed."""
        self._bodies[index] = body
        self._flush_points()

    def outline_complete(self) -> None:
        """The skeleton is final and long enough: points may now be committed."""
        self._outline_complete = True
        self._flush_points()

    def _flush_points(self) -> None:
        if not self._outline_complete:
            return
        while self._next_point in self._bodies and self._next_point < len(self._titles):
            i = self._next_point
            gap = point_gap(self._bodies[i - 1], self._bodies[i], headed=self._headed) if i else ""
            self._commit(gap + point_line(i, self._titles[i], self._bodies[i], headed=self._headed))
            self._next_point += 1

    # Sequential ----------------------------------------------------------------------------------

    def sequential_restart(self) -> None:
        self._attempt, self._clean, self._raw_done, self._lead = "", "", 0, None
        self._agreed = False

    def sequential_delta(self, text: str, held: int = 0) -> None:
        """More of the answer; its last `held` characters wait (a loop may be forming there)."""
        self._attempt += text
        upto = len(self._attempt) - held
        if upto > self._raw_done:
            self._clean += sanitize(self._attempt[self._raw_done : upto])
            self._raw_done = upto
        # Cleaning works character by character: the clean text of raw[:upto] is a prefix of _clean.
        end = len(self._clean)
        if upto < self._raw_done:
            end -= len(sanitize(self._attempt[upto : self._raw_done]))
        # Trailing whitespace waits and leading whitespace is never shown: the final answer is stripped.
        while end and self._clean[end - 1].isspace():
            end -= 1
        if self._lead is None and (first := _FIRST_SHOWN.search(self._clean)):
            self._lead = first.start()  # where the shown text starts: once found, it stays while _clean grows
        start = end if self._lead is None else self._lead
        if not self._agreed:  # a retry: compared with what is shown until it catches up or turns away
            self._follow(self._clean[start:end])
            return
        already = len(self._shown) - len(self._before)  # of this attempt's visible text
        if end - start > already:
            self._show_more(self._clean[start + already : end])

    def sequential_final(self, text: str) -> None:
        self._follow(sanitize(text).strip())

    def _follow(self, visible: str) -> None:
        """Show the current attempt's `visible` text so far, after what it follows."""
        whole = self._before + visible
        if not whole.startswith(self._shown) and not self._shown.startswith(whole):
            log.warning("a retried answer took another way than the text already shown: it follows that text")
            self._before = self._shown + "\n\n"
            whole = self._before + visible
        if len(whole) > len(self._shown):
            self._show_more(whole[len(self._shown) :])
        self._agreed = len(whole) >= len(self._shown)

    def _show_more(self, addition: str) -> None:
        self._shown += addition
        self._commit(addition)
