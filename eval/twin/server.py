"""Running the twin: in a thread of the current process (tests), or as its own process (benchmarks,
where a second core keeps the client's work off the server's clock).

    python -m twin --port 8000 --time-scale 10 --batch-limit 200 --background 50   (from eval/)
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import threading
from types import TracebackType

import uvicorn

from .app import build_app
from .physics import NIM_LLAMA_8B_H100, TwinConfig, format_table, parse_table


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _server(config: TwinConfig) -> uvicorn.Server:
    app = build_app(config)
    # Keep-alive longer than sot's pool keeps an idle connection (4 s), so no request meets a closing socket.
    settings = uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=30, lifespan="on")
    return uvicorn.Server(settings)


class TwinServer:
    """The twin on 127.0.0.1, served from a thread with its own event loop, for as long as the block."""

    def __init__(self, config: TwinConfig | None = None, port: int = 0) -> None:
        self.config = config or TwinConfig()
        self._sock = _listen("127.0.0.1", port)
        self.port: int = self._sock.getsockname()[1]
        self._server = _server(self.config)
        self._thread = threading.Thread(target=self._serve, name="twin", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes: the server's /v1."""
        return self.url + "/v1"

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def __enter__(self) -> TwinServer:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the twin's server thread ended before it started")
            self._thread.join(0.01)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    default_table = format_table(NIM_LLAMA_8B_H100)
    parser = argparse.ArgumentParser(prog="twin", description="A batched GPU server's twin, OpenAI-compatible.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--model", default=TwinConfig.model)
    parser.add_argument("--batch-limit", type=int, default=TwinConfig.batch_limit)
    parser.add_argument("--background", type=int, default=0, help="background streams at start")
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--prefill-ms", type=float, default=TwinConfig.prefill_ms_per_token, help="per uncached token")
    parser.add_argument("--table", default=default_table, help="N:ms rows or a gpu_bench.json (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        args.table = parse_table(args.table)
    except (OSError, ValueError) as exc:
        parser.error(f"--table: {exc}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = TwinConfig(
        model=args.model,
        table=args.table,
        prefill_ms_per_token=args.prefill_ms,
        batch_limit=args.batch_limit,
        background_streams=args.background,
        time_scale=args.time_scale,
    )
    sock = _listen(args.host, args.port)
    print(f"twin listening on http://{args.host}:{sock.getsockname()[1]}", flush=True)
    server = _server(config)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        sys.exit(0)
