"""Helpers shared by the local-backend tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil
import pytest

from sot.backends.base import ChatRequest
from sot.errors import LocalServerError

QUESTION = "How can I improve my time management skills?"
# The installed `sot` command, as a user runs it. (`python -m sot` from the checkout's root would import the
# source folder, where sot.backends is not: setuptools installs backends/ inside the package.)
SOT = str(Path(sys.executable).with_name("sot"))


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
