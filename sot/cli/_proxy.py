"""``sot proxy``: an OpenAI-compatible server that answers through Skeleton-of-Thought."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from .. import constants
from ..backends.openai_compat import dialect_named
from ..errors import ConfigurationError, SotError
from ..proxy.settings import ProxySettings, proxy_flag
from ._common import Debug, fail, interrupted
from ._options import Dialect, Gguf, LlamaServer, Model, with_answer_options

Upstream = Annotated[
    list[str] | None,
    typer.Option(
        "--upstream",
        "--base-url",
        envvar=constants.ENV_BASE_URL,
        help="OpenAI-compatible upstream; repeat it for an endpoint pool. None: the embedded local backend.",
    ),
]
ClientKey = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar=constants.ENV_PROXY_API_KEY,
        help=f"Key clients must present (Authorization: Bearer KEY); default ${constants.ENV_PROXY_API_KEY}, else none.",
        show_envvar=False,
    ),
]
UpstreamKey = Annotated[
    str | None,
    typer.Option(
        "--upstream-api-key",
        envvar=[constants.ENV_API_KEY, constants.ENV_OPENAI_API_KEY],
        help="Key sent upstream (default: $SOT_API_KEY, then $OPENAI_API_KEY); none: the client's own is forwarded.",
        show_envvar=False,
    ),
]
_EXTRA = "sot proxy needs the proxy extra (Starlette and uvicorn): pip install 'sot-llm[proxy]'"


@with_answer_options
def proxy(
    upstream: Upstream = None,
    model: Model = None,
    upstream_api_key: UpstreamKey = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = constants.PROXY_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on (0: a free one).")] = constants.PROXY_PORT,
    api_key: ClientKey = None,
    dialect: Dialect = constants.DEFAULT_DIALECT,
    gguf: Gguf = None,
    llama_server: LlamaServer = None,
    max_concurrent: Annotated[
        int, typer.Option(help="Chat requests answered at once.")
    ] = constants.PROXY_MAX_CONCURRENT,
    max_queued: Annotated[
        int, typer.Option(help="Requests that may wait for a slot; past that: 429.")
    ] = constants.PROXY_MAX_QUEUED,
    queue_timeout: Annotated[
        float, typer.Option(help="Longest wait for a slot, seconds; then 429.")
    ] = constants.PROXY_QUEUE_TIMEOUT_S,
    max_upstream_calls: Annotated[
        int, typer.Option(help="Upstream calls in flight, all requests together.")
    ] = constants.PROXY_MAX_UPSTREAM_CALLS,
    max_body_bytes: Annotated[
        int, typer.Option(help="Largest request body accepted.")
    ] = constants.PROXY_MAX_BODY_BYTES,
    *,
    options: dict[str, Any],
    debug: Debug = False,
) -> None:
    """Serve an OpenAI-compatible API (chat completions through SoT, the rest passed through) until Ctrl-C."""
    try:
        _require_extra()
        settings = ProxySettings(
            upstream=tuple(upstream or ()),
            model=model,
            upstream_api_key=upstream_api_key or None,
            dialect=dialect_named(dialect),
            gguf=gguf,
            llama_server=llama_server,
            api_key=api_key or None,
            max_concurrent=max_concurrent,
            max_queued=max_queued,
            queue_timeout_s=queue_timeout,
            max_upstream_calls=max_upstream_calls,
            max_body_bytes=max_body_bytes,
            options=options,
        )
        _serve(settings, host, port, api_key, debug)
    except KeyboardInterrupt:
        raise interrupted("sot: proxy stopped") from None
    except SotError as exc:
        fail(exc, debug, spell=proxy_flag)


def _require_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ConfigurationError(_EXTRA) from None


def _serve(settings: ProxySettings, host: str, port: int, api_key: str | None, debug: bool) -> None:
    from ..proxy import serve
    from ..proxy.server import is_loopback, listen_sockets, url_of

    # The port first, before the local backend's seconds (or minutes) of starting: in use, it fails now.
    sockets = listen_sockets(host, port)
    url = url_of(host, sockets)
    warning = _open_proxy_warning(api_key, is_loopback(sockets), url)
    if warning:
        typer.echo(f"sot: warning: {warning}", err=True)
    where = ", ".join(map(_shown, settings.upstream)) if settings.upstream else "the embedded local backend"

    def ready() -> None:
        typer.echo(f"sot proxy: {url} -> {where} (Ctrl-C stops it)", err=True)

    serve(settings, sockets=sockets, on_ready=ready, log_level="info" if debug else "warning")


def _shown(url: str) -> str:
    """An upstream as it may be printed: no user info (sent as Basic auth), no query (keys travel there too)."""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL:
        return "an upstream"
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))


def _open_proxy_warning(api_key: str | None, loopback: bool, url: str) -> str | None:
    """Why anyone may use this proxy (and what it spends upstream), where that is likely a mistake."""
    how = f"set one with --api-key KEY or ${constants.ENV_PROXY_API_KEY}"
    # click drops an empty environment variable, so an empty $SOT_PROXY_API_KEY arrives as None.
    empty = api_key == "" or (api_key is None and os.environ.get(constants.ENV_PROXY_API_KEY) == "")
    if empty:
        return f"the client key is empty, so clients need none: anyone who can reach {url} may use it; {how}"
    if api_key is None and not loopback:
        return f"no client key, and {url} is reachable from other machines: anyone there may use it; {how}"
    return None
