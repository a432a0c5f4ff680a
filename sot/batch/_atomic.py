"""Writing files without losing what is there: one write function, atomic replacement, one-line errors.

Every byte the batch commands put on disk goes through ``write_all``. A file that is replaced
(a resumed results file, a report) is written to a temporary file beside it, fsynced and renamed
over the original, so a crash or a full disk leaves either the old file or the new one, never a
mix; the temporary file is removed on every path.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from ..errors import ConfigurationError


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_error(path: Path, exc: OSError, *, records: bool = True) -> ConfigurationError:
    """An OSError met while writing `path`, as one line that says what to do. `records`: a results file
    that `resume` continues and `out` names; otherwise a file written whole (a report, a chart)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = "the disk is full: free some space, then run the same again" + (" with 'resume'" if records else "")
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "no permission to write there: choose another " + ("'out'" if records else "place for it")
    else:
        fix = exc.strerror or type(exc).__name__
    kept = " (records already on disk are kept)" if records else ""
    return ConfigurationError(f"cannot write {path}: {fix}{kept}", options=("resume", "out") if records else ())


def atomic_write(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data` all at once; on any failure the old file stays and no temporary is left."""
    target = Path(path)
    temporary: str | None = None
    try:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise write_error(target, exc, records=False) from None
    finally:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
