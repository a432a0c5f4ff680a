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
    events.ExpansionDelta(1, "done."),
    events.PointDone(1, "two done."),
    events.SkeletonDone(("First", "Second")),
    events.ExpansionDelta(0, "done."),
    events.PointDone(0, "one done."),
    events.AnswerText("1. First: one done."),
    events.AnswerText("\n2. Second: two done."),
]


def test_plain_renderer_writes_the_committed_answer_only() -> None:
    out = io.StringIO()
    with PlainRenderer(out) as render:
        for event in SCRIPT:
            render(event)
    assert out.getvalue() == "1. First: one done.\n2. Second: two done.\n"


def test_live_view_keeps_to_the_terminal_height_and_keeps_what_was_shown_on_ctrl_c() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=40, height=6)
    render = LiveRenderer(console)
    try:
        with render:
            render(events.ModeChosen("sot", "router"))
            for i in range(12):
                render(events.SkeletonPoint(i, f"Point {i}"))
            view = render._view()
            assert len(view.renderables) == 5  # the newest lines that fit, never more than the screen
            assert "Point 11" in str(view.renderables[-1])
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert "Point 11" in out.getvalue().rsplit("\x1b[?25h", 1)[-1]  # printed after the live view closed


def test_model_text_cannot_reach_the_terminal_as_control_sequences() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    hostile = "ok\x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b]0;title\x07\x9b31m\r\x08done"
    with LiveRenderer(console) as render:
        render(events.SkeletonPoint(0, "Point"))
        render(events.ExpansionDelta(0, hostile))
        render(events.TextDelta(hostile))
        render(events.PointDone(0, hostile))
    shown = out.getvalue()
    for sequence in ("\x1b]52", "\x1b[2J", "\x1b]0;", "\x9b", "\x08"):
        assert sequence not in shown


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
