"""What the fake server answers: a ``Reply`` per request, chosen by a ``Handler`` from a ``SeenRequest``.

A reply is text streamed word by word with a per-token delay, an error status with headers (429 +
Retry-After ...), a fault (``reset``, ``stall``, ``cut``, ``malformed``) or a hostile shape (raw SSE
``events``, a raw ``body``). ``classify`` tells sot's skeleton, expansion and sequential requests
apart by its prompt shapes; ``sot_script`` is a well-behaved model built on that.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Fault = Literal["reset", "stall", "cut", "malformed"]
# The shape of the project's expansion prompt: the outline, a point per numbered line, then which to write.
# The small-model prompt: its own point only, and the number in the lead ("2. Title:") if it has one.
_SMALL_POINT = re.compile(r"^The point to write: (.*)$", re.MULTILINE)
_LEAD = re.compile(r"^(\d+)\. ")
_OUTLINE = re.compile(r"^The outline of the answer\b.*\n((?:\d+\. .*\n)+)\s*^Write point (\d+) only\b", re.MULTILINE)


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_body: Any = None  # JSON of an error reply: an object, an array (Gemini), FastAPI's detail ...
    first_delay: float = 0.0
    token_delay: float = 0.0
    fault: Fault | None = None
    fault_after: int = 0  # chunks sent before the fault
    # "length": the text ran into its token limit; None: end with [DONE] alone, as some servers do.
    finish_reason: str | None = "stop"
    stream: bool = True  # False: answer with one JSON completion even when asked to stream
    keepalive_s: float = 0.0  # while stalled: send ": keep-alive" comments this often
    ensure_ascii: bool = True  # False: U+2028 and friends travel raw inside the JSON, as pydantic writes them
    events: list[str] | None = None  # raw SSE blocks (e.g. "data: {...}\n\n"), sent instead of the text
    body: bytes | None = None  # raw body bytes with `content_type` (and `content_encoding`), for any status
    content_type: str = "text/html"
    content_encoding: str | None = None
    # Held until the test sets it (from any thread): orders replies by what the client has seen, not by time.
    hold_until: threading.Event | None = None


@dataclass
class SeenRequest:
    """A request as the server saw it."""

    number: int
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    kind: str = "other"  # "skeleton", "expand", "sequential"
    point: int | None = None  # 1-based, for expansions
    title: str = ""  # the point's title, for expansions
    finished_at: float | None = None
    status: int | None = None

    @property
    def prompt(self) -> str:
        messages = self.body.get("messages") or []
        return "\n".join(str(m.get("content", "")) for m in messages)


Handler = Callable[[SeenRequest], Reply]


def classify(request: SeenRequest) -> None:
    """Tell skeleton, expansion and sequential requests apart by the project's prompt shapes."""
    prompt = request.prompt
    outline = _OUTLINE.search(prompt)
    small = _SMALL_POINT.search(prompt)
    if small and not outline:
        request.kind = "expand"
        request.title = small.group(1)
        messages = request.body.get("messages") or []
        lead = (
            _LEAD.match(str(messages[-1].get("content", "")))
            if messages and messages[-1].get("role") == "assistant"
            else None
        )
        request.point = int(lead.group(1)) if lead else None
    elif outline:
        request.kind = "expand"
        request.point = int(outline.group(2))
        titles = dict(re.findall(r"^(\d+)\. (.*)$", outline.group(1), re.MULTILINE))
        request.title = titles.get(outline.group(2), "?")
    elif "grammar" in request.body or "structured_outputs" in request.body or "Outline:" in prompt:
        request.kind = "skeleton"
    else:
        request.kind = "sequential"


def sot_script(
    points: list[str] | None = None,
    *,
    expansion: Callable[[int, str], str] | None = None,
    expansion_delay: Callable[[int], float] | None = None,
    token_delay: float = 0.0,
    skeleton_token_delay: float | None = None,
    sequential_text: str = "A plain answer written in one go.",
) -> Handler:
    """A well-behaved model: a numbered skeleton, then one short paragraph per point."""
    points = points or ["First idea", "Second idea", "Third idea"]
    skeleton = "".join(f"{i}. {p}\n" for i, p in enumerate(points, 1))

    def handle(request: SeenRequest) -> Reply:
        if request.kind == "skeleton":
            delay = token_delay if skeleton_token_delay is None else skeleton_token_delay
            return Reply(skeleton, token_delay=delay)
        if request.kind == "expand":
            title = request.title or "?"
            n = request.point or 0
            text = expansion(n, title) if expansion else f"Details on {title} for point {n}."
            first = expansion_delay(n) if expansion_delay else 0.0
            return Reply(text, first_delay=first, token_delay=token_delay)
        return Reply(sequential_text, token_delay=token_delay)

    return handle
