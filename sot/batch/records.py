"""The results file: one JSON line per (id, mode), appended and fsynced as soon as it is done.

A line is written whole and then fsynced (in a worker thread, so the event loop that times
answers never waits on the disk); a kill -9 at any moment leaves at most one torn last line, and
a failed write (a full disk) is cut back off, so the file never keeps half a record. One writer
at a time holds the file's lock (``_lock``). ``open_results`` repairs a torn line and, on resume,
drops failed records so that a re-run leaves every (id, mode) exactly once.
"""

from __future__ import annotations

import json
import os
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from ..errors import ConfigurationError
from ._atomic import atomic_write, write_all, write_error
from ._lock import ResultsLock

Key = tuple[str, str]


@dataclass
class Loaded:
    """The records of a file, and the line numbers (1-based) of lines that are not records."""

    records: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)


def parse_lines(data: bytes) -> Loaded:
    loaded = Loaded()
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("id"), str | int) and isinstance(record.get("mode"), str):
            loaded.records.append(record)
        else:
            loaded.bad_lines.append(number)
    return loaded


def load_records(path: str | Path) -> Loaded:
    """Records of an existing results file; a missing or unreadable one is an error."""
    file = Path(path)
    try:
        return parse_lines(file.read_bytes())
    except FileNotFoundError:
        raise ConfigurationError(f"results file not found: {file}") from None
    except OSError as exc:
        raise ConfigurationError(f"cannot read {file}: {exc.strerror}") from None


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The valid records of a results file (none when it does not exist yet)."""
    file = Path(path)
    return load_records(file).records if file.is_file() else []


def encode(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


class ResultsFile:
    """Append-only, crash-safe JSONL writer; holds the file's lock until closed."""

    def __init__(self, path: Path, lock: ResultsLock) -> None:
        self.path = path
        self._lock = lock
        self._serial = threading.Lock()
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            lock.release()
            raise write_error(path, exc) from None

    def _write(self, line: bytes) -> None:
        with self._serial:
            end = os.fstat(self._fd).st_size
            try:
                write_all(self._fd, line)
                os.fsync(self._fd)
            except OSError as exc:
                with suppress(OSError):
                    os.ftruncate(self._fd, end)  # never leave half a record behind
                raise write_error(self.path, exc) from None

    async def append(self, record: dict[str, Any]) -> None:
        """Write and fsync one record in a worker thread (not cancellable half-way: a record is whole)."""
        await anyio.to_thread.run_sync(self._write, encode(record))

    def close(self) -> None:
        try:
            os.close(self._fd)
        finally:
            self._lock.release()


def open_results(path: str | Path, *, resume: bool, overwrite: bool = False) -> tuple[ResultsFile, set[Key]]:
    """Lock and open the results file; with resume, return the (id, mode) pairs already done."""
    file = Path(path)
    lock = ResultsLock(file)
    try:
        if file.is_file() and file.stat().st_size > 0 and not (resume or overwrite):
            raise ConfigurationError(
                f"{file} already has results: set 'resume' to continue or 'overwrite'", options=("resume", "overwrite")
            )
        done: set[Key] = set()
        if resume and file.is_file():
            unique: dict[Key, dict[str, Any]] = {}
            for record in load_records(file).records:
                if record.get("error") is None:
                    unique.setdefault((str(record["id"]), str(record["mode"])), record)
            atomic_write(file, b"".join(encode(r) for r in unique.values()))
            done = set(unique)
        elif overwrite and file.exists():
            atomic_write(file, b"")
        return ResultsFile(file, lock), done
    except BaseException:
        lock.release()
        raise
