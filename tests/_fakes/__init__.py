"""Test and benchmark fakes: a scripted OpenAI-compatible server and emulated providers.

Not shipped in the wheel: tests reach this package through pytest's rootdir (tests/ is on sys.path),
eval scripts through ``_bench_common.reach_test_fakes()``. ``providers`` (provider emulations),
``llama_server`` and ``vllm`` (stand-in servers run as ``python -m _fakes.…``) are imported by name.
"""

from .replies import Fault, Handler, Reply, SeenRequest, sot_script
from .server import FakeServer

__all__ = ["FakeServer", "Fault", "Handler", "Reply", "SeenRequest", "sot_script"]
