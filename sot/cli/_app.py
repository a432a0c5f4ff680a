"""The ``sot`` Typer application's root: its help, exit codes and --version (sot/cli/__init__.py adds the commands)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

# What each exit code means (README's "Retries and errors" has the same table; a test keeps them equal).
# Each line fits 80 columns: the help shows them one per line.
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "done"),
    (1, "an unexpected error"),
    (2, "usage: a bad option or value, a file not found, no --model given"),
    (3, "the server is unreachable or failing (5xx, cut streams): check --base-url"),
    (4, "a call timed out: raise --timeout or --stall-timeout"),
    (5, "rate limited (HTTP 429)"),
    (6, "authentication failed (HTTP 401, 403): check --api-key"),
    (7, "request refused (HTTP 4xx): a wrong --model, no /v1, a prompt too long"),
    (8, "the embedded local server could not be found or started"),
    (9, "no outline could be obtained (a server failure keeps its code above)"),
    (10, "a point failed (a server failure keeps its code above)"),
    (11, "batch, judge: some records failed; --resume re-runs them"),
    (130, "interrupted (Ctrl-C)"),
)
_EPILOG = "Exit codes:\n\n" + "\n".join(f"{code:>3}  {meaning}" for code, meaning in EXIT_CODES)


def new_app() -> typer.Typer:
    """The application with its root options and no command yet (sot/cli/__init__.py adds them)."""
    app = typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        help="Skeleton-of-Thought: outline first, then expand every point in parallel.",
        epilog=_EPILOG,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    return app


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"sot {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    pass


def plain_metavars(command: Any) -> None:
    """Flags take no value, so their help shows none (typer would print `<bool>`)."""
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    make_help_option = command.get_help_option

    def help_option(ctx: Any) -> Any:
        option = make_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
