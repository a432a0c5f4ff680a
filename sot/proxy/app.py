"""The proxy's ASGI application (Starlette): routes, the client key, body limits and the pass-through.

- ``POST /v1/chat/completions``: answered through the orchestrator (router per request), or sent
  upstream untouched when SoT cannot serve it (tools, n > 1, logprobs, JSON output, non-text parts).
- ``GET /v1/models``: the model(s) served, each also as ``MODEL+sot`` and ``MODEL+seq``.
- ``GET /health``, ``GET /metrics`` (Prometheus text).
- Any other ``/v1/...`` path (``/v1/embeddings`` ...): relayed to the upstream as it came.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .. import constants
from ..errors import SotError
from .asgi import Exchange, Sender
from .chat import ChatAnswer
from .clients import ClientPool
from .limits import Gate, TooLarge, authorized, bearer, read_body
from .metrics import Metrics
from .openai_errors import error_body, error_type, in_client_terms, in_proxy_terms, status_of
from .passthrough import Forwarder
from .settings import ProxySettings
from .translate import passthrough_reason, plan, split_model, without_sot_fields

log = logging.getLogger("sot.proxy")
_VARIANTS = ("", "+sot", "+seq")


class Proxy:
    """The state every request shares: settings, clients, the gate, the forwarder, the metrics."""

    def __init__(self, settings: ProxySettings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.gate = Gate(settings.max_concurrent, settings.max_queued, settings.queue_timeout_s)
        self.pool = ClientPool(settings)
        # Pass-through requests share the bound on upstream calls through the size of their pool.
        self.forwarder = Forwarder(
            settings.upstream_api_key, settings.forwards_client_auth, max_connections=settings.max_upstream_calls
        )
        self.metrics.gauge("sot_proxy_requests_active", lambda: self.gate.active)
        self.metrics.gauge("sot_proxy_requests_queued", lambda: self.gate.queued)
        # Told why the proxy could not start (the local backend), where whoever runs it stops it and
        # reports the error itself; unset, the failure fails the ASGI lifespan as usual.
        self.on_startup_error: Callable[[SotError], None] | None = None

    def error(
        self, status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None
    ) -> Response:
        self.metrics.count("sot_proxy_errors_total", type=error_type(status))
        return JSONResponse(error_body(message, status, code), status_code=status, headers=headers)

    def client_key(self, request: Request) -> str | None:
        return bearer(request.headers.get("authorization")) if self.settings.forwards_client_auth else None

    def denied(self, request: Request) -> Response | None:
        if authorized(request.headers.get("authorization"), self.settings.api_key):
            return None
        return self.error(401, "a valid API key is needed: send Authorization: Bearer <key>", "invalid_api_key")

    async def body(self, request: Request) -> bytes | Response:
        try:
            return await read_body(request, self.settings.max_body_bytes)
        except TooLarge:
            limit = self.settings.max_body_bytes
            return self.error(413, f"the request body is over the proxy's limit of {limit} bytes", "request_too_large")

    def exchange(self, work: Any) -> Exchange:
        return Exchange(
            work, self.gate, on_busy=lambda: self.metrics.count("sot_proxy_errors_total", type="rate_limit_error")
        )

    def relay(self, request: Request, body: bytes) -> Exchange:
        async def work(sender: Sender) -> None:
            urls = await self.pool.upstream_urls()
            url = self.forwarder.url(urls, request.url.path, request.url.query)
            await self.forwarder.relay(sender, request.method, url, request.headers, body)

        return self.exchange(work)

    # Endpoints ------------------------------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        if (denied := self.denied(request)) is not None:
            return denied
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        try:
            payload = json.loads(body)
        except ValueError:
            return self.error(400, "the request body is not valid JSON")
        if not isinstance(payload, dict):
            return self.error(400, "the request body must be a JSON object")
        reason = passthrough_reason(payload)
        if reason is not None:
            self.metrics.count("sot_proxy_passthrough_total", reason=reason)
            return self.relay(request, without_sot_fields(payload) or body)
        try:
            chat_plan = plan(payload)
        except SotError as exc:
            status, code, headers = status_of(exc)
            return self.error(status, in_client_terms(exc), code, headers)
        return self.exchange(ChatAnswer(self.pool, self.metrics, chat_plan, self.client_key(request)))

    async def models(self, request: Request) -> Response:
        if (denied := self.denied(request)) is not None:
            return denied
        s = self.settings
        names = [s.model] if s.model else [constants.LOCAL_MODEL_NAME] if s.local else None
        if names is None:
            try:
                async with self.pool.lease("", self.client_key(request)) as client:
                    names = [(await client.backend()).model]
            except SotError:
                return self.relay(request, b"")  # several models upstream: its own list, untouched
        data = [
            {"id": f"{split_model(name)[0]}{variant}", "object": "model", "created": 0, "owned_by": "sot"}
            for name in names
            for variant in _VARIANTS
        ]
        return JSONResponse({"object": "list", "data": data})

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "backend": "local" if self.settings.local else "upstream"})

    async def metrics_page(self, request: Request) -> Response:
        if (denied := self.denied(request)) is not None:
            return denied
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4")

    async def other(self, request: Request) -> Response:
        if (denied := self.denied(request)) is not None:
            return denied
        if not request.url.path.startswith("/v1/"):
            return self.error(404, f"no such endpoint: {request.method} {request.url.path}", "not_found")
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        self.metrics.count("sot_proxy_passthrough_total", reason="endpoint")
        return self.relay(request, body)

    async def aclose(self) -> None:
        await self.pool.aclose()
        await self.forwarder.aclose()


def _timed(proxy: Proxy, name: str, endpoint: Any) -> Any:
    """Count the endpoint's requests by status and time them (an exchange: until its last byte)."""

    async def handler(request: Request) -> Response:
        started = time.perf_counter()
        response: Response = await endpoint(request)
        if isinstance(response, Exchange):
            response.done = lambda status: _count(proxy, name, status, started)
        else:
            _count(proxy, name, response.status_code, started)
        return response

    return handler


def _count(proxy: Proxy, name: str, status: int, started: float) -> None:
    proxy.metrics.count("sot_proxy_requests_total", endpoint=name, status=str(status))
    proxy.metrics.observe("sot_proxy_request_seconds", time.perf_counter() - started, endpoint=name)


def create_app(settings: ProxySettings) -> Starlette:
    """The proxy as an ASGI app (run it with uvicorn, or ``sot proxy``)."""
    proxy = Proxy(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            try:
                await proxy.pool.start()  # the local backend, once, shared by every request
            except SotError as exc:
                if proxy.on_startup_error is None:
                    raise
                exc.args = (in_proxy_terms(exc), *exc.args[1:])
                proxy.on_startup_error(exc)
            yield
        finally:
            await proxy.aclose()

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [
        Route("/v1/chat/completions", _timed(proxy, "chat", proxy.chat), methods=["POST"]),
        Route("/v1/models", _timed(proxy, "models", proxy.models), methods=["GET"]),
        Route("/health", proxy.health, methods=["GET"]),
        Route("/metrics", proxy.metrics_page, methods=["GET"]),
        Route("/{path:path}", _timed(proxy, "other", proxy.other), methods=methods),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    return app
