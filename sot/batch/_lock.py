"""One writer per results file: an exclusive lock held for the writer's whole life.

The lock is ``flock`` on ``RESULTS.lock`` beside the results file (the results file itself is
replaced on resume, so it cannot carry the lock). The kernel drops the lock when its holder dies,
even by kill -9, so a stale lock file never blocks anyone; it only names the last holder. A second
writer does not wait: it refuses at once with one line naming the holder's pid and start time.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from contextlib import suppress
from pathlib import Path

from ..errors import ConfigurationError
from ._atomic import write_error


def lock_path(results: Path) -> Path:
    return results.with_name(results.name + ".lock")


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(info["started_at"])))
        host = "" if info.get("host") == socket.gethostname() else f" on {info.get('host')}"
        return f"pid {int(info['pid'])}{host}, started {started}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"


class ResultsLock:
    """Exclusive lock on a results file; ``release`` (or process death) frees it."""

    def __init__(self, results: str | Path) -> None:
        self.results = Path(results)
        self.path = lock_path(self.results)
        self._fd: int | None = None
        while self._fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise write_error(self.path, exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ConfigurationError(
                    f"{self.results} is in use by another sot writer ({_holder(self.path)}): "
                    "wait for it to finish, or write to another 'out'",
                    options=("out",),
                ) from None
            # The lock file may have been removed by a holder releasing it between our open and
            # our lock: then we hold a lock on a file nobody else sees; take the new one instead.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
            else:
                os.close(fd)
        info = {"pid": os.getpid(), "started_at": round(time.time(), 3), "host": socket.gethostname()}
        with suppress(OSError):  # who holds it is only information: a full disk must not stop the lock
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, json.dumps(info).encode(), 0)

    def release(self) -> None:
        if self._fd is None:
            return
        with suppress(OSError):
            os.unlink(self.path)  # while still holding it: the inode check above covers a racing opener
        os.close(self._fd)
        self._fd = None
