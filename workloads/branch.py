"""A data-dependent branch: ``if h.mean() > 0`` needs the value on the host.

Dynamo breaks the graph at the branch (two or three compiled graphs with eager glue and a
device-to-host sync between them); ``reduce-overhead`` can graph each piece but not the sync,
so its win shrinks or vanishes. A manual CUDA graph cannot capture the sync at all.
"""

import torch

DESCRIPTION = "matmul + data-dependent branch + pointwise tail (graph break, host sync)"
RTOL = 1e-4
ATOL = 1e-4

ROWS, WIDTH = 256, 512


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Activations and one weight matrix, float32."""
    return (
        torch.randn(ROWS, WIDTH, device=device),
        torch.randn(WIDTH, WIDTH, device=device) / WIDTH**0.5,
    )


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Matmul, then a branch on the mean of the result, then a pointwise tail."""
    h = torch.tanh(x @ w)
    # data-dependent: a graph break and a device-to-host sync
    h = h * 2 + 1 if h.mean() > 0 else h * 0.5 - 1
    h = torch.sigmoid(h) * h + torch.cos(h)
    return h * h.mean(dim=-1, keepdim=True)
