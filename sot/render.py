"""Show an answer while it forms: plain ordered text for pipes, a live outline on terminals."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from . import events


class PlainRenderer:
    """Writes the answer in reading order as it becomes final; nothing is ever rewritten."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.titles: dict[int, str] = {}
        self.current: int | None = None

    def __enter__(self) -> PlainRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.current is not None:
            self.out.write("\n")
        self.out.flush()

    def __call__(self, event: events.Event) -> None:
        if isinstance(event, events.SkeletonPoint):
            self.titles[event.index] = event.title
        elif isinstance(event, events.OrderedText):
            if event.index != self.current:
                if self.current is not None:
                    self.out.write("\n")
                self.current = event.index
                title = self.titles.get(event.index, "").rstrip(".:; ")
                self.out.write(f"{event.index + 1}. {title}: ")
            self.out.write(event.text.replace("\n", " "))
            self.out.flush()
        elif isinstance(event, events.TextDelta):
            self.current = -1
            self.out.write(event.text)
            self.out.flush()


class LiveRenderer:
    """A terminal view: the outline at once, each point filling in live, then the final answer."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=False)
        self.titles: list[str] = []
        self.texts: dict[int, str] = {}
        self.state: dict[int, str] = {}
        self.sequential = ""
        self.status = "thinking…"
        self.live = Live(console=self.console, refresh_per_second=12, transient=True)

    def __enter__(self) -> LiveRenderer:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def _view(self) -> Group:
        lines: list[Text] = [Text(self.status, style="dim")]
        for i, title in enumerate(self.titles):
            mark = {"running": "…", "done": "✓", "failed": "✗"}.get(self.state.get(i, ""), " ")
            line = Text(f"{mark} {i + 1}. ", style="bold")
            line.append(title.rstrip(".:; "), style="bold cyan")
            body = self.texts.get(i, "").strip().replace("\n", " ")
            if body:
                line.append(": " + body)
            lines.append(line)
        if self.sequential:
            lines.append(Text(self.sequential))
        return Group(*lines)

    def __call__(self, event: events.Event) -> None:
        if isinstance(event, events.ModeChosen):
            self.status = f"{event.mode}: {event.reason}"
        elif isinstance(event, events.SkeletonPoint):
            self.titles.append(event.title)
        elif isinstance(event, events.ExpansionStarted):
            self.state[event.index] = "running"
        elif isinstance(event, events.ExpansionDelta):
            self.texts[event.index] = self.texts.get(event.index, "") + event.text
        elif isinstance(event, events.ExpansionRestarted):
            if event.index < 0:  # the sequential answer restarted
                self.sequential = ""
            self.texts[event.index] = ""
        elif isinstance(event, events.PointDone):
            self.state[event.index] = "failed" if event.failed else "done"
            self.texts[event.index] = event.text
        elif isinstance(event, events.TextDelta):
            self.sequential += event.text
        elif isinstance(event, events.AnswerDone):
            return
        else:
            return
        # Structural changes show at once; text deltas wait for the next timed refresh (no flicker).
        streaming = isinstance(event, events.ExpansionDelta | events.TextDelta)
        self.live.update(self._view(), refresh=not streaming)
