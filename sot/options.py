"""Options of one answer, validated once."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypedDict, get_args

from . import constants
from .backends.base import Reasoning
from .errors import ConfigurationError

RequestedMode = Literal["auto", "sot", "sequential"]
RouterName = Literal["auto", "learned", "rules", "llm"]


def flag(name: str) -> str:
    """An option's name as the command line spells it (``max_points`` -> ``--max-points``; a field may
    name its own, as ``prompts_dir`` does: ``--prompts``)."""
    return _OWN_FLAGS.get(name) or "--" + name.replace("_", "-")


Spelling = Callable[[str], str]


def spelling(renamed: Mapping[str, str]) -> Spelling:
    """How a command spells option names: its own flag where it renames one, else ``flag(name)``."""
    return lambda name: renamed.get(name) or flag(name)


def check_number(
    name: str, value: float, *, low: float | None = None, high: float | None = None, low_open: bool = False
) -> float:
    """`value` if it is a finite number within bounds; else a one-line ConfigurationError naming the
    option `name` as the library spells it (front ends respell it: ``SotError.message_in``).

    NaN and infinities are refused everywhere: they pass comparisons silently (NaN) or turn deadlines
    into never (inf).
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigurationError(f"'{name}' must be a finite number, not {value!r}", options=(name,))
    if low is not None and (value <= low if low_open else value < low):
        bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
        raise ConfigurationError(f"'{name}' must be {bound}, not {value:g}", options=(name,))
    if high is not None and value > high:
        raise ConfigurationError(f"'{name}' must be at most {high:g}, not {value:g}", options=(name,))
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """How the one retry loop retries a call: attempts, per-attempt deadline, backoff."""

    max_retries: int = constants.DEFAULT_MAX_RETRIES
    timeout_s: float = constants.DEFAULT_TIMEOUT_S
    retry_after_cap_s: float = constants.RETRY_AFTER_CAP_S
    backoff_initial_s: float = constants.BACKOFF_INITIAL_S
    backoff_max_s: float = constants.BACKOFF_MAX_S
    jitter_s: float = constants.BACKOFF_JITTER_S
    stall_timeout_s: float = constants.DEFAULT_STALL_TIMEOUT_S
    # At the total deadline, return the text a still-producing stream had instead of failing.
    keep_partial: bool = False


def _about(help: str, **more: Any) -> dict[str, Any]:
    """What every front end says of an option (the CLI's help, its flag's aliases): a field's metadata."""
    return {"help": help, **more}


@dataclass(frozen=True)
class Options:
    """Options of one answer (the keyword arguments of ``Client``, ``ask`` and ``stream``), validated once.

    This is the one declaration of every answer option: ``sot ask``, ``sot batch`` and ``sot proxy``
    derive their flags, defaults and help from these fields (sot/cli/_options.py).
    """

    mode: RequestedMode = field(default="auto", metadata=_about("auto (the router decides), sot or sequential."))
    # None: the style's number asked for (a plan's sections, or brief points), and as many kept as the
    # profile keeps (a longer plan than asked, up to DEFAULT_MAX_POINTS; the small profile: fewer).
    max_points: int | None = field(
        default=None,
        metadata=_about(
            f"Outline points asked for and kept (default: {constants.PLAN_MAX_SECTIONS} sections asked, a longer "
            f"plan kept up to {constants.DEFAULT_MAX_POINTS}; {constants.DEFAULT_MAX_POINTS} brief points; "
            "the embedded model's profile keeps fewer)."
        ),
    )
    max_point_chars: int = field(
        default=constants.MAX_POINT_CHARS, metadata=_about("Longest outline point kept, in characters.")
    )
    max_parallel: int = field(
        default=constants.DEFAULT_MAX_PARALLEL, metadata=_about("Most expansions in flight per answer.")
    )
    max_tokens: int = field(default=constants.DEFAULT_MAX_TOKENS, metadata=_about("Token cap of a sequential answer."))
    # None: the answer's style's (sot/profiles.py: a full answer's sections, or brief points).
    point_max_tokens: int | None = field(
        default=None,
        metadata=_about(
            f"Token cap of each point's expansion (default {constants.SECTION_MAX_TOKENS}; "
            f"{constants.DEFAULT_POINT_MAX_TOKENS} with --brief and on the embedded model's profile)."
        ),
    )
    skeleton_max_tokens: int | None = field(
        default=None,
        metadata=_about(
            f"Token cap of the outline (default {constants.PLAN_MAX_TOKENS}; "
            f"{constants.SKELETON_MAX_TOKENS} with --brief and on the embedded model's profile)."
        ),
    )
    # The SoT paper's short points (titles of a few words, one to three sentences each) instead of a full
    # answer's planned sections: the fastest answer, at the cost of depth.
    brief: bool = field(
        default=False, metadata=_about("Short points (titles of a few words, 1-3 sentences each): fastest, less depth.")
    )
    temperature: float | None = field(
        default=constants.DEFAULT_TEMPERATURE, metadata=_about("Sampling temperature (default: the server's).")
    )
    seed: int | None = field(default=None, metadata=_about("Sampling seed, where the server supports it."))
    timeout: float = field(
        default=constants.DEFAULT_TIMEOUT_S,
        metadata=_about(
            "Total limit of each call attempt, seconds; a stream still writing then is ended, not restarted."
        ),
    )
    stall_timeout: float = field(
        default=constants.DEFAULT_STALL_TIMEOUT_S,
        metadata=_about(
            "Seconds without data (keep-alives do not count) before a stream is retried, elsewhere if possible."
        ),
    )
    max_retries: int = field(default=constants.DEFAULT_MAX_RETRIES, metadata=_about("Retries per call."))
    retry_after_cap: float = field(
        default=constants.RETRY_AFTER_CAP_S,
        metadata=_about("Longest Retry-After waited for, seconds; a longer one fails at once."),
    )
    allow_partial: bool = field(
        default=False, metadata=_about("Keep a failed point's title, and text cut at the timeout, instead of failing.")
    )
    pipeline: bool = field(default=True, metadata=_about("Expand points while the outline still streams."))
    constrain_skeleton: bool = field(
        default=True,
        metadata=_about("Constrain the outline's shape on servers that can (a grammar or a regular expression)."),
    )
    # None: the server's own (none). On the bundled 135M model a penalty of 0.5 traded verbatim loops, which
    # the parser drops, for reworded repeats it cannot see (eval/results/outline_penalty.md).
    skeleton_frequency_penalty: float | None = field(
        default=None, metadata=_about("Frequency penalty of the outline call (-2 to 2).")
    )
    # The model profile (sot/profiles.py): "generic" keeps every model's text as written; "small" is the
    # bundled 135M model's repairs. None: what the backend recommends (the embedded server's bundled
    # model: small), else generic.
    profile: str | None = field(
        default=None,
        metadata=_about(
            "Model profile: generic (the model's text as written) or small (repairs for small local models; "
            "the embedded model's default)."
        ),
    )
    router: RouterName = field(
        default=constants.DEFAULT_ROUTER,
        metadata=_about(
            "Router for mode auto: learned (needs the router extra), rules, llm (asks the model), "
            "or auto (learned where installed, else rules)."
        ),
    )
    prompts_dir: str | None = field(
        default=None,
        metadata=_about("Directory of your own prompt templates.", flag="--prompts", aliases=("--prompts-dir",)),
    )
    reasoning: Reasoning = field(
        default=constants.DEFAULT_REASONING,
        metadata=_about("Reasoning models: off, low or default (the server's), where the server has a knob."),
    )
    # Where the server publishes its load (vLLM's /metrics, llama.cpp's /slots), a busy one gets a narrower
    # fan-out or, in mode auto, a sequential answer: SoT's extra streams would only queue behind its work.
    load_aware: bool = field(
        default=True,
        metadata=_about(
            "Read the server's load (vLLM /metrics, llama.cpp /slots) and narrow the fan-out, or in mode auto "
            "answer sequentially, when it has no free batch slots for the points."
        ),
    )
    keep_reasoning: bool = field(
        default=False, metadata=_about("Keep a reasoning model's thinking in the Answer (never in its text).")
    )

    def __post_init__(self) -> None:
        self._check_present()
        self._check_choices()
        for name in ("max_parallel", "max_tokens", "point_max_tokens", "skeleton_max_tokens", "max_point_chars"):
            if getattr(self, name) is not None:
                check_number(name, getattr(self, name), low=1)
        if self.max_points is not None:
            check_number("max_points", self.max_points, low=constants.MIN_POINTS)
        check_number("max_retries", self.max_retries, low=0)
        check_number("timeout", self.timeout, low=0.0, low_open=True)
        check_number("stall_timeout", self.stall_timeout, low=0.0, low_open=True)
        check_number("retry_after_cap", self.retry_after_cap, low=0.0)
        if self.temperature is not None:
            check_number("temperature", self.temperature, low=0.0, high=2.0)
        if self.skeleton_frequency_penalty is not None:
            check_number("skeleton_frequency_penalty", self.skeleton_frequency_penalty, low=-2.0, high=2.0)

    def _check_present(self) -> None:
        """None only where a field allows it (None is how a per-call override resets one that does)."""
        for spec in fields(self):
            if getattr(self, spec.name) is None and "None" not in str(spec.type):
                raise ConfigurationError(f"'{spec.name}' needs a value, not None", options=(spec.name,))

    def _check_choices(self) -> None:
        for name, allowed in (
            ("mode", get_args(RequestedMode)),
            ("reasoning", get_args(Reasoning)),
            ("router", get_args(RouterName)),
            ("profile", (None, *constants.PROFILES)),
        ):
            value = getattr(self, name)
            if value not in allowed:
                choices = ", ".join(str(choice) for choice in allowed if choice is not None)
                raise ConfigurationError(f"'{name}' must be one of {choices}, not {value!r}", options=(name,))

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            timeout_s=self.timeout,
            retry_after_cap_s=self.retry_after_cap,
            stall_timeout_s=self.stall_timeout,
            keep_partial=self.allow_partial,
        )

    def updated(self, **changes: Any) -> Options:
        """These options with `changes` applied as given: None resets a field that may be None (the
        server's own temperature, no seed) and is refused for one that may not."""
        known = {spec.name for spec in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ConfigurationError(
                f"unknown option(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
            )
        return replace(self, **changes)


_OWN_FLAGS: dict[str, str] = {spec.name: spec.metadata["flag"] for spec in fields(Options) if "flag" in spec.metadata}


class OptionOverrides(TypedDict, total=False):
    """The keyword arguments that set ``Options`` (on ``Client``, ``ask`` and ``stream``), for type checkers.

    Its keys are ``Options``' fields (a test keeps the two equal); a key given is applied as given (None
    resets a field that may be None).
    """

    mode: str | None  # auto, sot or sequential (checked when Options is built, as CLI strings are)
    max_points: int | None
    max_point_chars: int | None
    max_parallel: int | None
    max_tokens: int | None
    point_max_tokens: int | None
    skeleton_max_tokens: int | None
    brief: bool | None
    temperature: float | None
    seed: int | None
    timeout: float | None
    stall_timeout: float | None
    max_retries: int | None
    retry_after_cap: float | None
    allow_partial: bool | None
    pipeline: bool | None
    constrain_skeleton: bool | None
    skeleton_frequency_penalty: float | None
    profile: str | None  # generic or small
    router: str | None  # learned, rules or llm
    prompts_dir: str | None
    reasoning: str | None  # off, low or default
    load_aware: bool | None
    keep_reasoning: bool | None
