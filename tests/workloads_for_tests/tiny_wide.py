"""``tiny.py`` on 128 floats: inputs of another shape, which ``profile --against`` refuses."""

import torch

DESCRIPTION = "tiny pointwise chain on 128 floats"


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One 128-element float32 vector."""
    return (torch.randn(128, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``relu(x * 2 + 1)``."""
    return torch.relu(x * 2 + 1)
