"""Where a full stop ends nothing: one list for points' titles (sot/skeleton.py) and expansions (sot/_tidy.py)."""

from __future__ import annotations

import re
from typing import Final

# Written as they stand before their full stop: "vs.", "e.g.", "Dr.", "St.", "No. 5".
_ANY_CASE: Final = ("vs", "e.g", "i.e", "etc")
# Capitalised only: "the St. Lawrence", but "Just say no." ends its sentence.
_CAPITALISED: Final = ("Dr", "Mr", "Ms", "Mrs", "St", "Mt", "Jr", "Sr", "No")

# Put before a pattern's [.!?]: the stop is not after an abbreviation, nor after an initial ("U.S.").
# Case-sensitive inside, whatever the flags of the pattern it goes in.
NOT_AFTER_ABBREVIATION: Final = (
    "(?-i:"
    + "".join(rf"(?<!\b{re.escape(a)})(?<!\b{re.escape(a.capitalize())})" for a in _ANY_CASE)
    + "".join(rf"(?<!\b{a})" for a in _CAPITALISED)
    + r"(?<!\b[A-Z]))"
)
