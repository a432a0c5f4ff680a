"""``sot proxy``: Skeleton-of-Thought behind an OpenAI-compatible endpoint.

Point any OpenAI client's base URL at it: chat completions are answered through the orchestrator
(the router decides per request), everything SoT cannot serve goes upstream untouched.
"""

from .app import create_app
from .server import BackgroundProxy, serve
from .settings import ProxySettings

__all__ = ["BackgroundProxy", "ProxySettings", "create_app", "serve"]
