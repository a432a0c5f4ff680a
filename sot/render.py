"""Show an answer while it forms: its final text for pipes, a live outline on terminals.

Both views print the answer from one source, the ``AnswerText`` events (see sot/_draft.py): piped
output is byte for byte ``Answer.text``; the live view shows raw progress while the answer forms,
then prints ``Answer.text``, word-wrapped to the terminal. The live view (sot/_live.py) draws with rich,
imported only where it is shown: piped output goes out without it.
"""

from __future__ import annotations

import sys
from typing import TextIO

from . import events


def status_line(mode: str, reason: str) -> str:
    """The mode and why, in words: never the router's internals (they are in --json and the debug log)."""
    if reason.startswith("mode "):
        why = "as asked"
    elif reason.startswith("router"):
        why = "a list of independent points" if mode == "sot" else "it needs one line of thought"
    elif mode == "sequential" and reason.startswith("the skeleton had"):
        why = "the outline was too short"
    else:
        why = ""
    if mode == "sot":
        return f"Skeleton-of-Thought{f' ({why})' if why else ''}: outline, then points in parallel"
    return f"answering in one pass{f' ({why})' if why else ''}"


class PlainRenderer:
    """Writes the answer's final text as it is committed, in reading order; nothing is rewritten."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.wrote = False

    def __enter__(self) -> PlainRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.wrote:
            self.out.write("\n")
        self.out.flush()

    def __call__(self, event: events.Event) -> None:
        if isinstance(event, events.AnswerText):
            self.out.write(event.text)
            self.out.flush()
            self.wrote = True
