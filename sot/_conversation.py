"""A chat conversation as SoT sees it: the last user turn is the question, earlier turns its context.

As in the SoT paper's multi-turn runs, the context holds the earlier questions and their final answers
(never SoT's own prompts), and the system prompt is kept; it is sent before every skeleton, expansion
and sequential prompt of the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ConfigurationError
from .templates import Message

# Roles whose text is plain context; anything else (tool, function) needs the model's own tool loop.
CONTEXT_ROLES = frozenset({"system", "developer", "user", "assistant"})


def message_text(content: Any) -> str | None:
    """The text of a message's content (a string or a list of text parts); None if it holds anything else."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                return None
            texts.append(part["text"])
        return "".join(texts)
    return None


def _message(raw: Mapping[str, Any] | Message) -> Message:
    if isinstance(raw, Message):
        return raw
    if not isinstance(raw, Mapping):
        raise ConfigurationError("each message must be a mapping with a role and a content")
    role = raw.get("role")
    text = message_text(raw.get("content"))
    if role not in CONTEXT_ROLES or text is None:
        raise ConfigurationError(
            f"message role {role!r} with this content cannot be answered with SoT: only text messages "
            "of system, developer, user and assistant turns"
        )
    return Message(str(role), text)


def split_conversation(
    question: str | None, messages: Sequence[Mapping[str, Any] | Message] | None
) -> tuple[str, tuple[Message, ...]]:
    """(question, context): the question alone, or the last user turn of `messages` and the turns before it."""
    if messages is None:
        if question is None:
            raise ConfigurationError("give a question or messages")
        return question, ()
    if question is not None:
        raise ConfigurationError("give a question or messages, not both")
    turns = [_message(m) for m in messages]
    if not turns or turns[-1].role != "user":
        raise ConfigurationError("the last message must be the user's question")
    if not turns[-1].content.strip():
        raise ConfigurationError("the question (the last user message) is empty")
    return turns[-1].content, tuple(turns[:-1])
