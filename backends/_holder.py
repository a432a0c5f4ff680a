"""Who holds the shared local server: the lock, the record beside it that advertises the server
(who runs it, which model, the URL), and what can be learnt of a holder that advertises nothing."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock

from ._probe import healthy
from .model_files import Q4_NAME, Q8_NAME, cache_dir

LOCK_NAME = "local-server.lock"
STATE_NAME = "local-server.json"
STARTING, RUNNING, STOPPING = "starting", "running", "stopping"


def _safe_name(text: str) -> str:
    return re.sub(r"[^\w.+-]", "", text)[:40] or "?"


def _clean_command(text: str) -> str:
    # A record is a file anyone may write: what it says reaches a terminal, so only plain characters.
    return re.sub(r"[^\w .+-]", "", text)[:60].strip() or "?"


def _with_subcommand(name: str, rest: Sequence[str]) -> str:
    name = _safe_name(name)
    if name == "sot" and rest and re.fullmatch(r"[a-z][a-z-]{0,20}", rest[0]):
        return f"sot {rest[0]}"
    return name


def describe_command(argv: Sequence[str]) -> str:
    """A process's command, short and free of its arguments ("sot proxy", "bench.py"): arguments may hold keys."""
    args = list(argv)
    if args and args[0] == "-c":  # sys.argv of `python -c ...`
        return "python -c"
    if args and re.fullmatch(r"python[\d.]*", Path(args[0]).name):
        args = args[1:]
        while args and args[0].startswith("-"):
            flag = args.pop(0)
            if flag == "-m" and args:
                return _with_subcommand(args[0], args[1:])
            if flag == "-c":
                return "python -c"
            if flag in ("-W", "-X") and args:
                args.pop(0)
    if not args or not args[0]:
        return "python"
    path = Path(args[0])
    # `python -m sot ask` runs sot/__main__.py: name the package.
    name = path.parent.name if path.name == "__main__.py" else path.name
    return _with_subcommand(name, args[1:])


def this_command() -> str:
    return describe_command(sys.argv)


@dataclass(frozen=True)
class Holder:
    """The record of the command that holds the lock, as it advertises itself."""

    pid: int
    command: str
    state: str  # starting, running (url set), stopping
    url: str | None = None
    model: str | None = None  # the served GGUF's resolved path (for a --gguf known from the start)
    bundled: bool = False

    @property
    def who(self) -> str:
        return f"{self.command} (pid {self.pid})"

    def serves(self, chosen: Path | None) -> bool | None:
        """Whether it serves the model asked for (`chosen`, None: the bundled one); None while not known yet."""
        if chosen is None:
            if self.bundled:
                return True
            return None if self.model is None else Path(self.model).name in (Q4_NAME, Q8_NAME)
        if self.model is None:
            # The bundled model's file is only known once it is fetched; an old record names no path at all.
            return None if self.state == STARTING else True
        return Path(self.model) == chosen

    def model_name(self) -> str:
        return Path(self.model).name if self.model else "the bundled model"


def server_lock() -> FileLock:
    # Not bound to a thread: it is taken and released on whichever thread runs the event loop, and a
    # per-thread lock (filelock's default) would ignore a release from another thread and stay held.
    return FileLock(str(cache_dir() / LOCK_NAME), thread_local=False)


def _state_path() -> Path:
    return cache_dir() / STATE_NAME


def read_holder() -> Holder | None:
    """The advertised record, if there is a readable one (it may be stale: check the lock and the pid)."""
    try:
        state = json.loads(_state_path().read_text())
        pid = int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(state, dict):
        return None

    def text(key: str) -> str | None:
        value = state.get(key)
        return value if isinstance(value, str) else None

    return Holder(
        pid=pid,
        # Records written before sharing came from `sot serve` only, with a URL and no state.
        command=_clean_command(text("command") or "sot serve"),
        state=text("state") or RUNNING,
        url=text("url"),
        model=text("model"),
        bundled=state.get("bundled") is True,
    )


def write_holder(holder: Holder) -> None:
    # Readers never take the lock: replace the file whole, so they never see half of one.
    path = _state_path()
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(json.dumps(asdict(holder)))
    partial.replace(path)


def withdraw() -> None:
    _state_path().unlink(missing_ok=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive, we just may not signal it
    return True


def _lock_holder_pid(path: Path) -> int | None:
    """The pid holding a flock on `path`, from /proc/locks (Linux); None where that cannot be told."""
    try:
        inode = str(path.stat().st_ino)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 9218 fe:00:16039944 0 EOF"; "1: -> FLOCK ..." lines are waiters.
        if len(fields) >= 6 and fields[1] != "->" and fields[5].rsplit(":", 1)[-1] == inode:
            with contextlib.suppress(ValueError):
                pid = int(fields[4])
                if pid > 0:
                    return pid
    return None


def unrecorded_holder() -> str:
    pid = _lock_holder_pid(cache_dir() / LOCK_NAME)
    if pid is None:
        return "another process"
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return f"pid {pid}"
    return f"{describe_command([a for a in argv if a] or ['?'])} (pid {pid})"


async def advertised_url() -> str | None:
    """The URL of the running, healthy local server another command shares, if any (its health check has a deadline)."""
    holder = read_holder()
    if holder is None or holder.state != RUNNING or not holder.url or not alive(holder.pid):
        return None
    return holder.url if await is_healthy(holder.url) else None


async def is_healthy(url: str) -> bool:
    from ._load import metrics_root  # the server's root, as load readings find it (imported when asked)

    return await healthy(metrics_root(url) + "/health")
