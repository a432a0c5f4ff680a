"""Requests SoT does not serve go to the upstream as they came, and its answer comes back as it went.

Bytes are relayed both ways (the body is only rewritten to drop the proxy's own ``sot`` field or model
suffix); hop-by-hop headers are dropped; ``Authorization`` is the upstream key when one is configured,
else the client's own (never when it is this proxy's client key), and is never logged.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping

import anyio
import httpx

from .. import constants
from ..backends._pool import upstream_client
from .asgi import Sender

log = logging.getLogger("sot.proxy")

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


class Forwarder:
    """Relays one request to an upstream (round robin over several), streaming the answer back."""

    def __init__(
        self,
        upstream_key: str | None,
        forward_client_auth: bool,
        max_connections: int = constants.PROXY_MAX_UPSTREAM_CALLS,
    ) -> None:
        self._key = upstream_key
        self._forward_client_auth = forward_client_auth
        self._turn = itertools.count()
        self._http = upstream_client(max_connections, timeout=httpx.Timeout(None, connect=constants.CONNECT_TIMEOUT_S))

    def headers(self, incoming: Mapping[str, str]) -> dict[str, str]:
        out = {k: v for k, v in incoming.items() if k.lower() not in _HOP_BY_HOP and k.lower() != "authorization"}
        if self._key is not None:
            out["authorization"] = f"Bearer {self._key}"
        elif self._forward_client_auth and "authorization" in incoming:
            out["authorization"] = incoming["authorization"]
        return out

    def url(self, bases: list[str], path: str, query: str) -> str:
        base = bases[next(self._turn) % len(bases)].rstrip("/")
        return base + path.removeprefix("/v1") + (f"?{query}" if query else "")

    async def relay(self, sender: Sender, method: str, url: str, headers: Mapping[str, str], body: bytes) -> int:
        """Send the request upstream and stream its response to the client; returns the status sent."""
        request = self._http.build_request(method, url, headers=self.headers(headers), content=body)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("pass-through request failed: %s", type(exc).__name__)
            message = (
                "the upstream did not answer"
                if isinstance(exc, httpx.TimeoutException)
                else ("could not connect to the upstream, or the connection was reset")
            )
            await sender.error(504 if isinstance(exc, httpx.TimeoutException) else 502, message, "upstream_error")
            return 502
        try:
            kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_BY_HOP]
            await sender.start(response.status_code, kept)
            async for part in response.aiter_raw():
                await sender.body(part)
            await sender.end()
        except httpx.HTTPError:
            # Not ended cleanly: returning without the last body part makes uvicorn drop the connection,
            # so the client sees the cut as a cut, not as a complete answer.
            log.warning("the upstream cut a pass-through response")
        finally:
            # Shielded: a client that left cancels us, and the upstream connection must still close now.
            with anyio.CancelScope(shield=True):
                await response.aclose()
        return response.status_code

    async def aclose(self) -> None:
        await self._http.aclose()
