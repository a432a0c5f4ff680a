"""The command line's logging: sot's own records on stderr, third-party chatter kept down.

The library only logs (under the ``sot`` logger, with a ``NullHandler`` so an embedding application
decides what to show); the CLI shows warnings by default and everything with ``--debug`` / ``-v``:
retries with their wait and cause, request adaptations, server start and stop, fallbacks.
"""

from __future__ import annotations

import logging
import sys

# Libraries that log URLs or headers at DEBUG: never louder than WARNING, even with --debug.
QUIET_LIBRARIES = ("httpx", "httpcore", "openai", "hpack", "urllib3", "filelock", "asyncio")


def configure(debug: bool) -> None:
    """Route the ``sot`` logger to stderr: DEBUG with `debug`, else WARNING. Safe to call again."""
    logger = logging.getLogger("sot")
    logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    if not any(getattr(h, "_sot_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("sot: %(levelname)s: %(message)s"))
        handler._sot_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
