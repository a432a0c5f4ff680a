"""Running the proxy: uvicorn serving the Starlette app, in the foreground or on a background thread.

The listening sockets are bound before anything slow starts (the local backend can take seconds to
minutes), so a port in use is refused at once, and two proxies can never both hold one. A failure to
start (a local server that cannot be had) ends the server and is raised from ``serve`` as the
``SotError`` it is, rather than logged by uvicorn as a traceback.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading
from collections.abc import Callable
from types import TracebackType

import uvicorn

from .. import constants
from ..errors import ConfigurationError, SotError
from .app import Proxy, create_app
from .settings import ProxySettings


def listen_sockets(host: str, port: int) -> list[socket.socket]:
    """Sockets bound and listening on every address of `host` at `port` (0: a free port), or a one-line error."""
    if not 0 <= port <= 65535:
        raise ConfigurationError(f"'port' must be between 0 and 65535 (0: a free one), not {port}", options=("port",))
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        raise ConfigurationError(
            f"cannot listen on {host!r}: no such address on this machine; check 'host'", options=("host",)
        ) from None
    # getaddrinfo may list an address more than once; one socket each.
    unique = {(info[0], info[4]): info for info in infos}.values()
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in unique:
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            # As uvicorn and asyncio bind: a port whose last connections linger in TIME_WAIT is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            # With port 0, every address gets the port the first was given.
            sock.bind((address[0], port or address[1], *address[2:]))
            port = sock.getsockname()[1]
            # Listening at once: a bound socket that is not listening yet does not keep Linux from
            # binding the same port again (SO_REUSEADDR), so a second proxy would not be refused.
            sock.listen(2048)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise _bind_error(exc, host, port) from None
    return sockets


def _bind_error(exc: OSError, host: str, port: int) -> ConfigurationError:
    if exc.errno == errno.EADDRINUSE:
        return ConfigurationError(
            f"port {port} is already in use on {host}: choose another 'port' (0: a free one)", options=("port",)
        )
    if exc.errno == errno.EACCES:
        return ConfigurationError(
            f"port {port} needs privileges to listen on: choose a 'port' of 1024 or above", options=("port",)
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return ConfigurationError(
            f"cannot listen on {host!r}: no such address on this machine; check 'host'", options=("host",)
        )
    return ConfigurationError(
        f"cannot listen on {host} port {port} ({exc.strerror}): check 'host' and 'port'", options=("host", "port")
    )


def is_loopback(sockets: list[socket.socket]) -> bool:
    """Whether only this machine can reach these sockets."""
    return all(ipaddress.ip_address(sock.getsockname()[0]).is_loopback for sock in sockets)


def url_of(host: str, sockets: list[socket.socket]) -> str:
    port = sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


class _ProxyServer(uvicorn.Server):
    """uvicorn for one proxy: told when the proxy is serving, and ended when it could not start."""

    def __init__(self, settings: ProxySettings, log_level: str, on_ready: Callable[[], None] | None = None) -> None:
        app = create_app(settings)
        self.proxy: Proxy = app.state.proxy
        self.proxy.on_startup_error = self._failed
        self.startup_error: SotError | None = None
        self._on_ready = on_ready
        super().__init__(
            uvicorn.Config(
                app,
                log_level=log_level,
                access_log=False,  # access lines would add nothing useful, and never a header
                lifespan="on",
                timeout_graceful_shutdown=5,
            )
        )

    def _failed(self, exc: SotError) -> None:
        self.startup_error = exc
        self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.startup_error is None and self._on_ready is not None:
            self._on_ready()


def serve(
    settings: ProxySettings,
    host: str = constants.PROXY_HOST,
    port: int = constants.PROXY_PORT,
    log_level: str = "warning",
    *,
    sockets: list[socket.socket] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve the proxy on `sockets` (else host:port) in the foreground until Ctrl-C; the local backend stops with it.

    `on_ready` is called once requests are answered. A failure to start is raised (a ``SotError``).
    """
    if sockets is None:
        sockets = listen_sockets(host, port)
    server = _ProxyServer(settings, log_level, on_ready)
    try:
        server.run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
    if server.startup_error is not None:
        raise server.startup_error


class BackgroundProxy:
    """The proxy on a free loopback port, on a thread of its own: ``with BackgroundProxy(s) as p: p.url``."""

    def __init__(self, settings: ProxySettings, host: str = "127.0.0.1", port: int = 0) -> None:
        self._sockets = listen_sockets(host, port)
        self.host, self.port = self._sockets[0].getsockname()[:2]
        self.server = _ProxyServer(settings, "warning")
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": self._sockets}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def __enter__(self) -> BackgroundProxy:
        self._thread.start()
        while not self.server.started and self.server.startup_error is None:
            if not self._thread.is_alive():
                self._close()
                raise RuntimeError("the proxy did not start (see the log above)")
            self._thread.join(0.01)
        if self.server.startup_error is not None:
            self._thread.join()
            self._close()
            raise self.server.startup_error
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.should_exit = True
        self._thread.join()
        self._close()

    def _close(self) -> None:
        for sock in self._sockets:
            sock.close()
