"""``sot ask``: one answer, shown as it forms (or as JSON)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from .._sanitize import sanitize
from ..client import Client
from ..errors import SotError
from ..events import AnswerDone
from ..render import PlainRenderer
from ..result import Answer
from ._common import Debug, connect, fail, interrupted, read_question
from ._options import Connection, with_answer_options, with_connection_options

if TYPE_CHECKING:
    from .._live import LiveRenderer


@with_connection_options
@with_answer_options
def ask(
    question: Annotated[str, typer.Argument(help="The question; '-' reads it from stdin.")],
    stream: Annotated[bool, typer.Option("--stream", help="Print the answer as it forms, even when piped.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole Answer as one JSON object.")] = False,
    *,
    connection: Connection,
    options: dict[str, Any],
    debug: Debug = False,
) -> None:
    """Answer QUESTION with Skeleton-of-Thought (or sequentially, where the router says so)."""
    try:
        text = read_question(question)
        client = connect(connection, options)
        answer = anyio.run(_ask, client, text, as_json, stream)
    except KeyboardInterrupt:
        raise interrupted() from None
    except SotError as exc:
        fail(exc, debug, as_json)
        return
    if as_json:
        typer.echo(json.dumps(answer, ensure_ascii=False))


async def _ask(client: Client, question: str, as_json: bool, stream: bool) -> dict[str, Any] | None:
    async with client:
        if as_json:
            answer = await client.ask(question)
            say_how_it_ended(answer)
            return answer.to_dict()
        done = await _show(client, question, live=sys.stdout.isatty() and not stream)
        if done is not None:
            say_how_it_ended(done)
        return None


async def _show(client: Client, question: str, *, live: bool) -> Answer | None:
    """The answer drawn as it forms (a live view on a terminal, plain text in order elsewhere)."""
    renderer: LiveRenderer | PlainRenderer
    if live:
        from .._live import LiveRenderer  # rich: only for a terminal, once there is something to show

        renderer = LiveRenderer(status="starting the local model server…" if client.uses_local_backend else "thinking…")
    else:
        renderer = PlainRenderer()
    done: Answer | None = None
    with renderer:
        async with client.stream(question) as answer_events:
            async for event in answer_events:
                renderer(event)
                if isinstance(event, AnswerDone):
                    done = event.answer
    return done


def say_how_it_ended(answer: Answer) -> None:
    """One stderr line where the answer is not what was asked for: cut at a token limit, or not SoT."""
    if answer.fell_back:
        typer.echo(f"sot: answered sequentially: {sanitize(answer.reason)}", err=True)
    looped = any(call.looped for call in answer.calls)
    if answer.truncated and looped:
        typer.echo("sot: the model looped; the answer ends where the loop began", err=True)
    elif answer.truncated:
        flag = "--max-tokens" if answer.mode == "sequential" else "--point-max-tokens"
        typer.echo(f"sot: the answer was cut at its token limit (raise {flag} for more)", err=True)
