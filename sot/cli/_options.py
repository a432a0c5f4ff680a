"""Command-line options, each declared once.

Answer options are ``Options``' fields (sot/options.py): their flags, types, defaults and help are
derived here, so ``sot ask``, ``sot batch`` and ``sot proxy`` accept the same ones, spelt the same way,
and a new field is a new flag everywhere. Connection options (where answers come from) are ``Connection``'s
fields, declared once below and given to the commands that connect the same way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import Field, dataclass, field, fields
from typing import Annotated, Any, Literal, get_origin, get_type_hints

import typer

from .. import constants
from ..options import Options, flag

ANSWER_PANEL = "Answer options"
CONNECTION_PANEL = "Connection"

BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        metavar="<url>",
        envvar=constants.ENV_BASE_URL,
        help="OpenAI-compatible endpoint; repeat it to spread calls over several servers.",
        rich_help_panel=CONNECTION_PANEL,
    ),
]
Model = Annotated[
    str | None,
    typer.Option("--model", envvar=constants.ENV_MODEL, help="Model name.", rich_help_panel=CONNECTION_PANEL),
]
ApiKey = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar=[constants.ENV_API_KEY, constants.ENV_OPENAI_API_KEY],
        help="API key (default: $SOT_API_KEY, then $OPENAI_API_KEY).",
        show_envvar=False,
        rich_help_panel=CONNECTION_PANEL,
    ),
]
Dialect = Annotated[
    str,
    typer.Option(
        "--dialect",
        help="Server kind for constrained outlines: openai, llama.cpp or vllm.",
        rich_help_panel=CONNECTION_PANEL,
    ),
]
Gguf = Annotated[
    str | None,
    typer.Option(
        "--gguf", envvar=constants.ENV_GGUF, help="Local backend: a GGUF model file.", rich_help_panel=CONNECTION_PANEL
    ),
]
LlamaServer = Annotated[
    str | None,
    typer.Option(
        "--llama-server",
        envvar=constants.ENV_LLAMA_SERVER,
        help="Local backend: llama-server binary.",
        rich_help_panel=CONNECTION_PANEL,
    ),
]


@dataclass(frozen=True)
class Connection:
    """Where answers come from, as the connection flags give it: ``Client``'s own arguments, by name."""

    base_url: BaseUrl = None
    model: Model = None
    api_key: ApiKey = field(default=None, repr=False)  # never shown
    dialect: Dialect = constants.DEFAULT_DIALECT
    gguf: Gguf = None
    llama_server: LlamaServer = None


def _flags(spec: Field[Any], kind: Any) -> tuple[str, ...]:
    names = (flag(spec.name), *spec.metadata.get("aliases", ()))
    if kind is bool:
        # A flag that is off by default is switched on by its name alone; one that is on can be switched off.
        return (names[0],) if spec.default is False else (f"{names[0]}/--no-{names[0][2:]}",)
    return names


def option_parameter(spec: Field[Any], hint: Any) -> inspect.Parameter:
    """One ``Options`` field as a typer option: a Literal is a string (Options checks the choice)."""
    kind = str if get_origin(hint) is Literal else hint
    info = typer.Option(
        *_flags(spec, kind),
        help=spec.metadata["help"],
        show_default=spec.default is not None and kind is not bool,
        rich_help_panel=ANSWER_PANEL,
    )
    return inspect.Parameter(
        spec.name, inspect.Parameter.KEYWORD_ONLY, default=spec.default, annotation=Annotated[kind, info]
    )


@functools.cache
def answer_parameters() -> tuple[inspect.Parameter, ...]:
    """Every answer option, in ``Options``' order (worked out once for every command that offers them)."""
    hints = get_type_hints(Options)
    return tuple(option_parameter(spec, hints[spec.name]) for spec in fields(Options))


def _inserting(
    command: Callable[..., None], added: Sequence[inspect.Parameter], key: str, build: Callable[[dict[str, Any]], Any]
) -> Callable[..., None]:
    """`command` with the parameters `added`, whose values reach it as one argument `key` (`build` of
    them). Typer reads a command's parameters from its signature, so the wrapper's signature is the
    command's own (``--debug`` last) with `added` inserted before ``--debug``."""
    names = [parameter.name for parameter in added]
    own = inspect.signature(command, eval_str=True).parameters.values()
    own_params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own if p.name != key]
    last = [p for p in own_params if p.name == "debug"]
    params = [*(p for p in own_params if p.name != "debug"), *added, *last]

    @functools.wraps(command)
    def run(**values: Any) -> None:
        command(**{key: build({name: values.pop(name) for name in names})}, **values)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def with_answer_options(command: Callable[..., None]) -> Callable[..., None]:
    """`command` offered every answer option as a flag; it receives their values as one ``options`` dict
    (keys: ``Options``' fields), ready for ``Client(**options)``."""
    return _inserting(command, answer_parameters(), "options", dict)


def with_connection_options(command: Callable[..., None]) -> Callable[..., None]:
    """`command` offered the connection flags; it receives them as one ``connection`` (a ``Connection``)."""
    flags = get_type_hints(Connection, include_extras=True)
    added = [
        inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=spec.default, annotation=flags[spec.name])
        for spec in fields(Connection)
    ]
    return _inserting(command, added, "connection", lambda values: Connection(**values))
