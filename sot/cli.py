"""The ``sot`` command line."""

from __future__ import annotations

import json
import sys
import traceback
from typing import Annotated, Any

import anyio
import typer

from . import _logging, constants
from ._sanitize import sanitize
from .client import Client
from .errors import ConfigurationError, SkeletonError, SotError
from .events import AnswerDone
from .options import check_number
from .result import Answer

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

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Skeleton-of-Thought: outline first, then expand every point in parallel.",
    epilog=_EPILOG,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"sot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    pass


def _as_met(exc: BaseException) -> tuple[str, str]:
    """(type name, message) of the error as the user should meet it: a wrong setup (nothing listening at
    --base-url, /v1 missing, a refused --api-key) is said the same way whichever call met it first (the
    outline's, with --mode sot; the answer's, with --mode sequential; the model list's, without --model)."""
    if isinstance(exc, SkeletonError) and getattr(exc, "setup_error", False):
        cause = getattr(type(exc), "cause_type", type(exc))
        return cause.__name__, exc.cause_message or str(exc)
    return type(exc).__name__, str(exc)


def fail(exc: BaseException, debug: bool, as_json: bool = False) -> None:
    """One line on stderr (with --json: one JSON object on stdout) and the error's exit code.

    A traceback only with --debug.
    """
    if debug:
        traceback.print_exception(exc)
    code = exc.exit_code if isinstance(exc, SotError) else 1
    kind, message = _as_met(exc)
    if as_json:
        error = {"type": kind, "message": message, "exit_code": code}
        typer.echo(json.dumps({"error": error}, ensure_ascii=False))
    else:
        typer.echo(f"sot: error: {message}", err=True)
    raise typer.Exit(code)


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


BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        metavar="<url>",
        envvar=constants.ENV_BASE_URL,
        help="OpenAI-compatible endpoint; repeat it to spread calls over several servers.",
    ),
]
Model = Annotated[str | None, typer.Option("--model", envvar=constants.ENV_MODEL, help="Model name.")]
ApiKey = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar=[constants.ENV_API_KEY, constants.ENV_OPENAI_API_KEY],
        help="API key (default: $SOT_API_KEY, then $OPENAI_API_KEY).",
        show_envvar=False,
    ),
]


GgufOption = Annotated[
    str | None, typer.Option("--gguf", envvar=constants.ENV_GGUF, help="Local backend: a GGUF model file.")
]
LlamaServerOption = Annotated[
    str | None,
    typer.Option("--llama-server", envvar=constants.ENV_LLAMA_SERVER, help="Local backend: llama-server binary."),
]


MaxPoints = Annotated[
    int | None,
    typer.Option(
        help=f"Most skeleton points kept (default {constants.DEFAULT_MAX_POINTS}; the embedded model's profile keeps "
        "fewer).",
        show_default=False,
    ),
]
ModeOption = Annotated[str, typer.Option("--mode", help="auto (router decides), sot or sequential.")]
MaxParallel = Annotated[int, typer.Option("--max-parallel", help="Most expansions in flight per answer.")]
PromptsDir = Annotated[str | None, typer.Option("--prompts", help="Directory of your own prompt templates.")]
MaxTokens = Annotated[int, typer.Option(help="Token cap of a sequential answer.")]
PointMaxTokens = Annotated[
    int | None,
    typer.Option(
        help=f"Token cap of each point's expansion (default {constants.SECTION_MAX_TOKENS}; "
        f"{constants.DEFAULT_POINT_MAX_TOKENS} with --brief).",
        show_default=False,
    ),
]
Brief = Annotated[
    bool,
    typer.Option("--brief", help="Short points (titles of a few words, 1-3 sentences each): fastest, less depth."),
]
Temperature = Annotated[float | None, typer.Option(help="Sampling temperature.")]
Timeout = Annotated[
    float,
    typer.Option(
        help="Total limit of each call attempt, seconds; a stream still writing then is ended, not restarted."
    ),
]
StallTimeout = Annotated[
    float,
    typer.Option(
        help="Seconds without data (keep-alives do not count) before a stream is retried, elsewhere if possible."
    ),
]
MaxRetries = Annotated[int, typer.Option(help="Retries per call.")]
Seed = Annotated[int | None, typer.Option(help="Sampling seed, where the server supports it.")]
AllowPartial = Annotated[
    bool, typer.Option(help="Keep a failed point's title, and text cut at --timeout, instead of failing.")
]
Pipeline = Annotated[bool, typer.Option(help="Expand points while the skeleton still streams.")]
ReasoningOption = Annotated[
    str,
    typer.Option(
        "--reasoning", help="Reasoning models: off, low or default (the server's), where the server has a knob."
    ),
]
KeepReasoning = Annotated[
    bool, typer.Option("--keep-reasoning", help="Keep a reasoning model's thinking in the Answer (never in its text).")
]
RouterOption = Annotated[str, typer.Option("--router", help="Router for --mode auto: learned, rules or llm.")]
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Model profile: generic (the model's text as written) or small (repairs for small local models; "
        "the embedded model's default).",
        show_default=False,
    ),
]
DialectOption = Annotated[
    str, typer.Option("--dialect", help="Server kind for constrained skeletons: openai, llama.cpp or vllm.")
]


def _debug(value: bool) -> bool:
    _logging.configure(value)
    return value


Debug = Annotated[
    bool,
    typer.Option(
        "--debug", "-v", callback=_debug, help="Log what sot does (retries, fallbacks, servers) and show tracebacks."
    ),
]


def _dialect(value: str) -> Any:
    if value not in ("openai", "llama.cpp", "vllm"):
        raise ConfigurationError(f"--dialect must be openai, llama.cpp or vllm, not {value!r}")
    return value


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question; '-' reads it from stdin.")],
    base_url: BaseUrl = None,
    model: Model = None,
    api_key: ApiKey = None,
    mode: ModeOption = "auto",
    max_points: MaxPoints = None,
    max_parallel: MaxParallel = constants.DEFAULT_MAX_PARALLEL,
    max_tokens: MaxTokens = constants.DEFAULT_MAX_TOKENS,
    point_max_tokens: PointMaxTokens = None,
    temperature: Temperature = None,
    seed: Seed = None,
    timeout: Timeout = constants.DEFAULT_TIMEOUT_S,
    stall_timeout: StallTimeout = constants.DEFAULT_STALL_TIMEOUT_S,
    max_retries: MaxRetries = constants.DEFAULT_MAX_RETRIES,
    allow_partial: AllowPartial = False,
    pipeline: Pipeline = True,
    router: RouterOption = constants.DEFAULT_ROUTER,
    profile: ProfileOption = None,
    brief: Brief = False,
    prompts: PromptsDir = None,
    reasoning: ReasoningOption = constants.DEFAULT_REASONING,
    keep_reasoning: KeepReasoning = False,
    dialect: DialectOption = "openai",
    gguf: GgufOption = None,
    llama_server: LlamaServerOption = None,
    stream: Annotated[bool, typer.Option("--stream", help="Print the answer as it forms, even when piped.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole Answer as one JSON object.")] = False,
    debug: Debug = False,
) -> None:
    """Answer QUESTION with Skeleton-of-Thought (or sequentially, where the router says so)."""
    try:
        text = read_question(question)
        client = Client(
            base_url=base_url,
            model=model,
            api_key=api_key,
            mode=mode,
            max_points=max_points,
            max_parallel=max_parallel,
            max_tokens=max_tokens,
            point_max_tokens=point_max_tokens,
            temperature=temperature,
            seed=seed,
            timeout=timeout,
            stall_timeout=stall_timeout,
            max_retries=max_retries,
            allow_partial=allow_partial,
            pipeline=pipeline,
            router=router,
            profile=profile,
            brief=brief,
            prompts_dir=prompts,
            reasoning=reasoning,
            keep_reasoning=keep_reasoning,
            dialect=_dialect(dialect),
            gguf=gguf,
            llama_server=llama_server,
        )
        warn_ignored_model(client, model)
        answer = anyio.run(_ask, client, text, as_json, stream)
    except KeyboardInterrupt:
        typer.echo("sot: interrupted", err=True)
        raise typer.Exit(130) from None
    except SotError as exc:
        fail(exc, debug, as_json)
        return
    if as_json:
        typer.echo(json.dumps(answer, ensure_ascii=False))


async def _ask(client: Client, question: str, as_json: bool, stream: bool) -> dict[str, Any] | None:
    from .render import LiveRenderer, PlainRenderer  # rich: only once there is something to show

    async with client:
        if as_json:
            answer = await client.ask(question)
            say_how_it_ended(answer)
            return answer.to_dict()
        renderer: LiveRenderer | PlainRenderer
        if sys.stdout.isatty() and not stream:
            status = "starting the local model server…" if client.uses_local_backend else "thinking…"
            renderer = LiveRenderer(status=status)
        else:
            renderer = PlainRenderer()
        done: Answer | None = None
        with renderer:
            async with client.stream(question) as answer_events:
                async for event in answer_events:
                    renderer(event)
                    if isinstance(event, AnswerDone):
                        done = event.answer
        if done is not None:
            say_how_it_ended(done)
        return None


def say_how_it_ended(answer: Answer) -> None:
    """One stderr line where the answer is not what was asked for: cut at a token limit, or not SoT."""
    if answer.fell_back:
        typer.echo(f"sot: answered sequentially: {sanitize(answer.reason)}", err=True)
    looped = any(call.looped for call in answer.calls)
    if answer.truncated and looped:
        typer.echo("sot: the model looped; the answer ends at its last whole sentence before the loop", err=True)
    elif answer.truncated:
        flag = "--max-tokens" if answer.mode == "sequential" else "--point-max-tokens"
        typer.echo(f"sot: the answer was cut at its token limit (raise {flag} for more)", err=True)


@app.command("route")
def route_command(
    question: Annotated[str | None, typer.Argument(help="The prompt to route; '-' reads stdin.")] = None,
    eval_file: Annotated[
        str | None, typer.Option("--eval", help="JSONL with question|prompt and sot_suitable|route: score the router.")
    ] = None,
    router: Annotated[
        str, typer.Option(help="learned (offline, default), rules (cue table) or llm (asks --base-url/--model).")
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
    from .router import LearnedRouter
    from .router.evaluate import evaluate, load_labelled

    async def run() -> None:
        async with Client(base_url=base_url, model=model, api_key=api_key, router=router) as client:
            if threshold is not None:
                check_number("--threshold", threshold, low=0.0, high=1.0)
            if threshold is not None and router != "learned":
                raise ConfigurationError("--threshold applies to --router learned only")
            decide = LearnedRouter(threshold) if threshold is not None else await client.router()
            if eval_file:
                report = await evaluate(load_labelled(eval_file), decide.route)
                typer.echo(report.text())
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


def _check_port(port: int, *, listen: bool) -> None:
    """Refuse a --port the server could not listen on now, before minutes of loading a model."""
    import errno
    import socket

    if not 1 <= port <= 65535:
        raise ConfigurationError(f"--port must be between 1 and 65535, not {port}")
    if not listen:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As servers bind: a port whose last connections linger in TIME_WAIT is free to them, so to us.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigurationError(
                    f"port {port} is already in use on 127.0.0.1: choose another --port, or leave it out for a free one"
                ) from None
            if exc.errno == errno.EACCES:
                raise ConfigurationError(
                    f"port {port} needs privileges to listen on: choose a --port of 1024 or above"
                ) from None
            raise ConfigurationError(f"cannot listen on port {port} ({exc.strerror}): choose another --port") from None


@app.command()
def serve(
    backend: Annotated[str, typer.Option(help="llama.cpp (local CPU, default) or vllm (GPU).")] = "llama.cpp",
    model: Annotated[str | None, typer.Option("--model", help="vllm: Hugging Face id or local path.")] = None,
    tensor_parallel_size: Annotated[int, typer.Option(help="vllm: GPUs per model replica (tensor parallel).")] = 1,
    pipeline_parallel_size: Annotated[int, typer.Option(help="vllm: pipeline stages.")] = 1,
    data_parallel_size: Annotated[int, typer.Option(help="vllm: model replicas.")] = 1,
    max_num_seqs: Annotated[int, typer.Option(help="vllm: sequences decoded at once (points x questions).")] = 160,
    gpu_memory_utilization: Annotated[float, typer.Option(help="vllm: share of GPU memory to use.")] = 0.90,
    max_model_len: Annotated[int | None, typer.Option(help="vllm: context length cap.")] = None,
    speculative_ngram: Annotated[int, typer.Option(help="vllm: n-gram speculative tokens (0: off).")] = 0,
    port: Annotated[int | None, typer.Option(help="Port to listen on, on 127.0.0.1 (default: a free one).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the server command and exit.")] = False,
    gguf: GgufOption = None,
    llama_server: LlamaServerOption = None,
    slots: Annotated[int, typer.Option(help="llama.cpp: parallel slots.")] = constants.DEFAULT_MAX_PARALLEL,
    threads: Annotated[int | None, typer.Option(help="llama.cpp: CPU threads.")] = None,
    debug: Debug = False,
) -> None:
    """Run a model server in the foreground until Ctrl-C: local llama.cpp (reused by `sot ask`) or vLLM."""
    import shlex

    from .backends.local import LocalConfig, serve_forever
    from .backends.process import free_port
    from .backends.vllm_server import VllmSettings, serve_vllm

    try:
        if port is not None:
            _check_port(port, listen=not dry_run)
        if backend == "vllm":
            settings = VllmSettings(
                model=model or "",
                tensor_parallel_size=tensor_parallel_size,
                pipeline_parallel_size=pipeline_parallel_size,
                data_parallel_size=data_parallel_size,
                max_num_seqs=max_num_seqs,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=max_model_len,
                ngram_speculative_tokens=speculative_ngram,
            )
            if dry_run:
                typer.echo(shlex.join(settings.command(port or 8000)))
                return
            anyio.run(lambda: serve_vllm(settings, port=port))
        elif backend == "llama.cpp":
            config = LocalConfig(gguf=gguf, binary=llama_server, slots=slots, threads=threads)
            if dry_run:
                typer.echo(shlex.join(config.settings(prepare=False).command(port or free_port())))
                return
            anyio.run(lambda: serve_forever(config, port=port))
        else:
            raise ConfigurationError(f"--backend must be llama.cpp or vllm, not {backend!r}")
    except KeyboardInterrupt:
        typer.echo("sot: server stopped", err=True)
        raise typer.Exit(130) from None
    except SotError as exc:
        fail(exc, debug)


def _plain_metavars(command: Any) -> None:
    """Flags take no value, so their help shows none (typer would print `<bool>`)."""
    for sub in getattr(command, "commands", {}).values():
        _plain_metavars(sub)
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


def main() -> None:
    from . import cli_batch, cli_proxy  # noqa: F401  (register batch, report, judge and proxy)

    command = typer.main.get_command(app)
    _plain_metavars(command)
    command()
