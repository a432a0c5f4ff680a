"""Where a full stop ends nothing: one list for points' titles (_phrases.py) and expansions (_tidy.py)."""

from __future__ import annotations

import re
from typing import Final

# As they stand before their full stop: "vs.", "e.g.", "Dr.", "St.".
_ANY_CASE: Final = ("vs", "e.g", "i.e", "etc")
# Capitalised only, as names and titles are written ("Dr. Lee", "Mt. Fuji").
_CAPITALISED: Final = ("Dr", "Mr", "Ms", "Mrs", "St", "Mt", "Jr", "Sr")

_AFTER_ONE = "".join(rf"(?<!\b{re.escape(form)})" for a in _ANY_CASE for form in (a, a.capitalize(), a.upper()))
_AFTER_ONE += "".join(rf"(?<!\b{a})" for a in _CAPITALISED)

# Put before a pattern's [.!?]: a "." that follows an abbreviation, an initial ("U.S."), a dotted
# abbreviation ("10 p.m.") or "No" before a number ("No. 5") ends nothing; "!" and "?" always end.
# Case-sensitive inside, whatever the flags of the pattern it goes in.
NOT_AFTER_ABBREVIATION: Final = rf"(?-i:(?:(?!\.)|{_AFTER_ONE}(?<!\b[A-Z])(?<![.][a-z])(?!(?<=\bNo)\.\s*\d)))"
