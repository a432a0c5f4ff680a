"""A twin of a batched GPU inference server (vLLM, llama.cpp's server), for benchmarks: real HTTP and
SSE, OpenAI's chat API, vLLM's /metrics and llama.cpp's /slots, and time that behaves as a GPU's does
when many streams share it. Not part of sot: it lives in eval/ and answers only sot's kind of prompts.
"""

from .answers import Plan, Writer, plan
from .app import build_app
from .engine import Engine, Stream
from .physics import NIM_LLAMA_8B_H100, TwinConfig, describe_table, parse_table, step_ms
from .recognise import Recognised, recognise
from .server import TwinServer

__all__ = [
    "NIM_LLAMA_8B_H100",
    "Engine",
    "Plan",
    "Recognised",
    "Stream",
    "TwinConfig",
    "TwinServer",
    "Writer",
    "build_app",
    "describe_table",
    "parse_table",
    "plan",
    "recognise",
    "step_ms",
]
