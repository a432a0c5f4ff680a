"""The ``sot`` command line: one module per command, registered here explicitly.

Command modules import only the shared parts (``_common``, ``_options``) and the library, never this
package, so there is no cycle. Importing ``sot.cli`` builds nothing: ``main()`` builds the command it
is given (or all), ``build()`` and ``sot.cli.app`` every one.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable

import typer

from ._app import EXIT_CODES, new_app, plain_metavars

# Each command and the module that defines it, in the order the help lists them.
COMMANDS = {
    "ask": "_ask",
    "batch": "_batch",
    "report": "_report",
    "judge": "_judge",
    "route": "_route",
    "serve": "_serve",
    "proxy": "_proxy",
}


def build(names: Iterable[str] = COMMANDS) -> typer.Typer:
    """The application with the commands `names` (every command by default)."""
    app = new_app()
    for name in names:
        app.command(name)(getattr(importlib.import_module(f"{__name__}.{COMMANDS[name]}"), name))
    return app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # the whole application, for those who drive it from Python (typer's CliRunner)
        globals()["app"] = whole = build()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    # Turning a command's options into click's takes milliseconds each: a command named on the command
    # line is the only one built (and its module the only one imported); anything else builds them all.
    named = sys.argv[1] if len(sys.argv) > 1 else ""
    command = typer.main.get_command(build([named] if named in COMMANDS else COMMANDS))
    plain_metavars(command)
    command()


__all__ = ["COMMANDS", "EXIT_CODES", "app", "build", "main"]
