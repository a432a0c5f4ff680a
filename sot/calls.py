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
import functools
import logging
import random
import time
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from . import constants
from .backends.base import Backend, ChatChunk, ChatRequest
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
class _Attempt:
    """What one attempt's stream gave: answer text, reasoning (kept apart from it), usage, how it ended."""

    parts: list[str] = field(default_factory=list)
    first_token_s: float | None = None
    usage: Usage | None = None
    finishes: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    thinking_first_s: float | None = None
    thinking_last_s: float | None = None
    adaptations: list[str] = field(default_factory=list)
    alive: bool = False  # it produced something (text, reasoning or any chunk)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def think(self, text: str, now: float) -> None:
        self.thinking.append(text)
        self.thinking_first_s = now if self.thinking_first_s is None else self.thinking_first_s
        self.thinking_last_s = now

    @property
    def thinking_s(self) -> float:
        if self.thinking_first_s is None or self.thinking_last_s is None:
            return 0.0
        return self.thinking_last_s - self.thinking_first_s

    @property
    def finish_reason(self) -> str | None:
        return next((f for f in reversed(self.finishes) if f != _LEFT_EARLY), None)


@dataclass
class _Tally:
    """One logical call's attempts so far: how many, how many were adapted re-sends, and the last one."""

    attempts: int = 0
    adaptations: int = 0
    refused: bool = False  # the last attempt was refused before any text: an adapted re-send is no restart
    last: _Attempt = field(default_factory=_Attempt)


@dataclass(frozen=True)
class _Spec:
    """What a call asks for and who hears of it (the keyword arguments of ``Caller.call``)."""

    request: ChatRequest
    purpose: str
    index: int | None
    on_delta: OnDelta | None
    on_restart: OnRestart | None
    require_text: bool
    enough: Enough | None


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
        stalling = replace(request, stall_timeout=min(self.policy.stall_timeout_s, self.policy.timeout_s))
        spec = _Spec(stalling, purpose, index, on_delta, on_restart, require_text, enough)
        start, tally = self.now(), _Tally()
        retrying = AsyncRetrying(
            stop=functools.partial(_out_of_attempts, self.policy, tally),
            wait=functools.partial(_backoff, self.policy, purpose),
            retry=retry_if_exception(lambda exc: should_retry(exc, self.policy)),
            sleep=anyio.sleep,
            reraise=True,
        )
        text: str = await retrying(self._attempt, spec, tally)
        record = self._record(spec, tally, start)
        _log_done(record, len(text))
        return CallOutcome(text=text, record=record, capped=tally.last.finishes[-1:] == ["length"])

    async def _attempt(self, spec: _Spec, tally: _Tally) -> str:
        tally.attempts += 1
        if tally.attempts > 1 and spec.on_restart is not None and not tally.refused:
            spec.on_restart(tally.attempts)
        tally.refused = False
        tally.last = attempt = _Attempt()
        try:
            async with self.limiter if self.limiter is not None else _NO_LIMIT:
                ended = await self._stream(spec, attempt)
        except BackendError as exc:
            tally.refused = _adapted(exc)
            tally.adaptations += tally.refused
            capped = self._beyond_cap(exc)
            if capped is not None:
                raise capped from None
            raise
        text = attempt.text
        if not ended:
            self._deadline_passed(attempt.alive, text)
        if spec.require_text and not text.strip():
            raise ProtocolError("the model returned an empty answer")
        return text

    def _beyond_cap(self, exc: BackendError) -> RateLimitError | None:
        """A wait beyond the cap fails fast, saying what was asked."""
        asked, cap = _retry_after(exc), self.policy.retry_after_cap_s
        if not (exc.retryable and asked is not None and asked > cap):
            return None
        return RateLimitError(
            f"{exc}; the server asked to wait {asked:g} s, more than the {cap:g} s sot waits: try again later",
            status_code=exc.status_code,
            retry_after=asked,
            request_id=exc.request_id,
        )

    def _record(self, spec: _Spec, tally: _Tally, start: float) -> CallRecord:
        last = tally.last
        return CallRecord(
            purpose=spec.purpose,
            index=spec.index,
            attempts=tally.attempts,
            start_s=start,
            end_s=self.now(),
            first_token_s=last.first_token_s,
            usage=last.usage,
            adaptations=list(last.adaptations),
            reasoning_chars=sum(len(part) for part in last.thinking),
            reasoning_s=last.thinking_s,
            reasoning="".join(last.thinking) if self.keep_reasoning and last.thinking else None,
            left_early=last.finishes[-1:] == [_LEFT_EARLY],
            finish_reason=last.finish_reason,
        )

    def _deadline_passed(self, alive: bool, text: str) -> None:
        """The total deadline passed: retry a stream that never answered, end one that was producing."""
        timeout = self.policy.timeout_s
        if not alive:
            raise BackendTimeoutError(f"no answer within the {timeout:g} s deadline ('timeout')", options=("timeout",))
        if self.policy.keep_partial and text.strip():
            logger.warning("the answer was cut at the %g s deadline (timeout); keeping its partial text", timeout)
            return
        raise BackendTimeoutError(
            f"the answer was still being written when the {timeout:g} s deadline passed: raise 'timeout'"
            + ("" if self.policy.keep_partial else ", or keep partial text with 'allow_partial'"),
            retryable=False,
            options=("timeout", "allow_partial"),
        )

    async def _stream(self, spec: _Spec, attempt: _Attempt) -> bool:
        """Read one attempt into `attempt`; False where the total deadline ended it first."""
        with anyio.move_on_after(self.policy.timeout_s) as scope:
            async with aclosing(self.backend.stream_chat(spec.request)) as chunks:
                async for chunk in chunks:
                    if self._take(chunk, spec, attempt):
                        attempt.finishes.append(_LEFT_EARLY)
                        break
        return not scope.cancelled_caught

    def _take(self, chunk: ChatChunk, spec: _Spec, attempt: _Attempt) -> bool:
        """One chunk into the attempt; True where the caller has enough and the stream may be left."""
        attempt.alive = True
        attempt.adaptations.extend(chunk.adaptations)
        if chunk.reasoning:  # never reaches on_delta, the parser or the answer text
            attempt.think(chunk.reasoning, self.now())
        if chunk.usage is not None:
            attempt.usage = chunk.usage
        if chunk.finish_reason:
            attempt.finishes.append(chunk.finish_reason)
        if not chunk.text:
            return False
        if attempt.first_token_s is None:
            attempt.first_token_s = self.now()
        attempt.parts.append(chunk.text)
        if spec.on_delta is not None:
            spec.on_delta(chunk.text)
        return spec.enough is not None and spec.enough()


def _out_of_attempts(policy: RetryPolicy, tally: _Tally, state: RetryCallState) -> bool:
    """Stop after the policy's retries; adapted re-sends do not count, up to their own cap."""
    if tally.adaptations > constants.MAX_ADAPTATIONS_PER_CALL:
        return True
    return state.attempt_number - tally.adaptations >= policy.max_retries + 1


def _backoff(policy: RetryPolicy, purpose: str, state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    seconds = backoff_seconds(policy, state.attempt_number, exc)
    logger.info("%s call: attempt %d failed (%s); retrying in %.1f s", purpose, state.attempt_number, exc, seconds)
    return seconds
