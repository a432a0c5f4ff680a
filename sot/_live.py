"""The live terminal view of an answer as it forms (rich); see sot/render.py for both views."""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from . import events
from ._draft import after_title, heading
from ._sanitize import sanitize
from .render import status_line


class LiveRenderer:
    """A terminal view: the outline at once, each point filling in live, then the final answer.

    The view keeps to the terminal's height (its newest lines), so a long answer never leaves
    stale copies in the scrollback; on Ctrl-C or an error the last view stays on screen.
    """

    def __init__(self, console: Console | None = None, status: str = "thinking…") -> None:
        self.console = console or Console(stderr=False)
        self.titles: list[str] = []
        self.texts: dict[int, str] = {}
        self.state: dict[int, str] = {}
        self.sequential = ""
        self.status = status
        self.answer: str | None = None
        self.live = Live(console=self.console, refresh_per_second=12, transient=True, get_renderable=self._view)

    def __enter__(self) -> LiveRenderer:
        self.live.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        last = self._view()
        self.live.__exit__(None, None, None)
        if self.answer is not None:
            self.console.print(Text(self.answer))
        elif exc_type is not None:
            self.console.print(last)  # keep what was shown

    def _items(self) -> list[Text]:
        lines: list[Text] = [Text(self.status, style="dim")]
        for i, title in enumerate(self.titles):
            mark = {"running": "…", "done": "✓", "failed": "✗"}.get(self.state.get(i, ""), " ")
            line = Text(f"{mark} {i + 1}. ", style="bold")
            head = heading(title)
            line.append(head, style="bold cyan")
            body = self.texts.get(i, "").strip().replace("\n", " ")
            if body:
                line.append(after_title(head) + body)
            lines.append(line)
        if self.sequential:
            lines.append(Text(self.sequential))
        return lines

    def _view(self) -> Group:
        width = max(self.console.size.width, 20)
        height = max(self.console.size.height - 1, 3)
        wrapped = [line for item in self._items() for line in item.wrap(self.console, width)]
        return Group(*wrapped[-height:])

    def __call__(self, event: events.Event) -> None:
        if isinstance(event, events.ModeChosen):
            self.status = status_line(event.mode, event.reason)
        elif isinstance(event, events.SkeletonPoint):
            self.titles.append(sanitize(event.title))
        elif isinstance(event, events.ExpansionStarted):
            self.state[event.index] = "running"
        elif isinstance(event, events.ExpansionDelta):
            self.texts[event.index] = self.texts.get(event.index, "") + sanitize(event.text)
        elif isinstance(event, events.ExpansionRestarted):
            if event.index < 0:  # the sequential answer restarted
                self.sequential = ""
            self.texts[event.index] = ""
        elif isinstance(event, events.PointDone):
            self.state[event.index] = "failed" if event.failed else "done"
            self.texts[event.index] = sanitize(event.text)
        elif isinstance(event, events.TextDelta):
            self.sequential += sanitize(event.text)
        elif isinstance(event, events.AnswerDone):
            self.answer = event.answer.text
            return
        else:
            return
        # Structural changes show at once; text deltas wait for the next timed refresh (no flicker).
        if not isinstance(event, events.ExpansionDelta | events.TextDelta):
            self.live.refresh()
