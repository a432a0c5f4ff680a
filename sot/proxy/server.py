"""Running the proxy: uvicorn serving the Starlette app, in the foreground or on a background thread."""

from __future__ import annotations

import socket
import threading
from types import TracebackType

import uvicorn

from .app import create_app
from .settings import ProxySettings


def _config(settings: ProxySettings, host: str, port: int, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(
        create_app(settings),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,  # access lines would add nothing useful, and never a header
        lifespan="on",
        timeout_graceful_shutdown=5,
    )


def serve(settings: ProxySettings, host: str, port: int, log_level: str = "warning") -> None:
    """Serve the proxy on host:port in the foreground (Ctrl-C stops it; the local backend stops with it)."""
    uvicorn.Server(_config(settings, host, port, log_level)).run()


class BackgroundProxy:
    """The proxy on a free loopback port, on a thread of its own: ``with BackgroundProxy(s) as p: p.url``."""

    def __init__(self, settings: ProxySettings, host: str = "127.0.0.1", port: int = 0) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host, self.port = self._socket.getsockname()[:2]
        self.server = uvicorn.Server(_config(settings, self.host, self.port, "warning"))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def __enter__(self) -> BackgroundProxy:
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the proxy did not start (see the log above)")
            self._thread.join(0.01)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.should_exit = True
        self._thread.join()
        self._socket.close()
