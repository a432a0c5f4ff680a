"""One logical model call: the project's only retry loop, with a total deadline per attempt.

Retries 408/409/429/5xx, connection resets, stalls and cut or malformed streams with jittered
exponential backoff; a server's ``Retry-After`` / ``retry-after-ms`` is honoured up to a cap, and
beyond the cap the call fails fast with a message naming the wait asked for. Everything else (400,
401, 403, 404, 422, a refused connection, an HTML page ...) is raised at once.
A retried stream starts over: its partial text is dropped, and ``on_restart`` tells the caller.
A request the server refused for a field it does not take, adapted by the backend (a
``BadRequestError`` with ``adaptation``), is sent again at once, without backoff and without
counting as a retry (at most ``MAX_ADAPTATIONS_PER_CALL`` per call).

Two deadlines: a stream with no data for ``stall_timeout_s`` is stalled (the backend raises a retryable
``BackendTimeoutError``, and an endpoint pool takes that server out of rotation); the total deadline
``timeout_s`` of an attempt ends a stream that is still producing. Such a stream is never restarted
from scratch: the call fails with an error naming ``--timeout``, or, with ``keep_partial``
(``--allow-partial``), returns the text it had, logged as a warning.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from . import constants
from .backends.base import Backend, ChatRequest
from .errors import BackendError, BackendTimeoutError, ProtocolError, RateLimitError
from .options import RetryPolicy
from .result import CallRecord, Usage

OnDelta = Callable[[str], None]
# Asked after each piece of text: True leaves the stream there, its rest not wanted (an outline with
# all the points it may keep); closing the stream stops the server writing it.
Enough = Callable[[], bool]
# The finish a stream left that way is given here (no server sends it).
_LEFT_EARLY = "left early"
_NO_LIMIT = contextlib.nullcontext()
OnRestart = Callable[[int], None]
logger = logging.getLogger(__name__)


def _log_done(record: CallRecord, chars: int) -> None:
    """One --debug line per finished call: what it was, how long, how it ended."""
    point = f" {record.index + 1}" if record.index is not None else ""
    tokens = record.usage.completion_tokens if record.usage else "?"
    ended = "closed early" if record.left_early else f"finish {record.finish_reason}"
    logger.debug(
        "%s%s call: %.2f s, %d attempt(s), %s tokens, %d chars, %s",
        record.purpose,
        point,
        record.end_s - record.start_s,
        record.attempts,
        tokens,
        chars,
        ended,
    )


@dataclass
class CallOutcome:
    text: str
    record: CallRecord
    capped: bool = False  # the stream ended at its token limit (finish reason "length")


@dataclass
class _Thinking:
    """One attempt's reasoning text (kept apart from its answer) and the request's adaptations."""

    parts: list[str] = field(default_factory=list)
    first_s: float | None = None
    last_s: float | None = None
    adaptations: list[str] = field(default_factory=list)

    def add(self, text: str, now: float) -> None:
        self.parts.append(text)
        self.first_s = now if self.first_s is None else self.first_s
        self.last_s = now

    @property
    def seconds(self) -> float:
        return self.last_s - self.first_s if self.first_s is not None and self.last_s is not None else 0.0


def _retry_after(exc: BaseException | None) -> float | None:
    value = getattr(exc, "retry_after", None)
    return float(value) if value is not None else None


def _adapted(exc: BaseException | None) -> bool:
    return bool(getattr(exc, "adaptation", ()))


def should_retry(exc: BaseException, policy: RetryPolicy) -> bool:
    if _adapted(exc):
        return True
    if not isinstance(exc, BackendError) or not exc.retryable:
        return False
    wait = _retry_after(exc)
    return wait is None or wait <= policy.retry_after_cap_s


def backoff_seconds(policy: RetryPolicy, attempt: int, exc: BaseException | None) -> float:
    """Seconds before attempt `attempt + 1`: the server's Retry-After, else jittered exponential."""
    if _adapted(exc):
        return 0.0
    wait = _retry_after(exc)
    if wait is not None:
        return wait
    base: float = min(policy.backoff_max_s, policy.backoff_initial_s * 2.0 ** (attempt - 1))
    return base + random.uniform(0, policy.jitter_s)


class Caller:
    """Runs calls against one backend under one retry policy; times are relative to `origin`."""

    def __init__(
        self,
        backend: Backend,
        policy: RetryPolicy,
        origin: float | None = None,
        limiter: anyio.CapacityLimiter | None = None,
        keep_reasoning: bool = False,
    ) -> None:
        self.keep_reasoning = keep_reasoning
        self.backend = backend
        self.policy = policy
        self.origin = time.perf_counter() if origin is None else origin
        # Shared across answers (batch runs): bounds the requests in flight to the backend. Held
        # for one attempt only, never across a backoff sleep, so nested use cannot deadlock.
        self.limiter = limiter

    def now(self) -> float:
        return time.perf_counter() - self.origin

    async def call(
        self,
        request: ChatRequest,
        *,
        purpose: str,
        index: int | None = None,
        on_delta: OnDelta | None = None,
        on_restart: OnRestart | None = None,
        require_text: bool = True,
        enough: Enough | None = None,
    ) -> CallOutcome:
        policy = self.policy
        start = self.now()
        attempts = 0
        adaptations = 0
        refused = False  # the last attempt was refused before any text: an adapted re-send is no restart
        first_token: list[float] = []
        usage: list[Usage] = []
        finishes: list[str] = []
        thinking = _Thinking()

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            number = state.attempt_number
            seconds = backoff_seconds(policy, number, exc)
            logger.info("%s call: attempt %d failed (%s); retrying in %.1f s", purpose, number, exc, seconds)
            return seconds

        def stop(state: RetryCallState) -> bool:
            if adaptations > constants.MAX_ADAPTATIONS_PER_CALL:
                return True
            return state.attempt_number - adaptations >= policy.max_retries + 1

        async def attempt() -> str:
            nonlocal attempts, adaptations, thinking, refused
            attempts += 1
            if attempts > 1 and on_restart is not None and not refused:
                on_restart(attempts)
            refused = False
            first_token.clear()
            usage.clear()
            finishes.clear()
            thinking = _Thinking()
            parts: list[str] = []
            try:
                async with self.limiter if self.limiter is not None else _NO_LIMIT:
                    alive = await self._stream(
                        stalling, parts, first_token, usage, finishes, on_delta, thinking, enough
                    )
            except BackendError as exc:
                refused = _adapted(exc)
                adaptations += refused
                asked = _retry_after(exc)  # a wait beyond the cap fails fast, saying what was asked
                cap = policy.retry_after_cap_s
                if exc.retryable and asked is not None and asked > cap:
                    raise RateLimitError(
                        f"{exc}; the server asked to wait {asked:g} s, more than the {cap:g} s sot waits: "
                        "try again later",
                        status_code=exc.status_code,
                        retry_after=asked,
                        request_id=exc.request_id,
                    ) from None
                raise
            if alive is not None:
                self._deadline_passed(alive, parts)
            text = "".join(parts)
            if require_text and not text.strip():
                raise ProtocolError("the model returned an empty answer")
            return text

        stalling = replace(request, stall_timeout=min(policy.stall_timeout_s, policy.timeout_s))
        retrying = AsyncRetrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception(lambda exc: should_retry(exc, policy)),
            sleep=anyio.sleep,
            reraise=True,
        )
        text: str = await retrying(attempt)
        record = CallRecord(
            purpose=purpose,
            index=index,
            attempts=attempts,
            start_s=start,
            end_s=self.now(),
            first_token_s=first_token[0] if first_token else None,
            usage=usage[-1] if usage else None,
            adaptations=list(thinking.adaptations),
            reasoning_chars=sum(len(part) for part in thinking.parts),
            reasoning_s=thinking.seconds,
            reasoning="".join(thinking.parts) if self.keep_reasoning and thinking.parts else None,
            left_early=finishes[-1:] == [_LEFT_EARLY],
            finish_reason=next((f for f in reversed(finishes) if f != _LEFT_EARLY), None),
        )
        _log_done(record, len(text))
        return CallOutcome(text=text, record=record, capped=finishes[-1:] == ["length"])

    def _deadline_passed(self, alive: bool, parts: list[str]) -> None:
        """The total deadline passed: retry a stream that never answered, end one that was producing."""
        timeout = self.policy.timeout_s
        if not alive:
            raise BackendTimeoutError(f"no answer within the {timeout:g} s deadline (--timeout)")
        if self.policy.keep_partial and "".join(parts).strip():
            logger.warning("the answer was cut at the %g s deadline (--timeout); keeping its partial text", timeout)
            return
        raise BackendTimeoutError(
            f"the answer was still being written when the {timeout:g} s deadline passed: raise --timeout"
            + ("" if self.policy.keep_partial else ", or keep partial text with --allow-partial"),
            retryable=False,
        )

    async def _stream(
        self,
        request: ChatRequest,
        parts: list[str],
        first_token: list[float],
        usage: list[Usage],
        finishes: list[str],
        on_delta: OnDelta | None,
        thinking: _Thinking,
        enough: Enough | None,
    ) -> bool | None:
        """Read one attempt; None when it completed, else whether it had produced anything by the deadline."""
        alive = False
        with anyio.move_on_after(self.policy.timeout_s) as scope:
            async with aclosing(self.backend.stream_chat(request)) as chunks:
                async for chunk in chunks:
                    alive = True
                    thinking.adaptations.extend(chunk.adaptations)
                    if chunk.reasoning:  # never reaches on_delta, the parser or the answer text
                        thinking.add(chunk.reasoning, self.now())
                    if chunk.usage is not None:
                        usage.append(chunk.usage)
                    if chunk.finish_reason:
                        finishes.append(chunk.finish_reason)
                    if chunk.text:
                        if not first_token:
                            first_token.append(self.now())
                        parts.append(chunk.text)
                        if on_delta is not None:
                            on_delta(chunk.text)
                        if enough is not None and enough():
                            finishes.append(_LEFT_EARLY)
                            break
        return alive if scope.cancelled_caught else None
