"""Tiny pointwise workload for CI: a few ops on 64 floats, quick to compile on a CPU."""

import torch

DESCRIPTION = "tiny pointwise chain for CI (64 floats)"
RTOL = 1e-4
ATOL = 1e-5


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One 64-element float32 vector."""
    return (torch.randn(64, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``relu(x * 2 + 1)``: one fused kernel under torch.compile."""
    return torch.relu(x * 2 + 1)
