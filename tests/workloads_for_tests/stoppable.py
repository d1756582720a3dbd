"""A workload whose compiled step misbehaves on demand, for crash / interrupt / resume tests.

``STOPPABLE_KIND`` (environment variable, read at import) picks what happens while torch.compile
traces the step: ``ok`` (nothing: compiles normally), ``hang`` (sleeps for an hour) or
``null-read`` (reads address 0 through ctypes: a real segmentation fault, the child dies by
SIGSEGV). Eager and the eager reference never take these paths.
"""

import ctypes
import os
import time

import torch

DESCRIPTION = "tiny pointwise step that hangs or crashes under torch.compile on demand (test)"
KIND = os.environ.get("STOPPABLE_KIND", "ok")


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One 16-element float32 vector."""
    return (torch.randn(16, device=device),)


def _misbehave() -> None:
    if KIND == "hang":
        time.sleep(3600)
    elif KIND == "null-read":
        ctypes.string_at(0)


def step(x: torch.Tensor) -> torch.Tensor:
    """``x * 2 + 1``; misbehaves (see the module docstring) while torch.compile traces it."""
    if torch.compiler.is_compiling():
        _misbehave()
    return x * 2 + 1
