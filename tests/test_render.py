"""What a person sees: plain ordered text when piped, a live outline on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from sot import events
from sot.render import LiveRenderer, PlainRenderer

SCRIPT: list[events.Event] = [
    events.ModeChosen("sot", "router"),
    events.SkeletonPoint(0, "First"),
    events.SkeletonPoint(1, "Second"),
    events.ExpansionStarted(0),
    events.ExpansionStarted(1),
    events.ExpansionDelta(1, "two "),
    events.ExpansionDelta(0, "one "),
    events.OrderedText(0, "one "),
    events.ExpansionDelta(1, "done."),
    events.PointDone(1, "two done."),
    events.ExpansionDelta(0, "done."),
    events.OrderedText(0, "done."),
    events.PointDone(0, "one done."),
    events.OrderedText(1, "two done."),
]


def test_plain_renderer_writes_points_in_order() -> None:
    out = io.StringIO()
    with PlainRenderer(out) as render:
        for event in SCRIPT:
            render(event)
    assert out.getvalue() == "1. First: one done.\n2. Second: two done.\n"


def test_live_renderer_shows_the_outline_and_fills_points() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    render = LiveRenderer(console)
    with render:
        render(SCRIPT[0])
        render(SCRIPT[1])
        render(SCRIPT[2])
        outline = console.export_text() if console.record else out.getvalue()
        assert "First" in outline and "Second" in outline
        for event in SCRIPT[3:]:
            render(event)
    text = out.getvalue()
    assert "one done." in text and "two done." in text and "✓" in text
