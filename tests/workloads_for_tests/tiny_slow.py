"""``tiny.py`` made slower on purpose, for ``profile --against`` tests: the same inputs and
outputs, plus 40 extra multiplications by one (40 more ops per step)."""

import torch

DESCRIPTION = "tiny pointwise chain with 40 extra no-op multiplications (64 floats)"
RTOL = 1e-4
ATOL = 1e-5


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One 64-element float32 vector (as ``tiny.py``)."""
    return (torch.randn(64, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``relu(x * 2 + 1)``, the intermediate multiplied by 1.0 forty times first."""
    y = x * 2 + 1
    for _ in range(40):
        y = y * 1.0
    return torch.relu(y)
