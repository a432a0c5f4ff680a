"""The wheel must carry every subpackage and the templates, built from a checkout without symlinks."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import sot
import sot.proxy
from sot.templates import Prompts

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _source_packages() -> set[str]:
    """Every folder with an __init__.py, named as it installs (package-dir maps backends/ and prompts/)."""
    found = set()
    for package, folder in SETUPTOOLS["package-dir"].items():
        for path, _, files in os.walk(ROOT / folder):
            if "__init__.py" in files and "__pycache__" not in path:
                rel = Path(path).relative_to(ROOT / folder).parts
                found.add(".".join((package, *rel)))
    return found


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    assert set(SETUPTOOLS["packages"]) == _source_packages()


def test_the_tree_has_no_symlinks() -> None:
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True)
    links = [line.split("\t")[1] for line in staged.stdout.splitlines() if line.startswith("120000")]
    assert links == []


def test_templates_load_from_the_installed_package() -> None:
    prompts = Prompts()
    for name in ("skeleton.j2", "expand.j2", "sequential.j2", "route.j2", "judge.j2"):
        assert prompts.raw(name).strip()
    assert sot.__version__ != "0.0.0"


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout to clone")
def test_wheel_from_a_checkout_with_symlinks_disabled(tmp_path: Path) -> None:
    """What Git on Windows does by default: links become plain files. The wheel must not care."""
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "-c", "core.symlinks=false", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True
    )
    # Uncommitted work is what is under test: copy the working tree's tracked files over the clone.
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).write_bytes(source.read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(clone)],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("sot_llm-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("sot/py.typed", "sot/backends/base.py", "sot/backends/local.py", "sot/prompts/skeleton.j2"):
        assert required in names
    assert not any(n.startswith(("backends/", "prompts/")) for n in names)
    # Installed on its own, the wheel's copy imports (and only it: no top-level `backends`).
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import sot.backends.local, sot.templates;"
        "print(sot.backends.local.__file__); print(sot.templates.Prompts().raw('skeleton.j2')[:5])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(target)], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[0].startswith(str(target))


def test_every_public_name_has_its_own_docstring() -> None:
    for name in sot.__all__:
        obj = getattr(sot, name)
        doc = (obj.__doc__ or "").strip()
        # A dataclass without a docstring gets its signature as one: that does not count.
        assert doc and not doc.startswith(f"{name}("), name


def _checked_names(module: Path) -> set[str]:
    """The names a package imports under ``if TYPE_CHECKING`` (what a type checker sees it export)."""
    tree = ast.parse(module.read_text())
    blocks = [n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
    imports = [node for block in blocks[:1] for node in block.body if isinstance(node, ast.ImportFrom)]
    return {alias.asname or alias.name for node in imports for alias in node.names}


@pytest.mark.parametrize("package", [sot, sot.proxy], ids=["sot", "sot.proxy"])
def test_lazy_exports_are_the_names_the_type_checker_sees(package: ModuleType) -> None:
    assert package.__file__ is not None
    seen = _checked_names(Path(package.__file__))
    assert seen == set(package.__all__) - {"__version__"}
    assert set(package._MODULE_OF) <= seen
    for name in package.__all__:
        assert getattr(package, name) is not None
