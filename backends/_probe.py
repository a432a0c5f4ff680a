"""Small GETs with a total deadline: model discovery and health checks.

httpx's read timeout restarts on every byte, so a server answering one byte a second would hold a
plain ``get`` forever; here the whole exchange (connect, headers, body) has one deadline and the body
a size cap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from sot import constants


class ProbeFailed(Exception):
    """The GET failed, timed out or returned something unreadable; the message is safe to show.

    ``cause`` is the transport error, where there was one: a caller that maps errors for its own
    calls (``openai_compat``) says the same about the server whichever request met it first.
    """

    def __init__(self, message: str, cause: httpx.HTTPError | None = None) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes


async def get_reply(
    http: httpx.AsyncClient,
    url: str,
    *,
    deadline_s: float,
    headers: dict[str, str] | None = None,
    limit: int = constants.MAX_ERROR_BODY_BYTES * 16,
) -> Reply:
    """The status, headers and body of GET `url`, all within `deadline_s` seconds."""
    try:
        with anyio.fail_after(deadline_s):
            async with http.stream("GET", url, headers=headers) as response:
                body = bytearray()
                async for piece in response.aiter_bytes():
                    body += piece
                    if len(body) > limit:
                        raise ProbeFailed("the reply was too large")
                return Reply(response.status_code, response.headers, bytes(body))
    except TimeoutError:
        raise ProbeFailed(f"no complete reply within {deadline_s:g} s") from None
    except httpx.ConnectError as exc:
        raise ProbeFailed("nothing is listening there (connection refused or host not found)", exc) from None
    except httpx.HTTPError as exc:
        raise ProbeFailed(f"the request failed ({type(exc).__name__})", exc) from None


async def get_json(
    http: httpx.AsyncClient,
    url: str,
    *,
    deadline_s: float,
    headers: dict[str, str] | None = None,
    limit: int = constants.MAX_ERROR_BODY_BYTES * 16,
) -> tuple[int, Any]:
    """(status, parsed JSON body or None) of GET `url`, all within `deadline_s` seconds."""
    reply = await get_reply(http, url, deadline_s=deadline_s, headers=headers, limit=limit)
    try:
        return reply.status, json.loads(reply.body) if reply.body else None
    except ValueError:
        return reply.status, None


async def healthy(url: str, deadline_s: float = constants.HEALTH_PROBE_TIMEOUT_S) -> bool:
    """Whether GET `url` answers 200 within `deadline_s` (a health check)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(deadline_s)) as http:
        try:
            status, _ = await get_json(http, url, deadline_s=deadline_s)
        except ProbeFailed:
            return False
    return status == 200


def model_ids(data: list[Any]) -> list[str]:
    """The ids of an OpenAI model list's ``data`` (entries without a usable id skipped)."""
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str | int)]
