"""The ``sot`` command line: one module per command, registered here explicitly.

Command modules import only the shared parts (``_common``, ``_options``) and the library, never this
package, so importing any one of them, or ``sot.cli``, builds the whole command line with no cycle.
"""

from __future__ import annotations

import typer

from . import _ask, _batch, _judge, _proxy, _report, _route, _serve
from ._app import EXIT_CODES, app, plain_metavars

app.command("ask")(_ask.ask)
app.command("batch")(_batch.batch)
app.command("report")(_report.report)
app.command("judge")(_judge.judge)
app.command("route")(_route.route)
app.command("serve")(_serve.serve)
app.command("proxy")(_proxy.proxy)


def main() -> None:
    command = typer.main.get_command(app)
    plain_metavars(command)
    command()


__all__ = ["EXIT_CODES", "app", "main"]
