"""Child-process entry point: llama.cpp's own HTTP server from the prebuilt ``xllamacpp`` wheel.

It takes the subset of ``llama-server``'s flags that ``ServerSettings`` writes, starts
``xllamacpp.Server`` (which serves in its own threads) and waits for SIGTERM or SIGINT. The parent
launches it exactly like a ``llama-server`` executable, so the same guarantees hold: its own
session, killed with the parent (PR_SET_PDEATHSIG survives exec into this interpreter), and a
process name of ``llama-server`` so that ``ps`` and the tests see what runs. A failed start is
one line starting with ``FAILURE_MARK`` on stderr (read back by ``llama_server.diagnose``).

    python -P path/to/_embedded_server.py --model M.gguf --port 8080 [--parallel 8] ...

It is run as a script and imports nothing of sot's: importing the package would cost the server a
second of start-up.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
from typing import Any, NoReturn

# llama_server.diagnose finds the child's explanation by this prefix.
FAILURE_MARK = "sot-embedded-server: "
PROCESS_NAME = b"llama-server"
EXIT_START_FAILED = 3
LIBGOMP = (
    "the prebuilt llama.cpp server needs the system's OpenMP runtime libgomp.so.1: install it "
    "(apt-get install libgomp1, dnf install libgomp or apk add libgomp) or give 'llama_server' PATH"
)


def fail(message: str) -> NoReturn:
    print(FAILURE_MARK + message, file=sys.stderr, flush=True)
    raise SystemExit(EXIT_START_FAILED)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="llama-server (embedded)")
    parser.add_argument("--model", "-m", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--parallel", "-np", type=int, default=1)
    parser.add_argument("--ctx-size", "-c", type=int, default=0)
    parser.add_argument("--no-kv-unified", action="store_true")
    parser.add_argument("--cont-batching", action="store_true")
    parser.add_argument("--no-webui", action="store_true")
    parser.add_argument("--alias", "-a")
    parser.add_argument("--threads", "-t", type=int)
    parser.add_argument("--n-gpu-layers", "-ngl", type=int)
    return parser.parse_args(argv)


def params(args: argparse.Namespace, xllamacpp: Any) -> Any:
    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.hostnames = [args.host]
    p.port = args.port
    p.n_parallel = args.parallel
    p.n_ctx = args.ctx_size
    p.kv_unified = not args.no_kv_unified
    p.cont_batching = args.cont_batching or p.cont_batching
    p.ui = not args.no_webui
    if args.alias:
        p.model_alias = {args.alias}
    if args.threads:
        p.cpuparams.n_threads = args.threads
        p.cpuparams_batch.n_threads = args.threads
    if args.n_gpu_layers is not None:
        p.n_gpu_layers = args.n_gpu_layers
    return p


def _name_process() -> None:
    if sys.platform.startswith("linux"):
        pr_set_name = 15
        ctypes.CDLL("libc.so.6").prctl(pr_set_name, ctypes.c_char_p(PROCESS_NAME), 0, 0, 0)


def main(argv: list[str] | None = None) -> NoReturn:
    args = parse(sys.argv[1:] if argv is None else argv)
    _name_process()
    try:
        import xllamacpp
    except ImportError as exc:
        if "libgomp" in str(exc):
            fail(LIBGOMP)
        fail(f"the prebuilt llama.cpp server cannot be loaded ({exc}): reinstall it (pip install 'sot-llm[local]')")
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    # Blocked before the server's threads exist, so they inherit the mask and only sigwait sees them.
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    try:
        _server = xllamacpp.Server(params(args, xllamacpp))
    except Exception as exc:
        fail(f"llama.cpp could not start with {args.model}: {exc}")
    signal.sigwait(stop_signals)
    # The server's threads hold nothing that needs flushing; tearing it down takes seconds, leaving is at once.
    os._exit(0)


if __name__ == "__main__":
    main()
