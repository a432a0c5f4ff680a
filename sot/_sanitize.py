"""One sanitiser for model text that may reach a terminal.

Model output is untrusted: an escape sequence in it could write the clipboard (OSC 52), retitle the
window, clear the screen or move the cursor over earlier output. Control characters (C0 but tab and
newline, DEL, C1) are dropped one by one, so what is left of a sequence is inert text. The rule works
character by character, so text cleaned in streamed pieces equals the whole text cleaned at once,
which keeps every view of an answer identical.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """`text` without control characters (tab and newline kept)."""
    return _CONTROL.sub("", text)
