"""The results file: one JSON line per (id, mode), appended and fsynced as soon as it is done.

A line is written with one ``os.write`` of the whole record and then fsynced, so a kill -9 at any
moment leaves at most one torn last line. ``open_results`` repairs that line and, on resume,
drops failed records so that a re-run leaves every (id, mode) exactly once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

Key = tuple[str, str]


def _valid_lines(data: bytes) -> list[dict[str, Any]]:
    records = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a torn line (only the last can be)
        if isinstance(record, dict) and "id" in record and "mode" in record:
            records.append(record)
    return records


def read_records(path: str | Path) -> list[dict[str, Any]]:
    file = Path(path)
    return _valid_lines(file.read_bytes()) if file.is_file() else []


class ResultsFile:
    """Append-only, crash-safe JSONL writer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def open_results(path: str | Path, *, resume: bool, overwrite: bool = False) -> tuple[ResultsFile, set[Key]]:
    """Open the results file; with resume, return the (id, mode) pairs already done."""
    file = Path(path)
    if file.is_file() and file.stat().st_size > 0 and not (resume or overwrite):
        raise ConfigurationError(f"{file.name} already has results: pass --resume to continue or --overwrite")
    done: set[Key] = set()
    if resume and file.is_file():
        kept = [r for r in read_records(file) if r.get("error") is None]
        unique: dict[Key, dict[str, Any]] = {}
        for record in kept:
            unique.setdefault((str(record["id"]), str(record["mode"])), record)
        temporary = file.with_name(file.name + ".tmp")
        with temporary.open("wb") as handle:
            for record in unique.values():
                handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(file)
        done = set(unique)
    elif overwrite and file.exists():
        file.write_bytes(b"")
    return ResultsFile(file), done
