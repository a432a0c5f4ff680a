"""What every command shares: failing in one line with the right exit code, reading the question,
the --debug flag, and errors respelt from the library's terms into flags."""

from __future__ import annotations

import json
import sys
import traceback
from typing import Annotated, Any

import typer

from .. import _logging, constants
from ..client import Client
from ..errors import ConfigurationError, SkeletonError, SotError
from ..options import Spelling, flag
from ._options import Connection


def _debug(value: bool) -> bool:
    _logging.configure(value)
    return value


Debug = Annotated[
    bool,
    typer.Option(
        "--debug", "-v", callback=_debug, help="Log what sot does (retries, fallbacks, servers) and show tracebacks."
    ),
]


def _as_met(exc: BaseException, spell: Spelling) -> tuple[str, str]:
    """(type name, message) of the error as the user should meet it, in flags: a wrong setup (nothing
    listening at the address, /v1 missing, a refused key) is said the same way whichever call met it
    first (the outline's, with --mode sot; the answer's, with --mode sequential; the model list's)."""
    if not isinstance(exc, SotError):
        return type(exc).__name__, str(exc)
    if isinstance(exc, SkeletonError) and getattr(exc, "setup_error", False):
        cause = getattr(type(exc), "cause_type", type(exc))
        return cause.__name__, exc.message_in(spell, exc.cause_message, exc.cause_own_from)
    return type(exc).__name__, exc.message_in(spell)


def fail(exc: BaseException, debug: bool, as_json: bool = False, spell: Spelling = flag) -> None:
    """One line on stderr (with --json: one JSON object on stdout) and the error's exit code.

    A traceback only with --debug.
    """
    if debug:
        traceback.print_exception(exc)
    code = exc.exit_code if isinstance(exc, SotError) else 1
    kind, message = _as_met(exc, spell)
    if as_json:
        error = {"type": kind, "message": message, "exit_code": code}
        typer.echo(json.dumps({"error": error}, ensure_ascii=False))
    else:
        typer.echo(f"sot: error: {message}", err=True)
    raise typer.Exit(code)


def connect(connection: Connection, options: dict[str, Any], **more: Any) -> Client:
    """The Client the connection flags and answer options describe (a --model the embedded backend
    would ignore is said on stderr)."""
    client = Client(**vars(connection), **more, **options)
    warn_ignored_model(client, connection.model)
    return client


def warn_ignored_model(client: Client, model: str | None) -> None:
    """The embedded backend serves its own model: a --model there would be silently ignored, so say so."""
    if model and model != constants.LOCAL_MODEL_NAME and client.uses_local_backend:
        typer.echo(
            f"sot: warning: --model {model!r} is ignored by the embedded local backend "
            "(give --base-url for a server that has it, or --gguf FILE for another local model)",
            err=True,
        )


def read_question(question: str) -> str:
    if question == "-":
        try:
            # Bytes, decoded strictly: Python's stdin may escape bad bytes instead of failing here.
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigurationError(
                f"the question on stdin is not UTF-8 text ({exc.reason} at byte {exc.start}): "
                "convert it first, e.g. iconv -f LATIN1 -t UTF-8"
            ) from None
    else:
        text = question
    if not text.strip():
        raise ConfigurationError("the question is empty")
    return text.strip()


def interrupted(message: str = "sot: interrupted") -> typer.Exit:
    """Ctrl-C: one line, and exit code 130 as shells expect."""
    typer.echo(message, err=True)
    return typer.Exit(130)
