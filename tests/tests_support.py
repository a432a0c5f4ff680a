"""Helpers shared by the local-backend tests."""

from __future__ import annotations

import os

import psutil
import pytest

from sot.backends.base import ChatRequest
from sot.errors import LocalServerError

QUESTION = "How can I improve my time management skills?"


def require_binary() -> None:
    from sot.backends.llama_server import find_server

    try:
        find_server()
    except LocalServerError as exc:
        if os.environ.get("CI"):
            raise  # CI installs the local backend: a missing binary is a failure there
        pytest.skip(str(exc))


def llama_servers_since(started: float) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["name", "create_time"]):
        if proc.info["name"] == "llama-server" and proc.info["create_time"] >= started - 1:
            found.append(proc)
    return found


def request_kind(request: ChatRequest) -> str:
    """Which of sot's calls an in-process request is, by the shipped prompts' shapes (as the fake server tells)."""
    prompt = "\n".join(m.content for m in request.messages)
    if "Write point " in prompt or "The point to write:" in prompt:
        return "expand"
    return "skeleton" if prompt.rstrip().endswith("Outline:") else "sequential"
