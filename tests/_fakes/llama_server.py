"""A stand-in for llama-server in tests: takes llama-server's flags, serves the fake OpenAI-compatible API.

Real HTTP on 127.0.0.1 at --port, as the local backend starts llama-server, so the tests of sharing the
local server run whole commands in seconds without a model. Each start appends its pid to
$FAKE_LLAMA_STARTS; each answer names the pid that wrote it, so a test can tell which server answered.
$FAKE_LLAMA_TOKEN_DELAY slows the words down (an answer still streaming when a test acts); with
$FAKE_LLAMA_ANONYMOUS set every server writes the same answer, as one model on two servers would.
Run as ``python -m _fakes.llama_server`` with tests/ on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import threading

from .replies import sot_script
from .server import FakeServer


def answer_of(pid: int | None) -> str:
    return (
        f"Answered by {pid or 'a server'}. Sleep improves when evenings are calm, rooms stay dark and cool, caffeine ends "
        "by noon, screens go away an hour before bed, and waking happens at one fixed time every morning, "
        "weekends included, so the body learns its rhythm."
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", default="fake-model")
    args, _ = parser.parse_known_args()
    delay = float(os.environ.get("FAKE_LLAMA_TOKEN_DELAY") or 0)
    pid = None if os.environ.get("FAKE_LLAMA_ANONYMOUS") else os.getpid()
    script = sot_script(token_delay=delay, sequential_text=answer_of(pid))
    with FakeServer(script, model=args.alias, port=args.port):
        starts = os.environ.get("FAKE_LLAMA_STARTS")
        if starts:
            with open(starts, "a") as log:
                log.write(f"{os.getpid()}\n")
        threading.Event().wait()  # until SIGTERM or SIGKILL, as llama-server


if __name__ == "__main__":
    main()
