"""The wheel must carry every subpackage and the templates: `pip install .` is not editable."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import sot
from sot.templates import Prompts

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    # sot/backends and sot/prompts are links to the top-level folders: follow them.
    found = {
        ".".join(Path(folder).relative_to(ROOT).parts)
        for folder, _, files in os.walk(ROOT / "sot", followlinks=True)
        if "__init__.py" in files
    }
    assert found == listed


def test_templates_load_from_the_installed_package() -> None:
    prompts = Prompts()
    for name in ("skeleton.j2", "expand.j2", "sequential.j2", "route.j2", "judge.j2", "skeleton.gbnf"):
        assert prompts.raw(name).strip()
    assert sot.__version__ != "0.0.0"
