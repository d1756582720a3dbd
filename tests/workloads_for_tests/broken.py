"""A deliberately broken workload: correct in eager, broken under torch.compile.

``BROKEN_KIND`` (environment variable, read at import) picks how the compiled step breaks:
``raise`` (a shape error) or ``mismatch`` (returns a different value); a step that hangs is
``stoppable.py``.
Eager and the eager reference never take the broken path.
"""

import os

import torch

DESCRIPTION = "tiny pointwise step that breaks under torch.compile (test workload)"
KIND = os.environ.get("BROKEN_KIND", "raise")


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One 16-element float32 vector."""
    return (torch.randn(16, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``x * 2`` in eager; broken while torch.compile traces it."""
    if torch.compiler.is_compiling():
        if KIND == "raise":
            return x.view(5, 5)  # 16 elements: the compiled step raises a shape error
        if KIND == "mismatch":
            return x * 2 + 1
    return x * 2
