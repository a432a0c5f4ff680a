"""Limits for user templates (``--prompts DIR``): bounded time, bounded text, bounded ranges.

jinja2's sandbox blocks unsafe attribute access but not work: ``range(10**8)`` raises a bare
OverflowError, ``'x' * 10**9`` allocates a gigabyte, a loop can run for ever. ``LimitedSandbox``
checks every operation the sandbox intercepts (calls, attribute and item access, ``*``, ``**``,
``%``, ``+``, filters) against a per-render deadline and a size cap, refuses sizes before they are
allocated where it can, and caps the rendered output. Whatever a template raises at run time comes
out as a ``jinja2.TemplateError`` (``SecurityError`` for a limit), which the caller turns into one line.
"""

from __future__ import annotations

import functools
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from . import constants

_SIZED = (str, bytes, list, tuple, dict, set, frozenset)
# A width or precision in a %-format or str.format spec that would build a huge string.
_WIDE_FORMAT = re.compile(r"%[-#0 +]*\d{7,}|%[-#0 +]*\d*\.\d{7,}|\{[^{}]*:[^{}]*\d{7,}")
_MAX_INT_BITS = 100_000
_state = threading.local()


def _limit(message: str) -> SecurityError:
    return SecurityError(
        f"{message} (templates are limited to {constants.TEMPLATE_RENDER_TIMEOUT_S:g} s and "
        f"{constants.TEMPLATE_MAX_CHARS:,} characters)"
    )


def _tick() -> None:
    deadline = getattr(_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise _limit("the template ran too long")


def _check_value(value: object) -> None:
    if isinstance(value, _SIZED) and len(value) > constants.TEMPLATE_MAX_CHARS:
        raise _limit(f"the template built a value of {len(value):,} items")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _MAX_INT_BITS:
        raise _limit("the template built a huge number")


def _check_format(pattern: object) -> None:
    """A %-format or str.format pattern must not ask for a width that builds a huge string."""
    if isinstance(pattern, str) and _WIDE_FORMAT.search(pattern):
        raise _limit("the template asked for a huge format width")


def _check_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    _tick()
    for value in (*args, *kwargs.values()):
        _check_value(value)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > constants.TEMPLATE_MAX_CHARS:
            raise _limit(f"the template passed a size of {value:,}")


def _predicted_size(operator: str, left: Any, right: Any) -> float:
    """The size a binary operation would build, checked before it is built."""
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, _SIZED) and isinstance(n, int):
                return len(seq) * max(n, 0)
        if isinstance(left, int) and isinstance(right, int):
            return (left.bit_length() + right.bit_length()) / _MAX_INT_BITS * constants.TEMPLATE_MAX_CHARS
    if operator == "**" and isinstance(left, int) and isinstance(right, int | float) and abs(left) > 1:
        return max(right, 0) * math.log2(abs(left)) / _MAX_INT_BITS * constants.TEMPLATE_MAX_CHARS
    if operator == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
        return len(left) + len(right)
    return 0


def _guard(function: Callable[..., Any], formats: bool = False) -> Callable[..., Any]:
    @functools.wraps(function)  # keeps jinja's pass_context / pass_environment markers
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _check_args(args, kwargs)
        if formats and args:
            _check_format(args[0])
        result = function(*args, **kwargs)
        _check_value(result)
        return result

    return guarded


class LimitedTemplate(jinja2.Template):
    def render(self, *args: Any, **kwargs: Any) -> str:
        if getattr(_state, "deadline", None) is not None:  # an include inside a render: the outer budget holds
            return super().render(*args, **kwargs)
        _state.deadline = time.monotonic() + constants.TEMPLATE_RENDER_TIMEOUT_S
        try:
            return "".join(self._capped(self.generate(*args, **kwargs)))
        except jinja2.TemplateError:
            raise
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError, MemoryError) as exc:
            raise jinja2.TemplateRuntimeError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            _state.deadline = None

    @staticmethod
    def _capped(pieces: Iterator[str]) -> Iterator[str]:
        total = 0
        for piece in pieces:
            total += len(piece)
            if total > constants.TEMPLATE_MAX_CHARS:
                raise _limit("the template's output is too long")
            _tick()
            yield piece


class LimitedSandbox(SandboxedEnvironment):
    """A ``SandboxedEnvironment`` with time, size and range limits (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    template_class = LimitedTemplate

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals["range"] = self._range
        self.filters = {name: _guard(f, formats=name == "format") for name, f in self.filters.items()}

    @staticmethod
    def _range(*args: int) -> range:
        _tick()
        numbers = range(*args)
        if len(numbers) > constants.TEMPLATE_MAX_RANGE:
            raise _limit(f"range of {len(numbers):,} numbers (at most {constants.TEMPLATE_MAX_RANGE:,})")
        return numbers

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        _tick()
        if _predicted_size(operator, left, right) > constants.TEMPLATE_MAX_CHARS:
            raise _limit(f"the template's {operator!r} would build too large a value")
        if operator == "%":
            _check_format(left)
        result = super().call_binop(context, operator, left, right)
        _check_value(result)
        return result

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_args(args, kwargs)
        _check_value(getattr(__obj, "__self__", None))  # a list grown by append
        result = super().call(__context, __obj, *args, **kwargs)
        _check_value(result)
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_format(value.__self__)  # the pattern of str.format / format_map
        return wrapped

    def getattr(self, obj: Any, attribute: str) -> Any:
        _tick()
        value = super().getattr(obj, attribute)
        _check_value(value)
        return value

    def getitem(self, obj: Any, argument: Any) -> Any:
        _tick()
        value = super().getitem(obj, argument)
        _check_value(value)
        return value
