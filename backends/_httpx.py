"""httpx, imported without its command-line client.

``import httpx`` also imports ``httpx._main`` (the ``httpx`` command) when its optional dependencies
are installed, and with them rich's progress bars, pygments and click: about a tenth of ``sot ask``'s
start-up, for a command sot never runs. An entry of None in ``sys.modules`` makes that one import
fail, which httpx handles (its ``main`` then says the CLI extras are missing); the entry is removed
at once, so ``import httpx._main`` still works later for anyone who wants the command.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
    try:
        import httpx
    finally:
        del sys.modules["httpx._main"]
else:
    import httpx

__all__ = ["httpx"]
