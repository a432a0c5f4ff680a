"""What a person sees: plain ordered text when piped, a live outline on a terminal."""

from __future__ import annotations

import io
import re

from rich.console import Console

import sot
from sot import events
from sot._live import LiveRenderer
from sot.render import PlainRenderer, status_line

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


def test_status_line_shows_the_mode_and_a_reason_in_words_not_router_internals() -> None:
    internals = "router: learned: advice-verb, list-cue; score -6.2 (p=0.08)"
    assert status_line("sequential", internals) == "answering in one pass (it needs one line of thought)"
    assert status_line("sot", internals).startswith("Skeleton-of-Thought (a list of independent points)")
    assert status_line("sot", "mode sot requested").startswith("Skeleton-of-Thought (as asked)")
    fallback = "the skeleton had 1 usable point(s); answered sequentially instead"
    assert status_line("sequential", fallback) == "answering in one pass (the outline was too short)"
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, height=10)
    with LiveRenderer(console) as render:
        render(events.ModeChosen("sequential", internals))
        shown = str(render._view().renderables[0])
    assert "score" not in shown and "advice" not in shown and "one pass" in shown


def test_final_answer_is_wrapped_at_word_boundaries() -> None:
    text = "1. Sleep: " + " ".join(f"word{i}" for i in range(60)) + "\n2. Eat: well."
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=30, height=10)
    with LiveRenderer(console) as render:
        render(events.AnswerDone(_answer(text)))
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue().rsplit("\x1b[?25h", 1)[-1])
    lines = [line.rstrip() for line in final.splitlines() if line.strip()]
    assert all(len(line) <= 30 for line in lines)
    assert " ".join(lines).split() == text.split()  # no word broken across lines


def _answer(text: str) -> sot.Answer:
    return sot.Answer(text=text, mode="sot", reason="", question="q")


def test_a_failed_point_shows_its_title_alone_as_the_answer_does() -> None:
    render = LiveRenderer(Console(file=io.StringIO(), force_terminal=True, width=80))
    render(events.SkeletonPoint(0, "First"))
    render(events.PointDone(0, "", failed=True, error="server error"))
    assert render._items()[-1].plain == "✗ 1. First"
