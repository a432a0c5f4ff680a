"""Release expansion text in reading order while points finish in any order."""

from __future__ import annotations

from collections.abc import Callable

from .events import Event, OrderedText


class OrderedEmitter:
    """Point i's text streams live once points 0..i-1 are done; until then it is buffered.

    A live point that restarts (a retry) has already shown text: consumers drop the text of that
    index on ``ExpansionRestarted``, as they do for ``ExpansionDelta``.
    """

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self._emit = emit
        self._buffers: dict[int, list[str]] = {}
        self._done: set[int] = set()
        self._shown: set[int] = set()
        self._next = 0

    def add_point(self, index: int) -> None:
        self._buffers.setdefault(index, [])

    def close_points(self) -> None:
        self._flush()

    def delta(self, index: int, text: str) -> None:
        if index == self._next:
            self._shown.add(index)
            self._emit(OrderedText(index, text))
        else:
            self._buffers.setdefault(index, []).append(text)

    def restart(self, index: int) -> None:
        if index != self._next:
            self._buffers[index] = []

    def done(self, index: int, fallback_text: str) -> None:
        """Point `index` is final; `fallback_text` is shown if it streamed nothing (a failed point)."""
        if index == self._next:
            if index not in self._shown:
                self._shown.add(index)
                self._emit(OrderedText(index, fallback_text))
        elif not self._buffers.get(index):
            self._buffers[index] = [fallback_text]
        self._done.add(index)
        self._flush()

    def _flush(self) -> None:
        while self._next in self._done:
            self._next += 1
            buffered = self._buffers.pop(self._next, None)
            if buffered:
                self._shown.add(self._next)
                self._emit(OrderedText(self._next, "".join(buffered)))
