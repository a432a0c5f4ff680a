"""Run in place from a source checkout, ``sot.backends`` and ``sot.prompts`` resolve as installed.

Installed, setuptools' package-dir puts backends/ and prompts/ inside the sot package. In a checkout
(`python -m sot` from the repo root, where Python finds ./sot first) they sit beside it: adding the
checkout to the package's search path lets them resolve there too.
"""

from __future__ import annotations

import sys
from pathlib import Path

_package = sys.modules[__name__.rpartition(".")[0]]
_here = Path(__file__).resolve().parent
if not (_here / "backends").is_dir() and (_here.parent / "backends" / "__init__.py").is_file():
    _package.__path__.append(str(_here.parent))
