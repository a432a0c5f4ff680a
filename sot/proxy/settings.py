"""What ``sot proxy`` is configured with: where answers come from, and the limits clients meet."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import constants
from ..backends.openai_compat import Dialect
from ..options import Options, check_number, spelling

# The fields below and the library's options as `sot proxy` spells them where not ``flag(name)``: the
# library's base_url and api_key are the upstream's here (--api-key is the key clients present).
FLAGS = {"base_url": "--upstream", "api_key": "--upstream-api-key", "queue_timeout_s": "--queue-timeout"}
proxy_flag = spelling(FLAGS)


@dataclass(frozen=True)
class ProxySettings:
    """The proxy's configuration; ``options`` are the answer options of ``sot ask`` (``Client`` keywords)."""

    upstream: tuple[str, ...] = ()  # none: the embedded local backend
    model: str | None = None  # none: the model each request names (or the upstream's only one)
    upstream_api_key: str | None = field(default=None, repr=False)
    dialect: Dialect = constants.DEFAULT_DIALECT
    gguf: str | None = None
    llama_server: str | None = None
    api_key: str | None = field(default=None, repr=False)  # what clients must present, if set
    max_concurrent: int = constants.PROXY_MAX_CONCURRENT
    max_queued: int = constants.PROXY_MAX_QUEUED
    queue_timeout_s: float = constants.PROXY_QUEUE_TIMEOUT_S
    max_upstream_calls: int = constants.PROXY_MAX_UPSTREAM_CALLS
    max_body_bytes: int = constants.PROXY_MAX_BODY_BYTES
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked when made, not on the first request: a bad limit or option fails at start-up.
        for name in ("max_concurrent", "max_upstream_calls", "max_body_bytes"):
            check_number(name, getattr(self, name), low=1)
        check_number("max_queued", self.max_queued, low=0)
        check_number("queue_timeout_s", self.queue_timeout_s, low=0, low_open=True)
        Options().updated(**self.options)

    @property
    def local(self) -> bool:
        return not self.upstream

    @property
    def forwards_client_auth(self) -> bool:
        """The client's Authorization goes upstream only when no upstream key is configured, and never
        when it is this proxy's own client key."""
        return self.upstream_api_key is None and self.api_key is None and not self.local
