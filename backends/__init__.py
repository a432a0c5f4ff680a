"""Backends: one small interface (``Backend``) and its implementations."""

from .base import Backend, ChatChunk, ChatRequest, Constraint
from .openai_compat import OpenAICompatBackend

__all__ = ["Backend", "ChatChunk", "ChatRequest", "Constraint", "OpenAICompatBackend"]
