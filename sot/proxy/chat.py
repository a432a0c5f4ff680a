"""Answering one chat request through the orchestrator: one ``chat.completion``, or SSE chunks as it forms.

Streamed text is the answer's ``AnswerText`` events (final, in reading order, exactly ``Answer.text``).
The status line waits for the first of them, so a request that fails before any text (a rejected key,
an unknown model, a rate limit) gets a real error status in OpenAI's shape; a failure after text has
gone out ends the stream with an ``error`` event and no ``[DONE]``, as OpenAI's API does.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from .. import events
from ..client import Client
from ..errors import SotError
from ..result import Answer
from .asgi import Sender
from .clients import ClientPool
from .metrics import Metrics
from .openai_errors import error_body, error_type, in_client_terms, status_of
from .translate import ChatPlan, chunk, completion, finish_reason, sot_summary, usage_payload

log = logging.getLogger("sot.proxy")


def _header_text(text: str) -> str:
    return " ".join(text.encode("ascii", "replace").decode().split())[:200]


def answer_headers(
    mode: str, reason: str, points: int, request_id: str, fan_out: events.FanOutChosen | None = None
) -> dict[str, str]:
    """Per-request metrics that are known when the response starts."""
    headers = {
        "x-request-id": request_id,
        "x-sot-mode": mode,
        "x-sot-points": str(points),
        "x-sot-route-reason": _header_text(reason),
    }
    if fan_out is not None:
        headers["x-sot-fan-out"] = f"{fan_out.mode}; width={fan_out.width}"
        headers["x-sot-fan-out-reason"] = _header_text(fan_out.reason)
    return headers


class ChatAnswer:
    """One SoT-served chat request."""

    def __init__(self, pool: ClientPool, metrics: Metrics, plan: ChatPlan, client_key: str | None) -> None:
        self.pool = pool
        self.metrics = metrics
        self.plan = plan
        self.client_key = client_key
        self.request_id = f"chatcmpl-sot-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.started = time.perf_counter()

    def _record(self, answer: Answer) -> None:
        self.metrics.count("sot_proxy_answers_total", mode=answer.mode)
        if answer.fan_out is not None:
            self.metrics.count("sot_proxy_fan_out_total", mode=answer.fan_out["mode"])
        if answer.extra_tokens is not None:
            self.metrics.count("sot_proxy_extra_prompt_tokens_total", answer.extra_tokens.prompt_tokens)
            self.metrics.count("sot_proxy_extra_completion_tokens_total", answer.extra_tokens.completion_tokens)
        for call in answer.calls:
            self.metrics.count("sot_proxy_upstream_calls_total", call.attempts or 1, purpose=call.purpose)

    async def _fail(self, sender: Sender, exc: SotError) -> None:
        status, code, headers = status_of(exc)
        message = in_client_terms(exc)
        self.metrics.count("sot_proxy_errors_total", type=error_type(status))
        log.info("request %s failed with %d: %s", self.request_id, status, message)
        if not sender.started:
            await sender.error(status, message, code, headers)
        else:
            await sender.event(error_body(message, status, code))
            await sender.end()

    async def __call__(self, sender: Sender) -> None:
        plan = self.plan
        try:
            async with self.pool.lease(plan.model, self.client_key) as client:
                if plan.stream:
                    await self._stream(sender, client)
                else:
                    answer = await client.ask(messages=[*plan.history, _user(plan)], **plan.overrides)
                    self._record(answer)
                    fan = answer.fan_out
                    chosen = events.FanOutChosen(fan["mode"], fan["width"], fan["reason"]) if fan else None
                    headers = answer_headers(answer.mode, answer.reason, len(answer.points), self.request_id, chosen)
                    headers["x-sot-total-ms"] = f"{answer.timings.total_s * 1000:.0f}"
                    self.metrics.observe("sot_proxy_first_content_seconds", time.perf_counter() - self.started)
                    await sender.json(200, completion(answer, self.request_id, self.created), headers)
        except SotError as exc:
            await self._fail(sender, exc)

    async def _stream(self, sender: Sender, client: Client) -> None:
        plan = self.plan
        mode, reason, points = "", "", 0
        fan_out: events.FanOutChosen | None = None
        model = plan.model
        answer_stream = client.stream(messages=[*plan.history, _user(plan)], **plan.overrides)

        async def send(*deltas: dict[str, Any]) -> None:
            # The status line goes out with the first text (one write: role chunk and text together).
            payloads = []
            if not sender.started and any("content" in delta for delta in deltas):
                self.metrics.observe("sot_proxy_first_content_seconds", time.perf_counter() - self.started)
            if not sender.started:
                await sender.start_events(answer_headers(mode, reason, points, self.request_id, fan_out))
                payloads.append(chunk(self.request_id, self.created, model, {"role": "assistant", "content": ""}))
            payloads += [chunk(self.request_id, self.created, model, delta) for delta in deltas]
            await sender.events(payloads)

        # Deltas not yet written. While the proxy is behind, the chunks of the events already produced
        # go out in one write: under load, a socket write per token is most of its work.
        pending: list[dict[str, Any]] = []
        async with answer_stream as answer_events:
            model = (await client.backend()).model or model
            async for event in answer_events:
                if isinstance(event, events.ModeChosen):
                    mode, reason = event.mode, event.reason
                elif isinstance(event, events.FanOutChosen):
                    fan_out = event
                elif isinstance(event, events.SkeletonDone):
                    points = len(event.points)
                elif isinstance(event, events.SkeletonPoint) and plan.outline:
                    pending.append({"reasoning_content": f"{event.index + 1}. {event.title}\n"})
                elif isinstance(event, events.AnswerText):
                    pending.append({"content": event.text})
                elif isinstance(event, events.AnswerDone):
                    if pending or not sender.started:
                        await send(*pending)
                    await self._finish(sender, event.answer)
                    return
                if pending and not answer_events.buffered:
                    await send(*pending)
                    pending.clear()

    async def _finish(self, sender: Sender, answer: Answer) -> None:
        self._record(answer)
        last = chunk(self.request_id, self.created, answer.model, {}, finish_reason(answer))
        last["sot"] = sot_summary(answer)
        payloads: list[Any] = [last]
        if self.plan.include_usage:
            usage = chunk(self.request_id, self.created, answer.model, {})
            usage["choices"] = []
            usage["usage"] = usage_payload(answer.usage, answer.extra_tokens)
            payloads.append(usage)
        payloads.append("[DONE]")
        await sender.events(payloads, last=True)


def _user(plan: ChatPlan) -> dict[str, str]:
    return {"role": "user", "content": plan.question}
