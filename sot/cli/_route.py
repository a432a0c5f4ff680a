"""``sot route``: where a prompt would go (SoT or sequential), or how well a router scores on a file."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import typer

from .. import constants
from ..client import Client
from ..errors import ConfigurationError, SotError
from ..options import check_number
from ..router import chosen_router
from ._common import Debug, fail, read_question
from ._options import ApiKey, BaseUrl, Model


def route(
    question: Annotated[str | None, typer.Argument(help="The prompt to route; '-' reads stdin.")] = None,
    eval_file: Annotated[
        str | None, typer.Option("--eval", help="JSONL with question|prompt and sot_suitable|route: score the router.")
    ] = None,
    router: Annotated[
        str,
        typer.Option(
            help="auto (learned where the router extra is installed, else rules), learned (offline), rules (cue "
            "table) or llm (asks --base-url/--model)."
        ),
    ] = constants.DEFAULT_ROUTER,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Learned router: P(SoT-suitable) needed for SoT (default: the model's, tuned for few false SoT)."
        ),
    ] = None,
    base_url: BaseUrl = None,
    model: Model = None,
    api_key: ApiKey = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
    debug: Debug = False,
) -> None:
    """Show whether a prompt goes to SoT or to sequential decoding, or score the router on a file."""

    async def run() -> None:
        async with Client(base_url=base_url, model=model, api_key=api_key, router=router) as client:
            decide = await _router(client, router, threshold)
            if eval_file:
                from ..router.evaluate import evaluate, load_labelled

                typer.echo((await evaluate(load_labelled(eval_file), decide.route)).text())
                return
            if question is None:
                raise ConfigurationError("give a question, or --eval FILE")
            decision = await decide.route(read_question(question))
            if as_json:
                typer.echo(json.dumps(decision.to_dict()))
            else:
                typer.echo(f"{decision.mode} (confidence {decision.confidence:.2f}): {decision.reason}")

    try:
        anyio.run(run)
    except SotError as exc:
        fail(exc, debug)


async def _router(client: Client, router: str, threshold: float | None) -> Any:
    if threshold is None:
        return await client.router()
    check_number("threshold", threshold, low=0.0, high=1.0)
    if chosen_router(router) != "learned":
        raise ConfigurationError("--threshold applies to the learned router only (--router learned)")
    from ..router import LearnedRouter

    return LearnedRouter(threshold)
