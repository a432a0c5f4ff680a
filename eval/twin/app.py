"""The twin's HTTP face: the OpenAI routes sot uses, the monitoring routes load-aware clients read,
and admin routes that set the background load (and empty the prefix cache) while it runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import asdict

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .answers import Writer
from .chat import chat_completions, error
from .engine import Engine
from .metrics import PROMETHEUS_CONTENT_TYPE, prometheus, slots
from .physics import TwinConfig
from .recognise import warm_up


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def state(engine: Engine) -> dict[str, object]:
    """What the twin is doing now, and its totals (GET /admin/state)."""
    return {
        "model": engine.config.model,
        "sim_time_s": round(engine.now(), 6),
        "time_scale": engine.config.time_scale,
        "batch_limit": engine.config.batch_limit,
        "background": engine.background,
        "running": engine.num_running,
        "waiting": engine.num_waiting,
        "counters": asdict(engine.counters),
    }


async def chat(request: Request) -> Response:
    writer: Writer = request.app.state.writer
    return await chat_completions(request, _engine(request), writer)


async def models(request: Request) -> Response:
    config = _engine(request).config
    entry = {"id": config.model, "object": "model", "created": int(time.time()), "owned_by": "vllm"}
    return JSONResponse({"object": "list", "data": [entry | {"max_model_len": config.n_ctx}]})


async def metrics(request: Request) -> Response:
    return PlainTextResponse(prometheus(_engine(request)), media_type=PROMETHEUS_CONTENT_TYPE)


async def slot_list(request: Request) -> Response:
    listed = slots(_engine(request))
    if request.query_params.get("fail_on_no_slot") == "1" and all(s["is_processing"] for s in listed):
        return error(503, "no slot available")
    return JSONResponse(listed)


async def health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def load(request: Request) -> Response:
    try:
        streams = (await request.json())["streams"]
    except (ValueError, KeyError, TypeError):
        return error(400, 'send {"streams": N}', "streams")
    if not isinstance(streams, int) or isinstance(streams, bool) or streams < 0:
        return error(400, "streams must be a whole number, at least 0", "streams")
    _engine(request).set_background(streams)
    return JSONResponse(state(_engine(request)))


async def clear_cache(request: Request) -> Response:
    _engine(request).cache.clear()
    return JSONResponse(state(_engine(request)))


async def admin_state(request: Request) -> Response:
    return JSONResponse(state(_engine(request)))


ROUTES = [
    Route("/v1/chat/completions", chat, methods=["POST"]),
    Route("/v1/models", models),
    Route("/metrics", metrics),
    Route("/slots", slot_list),
    Route("/health", health),
    Route("/admin/load", load, methods=["POST"]),
    Route("/admin/cache/clear", clear_cache, methods=["POST"]),
    Route("/admin/state", admin_state),
]


def build_app(config: TwinConfig) -> Starlette:
    """The twin's ASGI app; its engine runs while the app's lifespan does."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up()  # renders sot's templates once, before the first request is timed
        task = asyncio.create_task(app.state.engine.run())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    app = Starlette(routes=ROUTES, lifespan=lifespan)
    app.state.engine = Engine(config)
    app.state.writer = Writer()
    return app
