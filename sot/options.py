"""Options of one answer, validated once."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypedDict

from . import constants
from .backends.base import Reasoning
from .errors import ConfigurationError

RequestedMode = Literal["auto", "sot", "sequential"]


def flag(name: str) -> str:
    """An option's name as the command line spells it (``max_points`` -> ``--max-points``)."""
    return "--" + name.replace("_", "-")


def check_number(
    label: str, value: float, *, low: float | None = None, high: float | None = None, low_open: bool = False
) -> float:
    """`value` if it is a finite number within bounds; else a one-line ConfigurationError naming the option
    by `label` (``--timeout`` for a command-line option).

    NaN and infinities are refused everywhere: they pass comparisons silently (NaN) or turn deadlines
    into never (inf).
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigurationError(f"{label} must be a finite number, not {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
        raise ConfigurationError(f"{label} must be {bound}, not {value:g}")
    if high is not None and value > high:
        raise ConfigurationError(f"{label} must be at most {high:g}, not {value:g}")
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


@dataclass(frozen=True)
class Options:
    """Options of one answer (the keyword arguments of ``Client``, ``ask`` and ``stream``), validated once."""

    mode: RequestedMode = "auto"
    # None: DEFAULT_MAX_POINTS asked for, and as many kept as the profile keeps (the small one: fewer).
    max_points: int | None = None
    max_point_chars: int = constants.MAX_POINT_CHARS
    max_parallel: int = constants.DEFAULT_MAX_PARALLEL
    max_tokens: int = constants.DEFAULT_MAX_TOKENS
    # None: the answer's style's (sot/profiles.py: a full answer's sections, or brief points).
    point_max_tokens: int | None = None
    skeleton_max_tokens: int | None = None
    # The SoT paper's short points (titles of a few words, one to three sentences each) instead of a full
    # answer's planned sections: the fastest answer, at the cost of depth.
    brief: bool = False
    temperature: float | None = constants.DEFAULT_TEMPERATURE
    seed: int | None = None
    timeout: float = constants.DEFAULT_TIMEOUT_S
    stall_timeout: float = constants.DEFAULT_STALL_TIMEOUT_S
    max_retries: int = constants.DEFAULT_MAX_RETRIES
    retry_after_cap: float = constants.RETRY_AFTER_CAP_S
    allow_partial: bool = False
    pipeline: bool = True
    constrain_skeleton: bool = True
    # None: the server's own (none). On the bundled 135M model a penalty of 0.5 traded verbatim loops, which
    # the parser drops, for reworded repeats it cannot see (eval/results/outline_penalty.md).
    skeleton_frequency_penalty: float | None = None
    # The model profile (sot/profiles.py): "generic" keeps every model's text as written; "small" is the
    # bundled 135M model's repairs. None: what the backend recommends (the embedded server's bundled
    # model: small), else generic.
    profile: str | None = None
    router: Literal["learned", "rules", "llm"] = constants.DEFAULT_ROUTER
    prompts_dir: str | None = None
    reasoning: Reasoning = constants.DEFAULT_REASONING
    keep_reasoning: bool = False

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "sot", "sequential"):
            raise ConfigurationError(f"--mode must be auto, sot or sequential, not {self.mode!r}")
        if self.reasoning not in constants.REASONING_LEVELS:
            raise ConfigurationError(f"--reasoning must be off, low or default, not {self.reasoning!r}")
        if self.profile is not None and self.profile not in constants.PROFILES:
            raise ConfigurationError(f"--profile must be one of {', '.join(constants.PROFILES)}, not {self.profile!r}")
        if self.router not in constants.ROUTERS:
            raise ConfigurationError(f"--router must be one of {', '.join(constants.ROUTERS)}, not {self.router!r}")
        for name in ("max_parallel", "max_tokens", "point_max_tokens"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigurationError(f"{flag(name)} must be at least 1")
        for name in ("skeleton_max_tokens", "max_point_chars"):  # Python-only options
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigurationError(f"{name} must be at least 1")
        if self.max_points is not None and self.max_points < constants.MIN_POINTS:
            raise ConfigurationError(f"--max-points must be at least {constants.MIN_POINTS}")
        if self.max_retries < 0:
            raise ConfigurationError("--max-retries must not be negative")
        check_number("--timeout", self.timeout, low=0.0, low_open=True)
        check_number("--stall-timeout", self.stall_timeout, low=0.0, low_open=True)
        check_number("retry_after_cap", self.retry_after_cap, low=0.0)
        if self.temperature is not None:
            check_number("--temperature", self.temperature, low=0.0, high=2.0)
        if self.skeleton_frequency_penalty is not None:
            check_number("skeleton_frequency_penalty", self.skeleton_frequency_penalty, low=-2.0, high=2.0)

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
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ConfigurationError(f"unknown option(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


class OptionOverrides(TypedDict, total=False):
    """The keyword arguments that set ``Options`` (on ``Client``, ``ask`` and ``stream``), for type checkers.

    Its keys are ``Options``' fields (a test keeps the two equal); ``None`` keeps the current value.
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
    keep_reasoning: bool | None
