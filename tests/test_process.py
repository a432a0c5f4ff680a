"""The managed server's log follower: every byte once, in order, and the exit as one error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sot.backends.process import ManagedServer
from sot.errors import LocalServerError

pytestmark = pytest.mark.anyio

CHILD = r"""
import sys, time
out = sys.stdout.buffer
for i in range(40):
    out.write(f"line {i} caf\u00e9 \u2603\n".encode()); out.flush()
    if i % 10 == 0:
        time.sleep(0.05)
out.write(b"fatal: no model\n"); out.flush()
sys.exit(3)
"""


async def test_follow_log_copies_each_byte_once_and_names_the_exit(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    server = ManagedServer("test-server", lambda port: [], log_path=log_path)
    with log_path.open("wb") as log:
        server.process = subprocess.Popen([sys.executable, "-c", CHILD], stdout=log, stderr=subprocess.STDOUT)
    written: list[str] = []
    with pytest.raises(LocalServerError, match="exited with code 3: fatal: no model"):
        await server.follow_log(written.append)
    expected = "".join(f"line {i} caf\u00e9 \u2603\n" for i in range(40)) + "fatal: no model\n"
    assert "".join(written) == expected
