"""An in-process backend whose answers come from a function, as httpx's ``MockTransport`` does.

For tests and examples: no server, no network, and full control of timing. The handler is an async
generator function that receives each ``ChatRequest`` and yields text pieces (``str``) or
``ChatChunk``; raising a ``sot.errors.BackendError`` fails that attempt (the retry loop sees it as
it would a server's). Awaiting an ``anyio.Event`` inside the handler orders calls deterministically::

    async def handler(request):
        yield "1. First\\n2. Second\\n3. Third" if "outline" in request.messages[-1].content else "Text."

    client = sot.Client(backend=MockBackend(handler))
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable

from .base import ChatChunk, ChatRequest

Handler = Callable[[ChatRequest], AsyncIterator[str | ChatChunk]]


class MockBackend:
    """A ``Backend`` answering every call with `handler`; ``requests`` lists what it was sent."""

    name = "mock"

    def __init__(self, handler: Handler, model: str = "mock") -> None:
        self.handler = handler
        self.model = model
        self.requests: list[ChatRequest] = []

    def __repr__(self) -> str:
        return f"MockBackend(model={self.model!r})"

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        self.requests.append(request)
        async for piece in self.handler(request):
            yield ChatChunk(text=piece) if isinstance(piece, str) else piece
        yield ChatChunk(finish_reason="stop")

    async def aclose(self) -> None:
        return None
