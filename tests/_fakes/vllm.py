"""A stand-in for `vllm serve`: same command line and HTTP API, no GPU. For launcher tests only.

FAKE_VLLM_MODE: ok (serve until SIGTERM), oom, nogpu, notfound (fail the way vLLM does).
FAKE_VLLM_LOG: a file to which it appends its argv and every request body, one JSON per line.
Run as ``python -m _fakes.vllm`` with tests/ on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

from .replies import Reply, SeenRequest, sot_script
from .server import FakeServer

FAILURES = {
    "oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "nogpu": "RuntimeError: No CUDA GPUs are available",
    "notfound": "OSError: nope/nothing is not a local folder and is not a valid model identifier",
}


def main() -> None:
    argv = sys.argv[1:]
    log = os.environ.get("FAKE_VLLM_LOG")
    if log:
        with open(log, "a") as handle:
            handle.write(json.dumps({"argv": argv}) + "\n")
    mode = os.environ.get("FAKE_VLLM_MODE", "ok")
    print("INFO: starting the fake vLLM", flush=True)
    if mode in FAILURES:
        print("Traceback (most recent call last):\n  ...", flush=True)
        print(FAILURES[mode], flush=True)
        sys.exit(1)
    model = argv[argv.index("--served-model-name") + 1]
    port = int(argv[argv.index("--port") + 1])
    script = sot_script()

    def handler(request: SeenRequest) -> Reply:
        if log:
            with open(log, "a") as handle:
                handle.write(json.dumps({"body": request.body}) + "\n")
        return script(request)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeServer(handler, model=model, port=port):
        print("INFO: Application startup complete.", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
