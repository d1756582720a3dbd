"""Launch-bound decode-style step: 24 tiny layers on a batch of one 256-wide token.

Each layer is an RMSNorm, a 256x256 matmul, SiLU and a residual add: every kernel is a few
microseconds of GPU work, so eager (about 8 launches a layer, ~190 a step) is bound by launch
overhead; Inductor fuses the pointwise parts but still launches per layer; a CUDA graph replays
the whole step with one launch.
"""

import torch

DESCRIPTION = "decode-style loop: 24 tiny layers, batch 1, width 256 (launch-bound)"
RTOL = 1e-3
ATOL = 1e-4

LAYERS, WIDTH = 24, 256
EPS = 1e-6


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One token's hidden state, stacked layer weights and norm gains, float32."""
    return (
        torch.randn(1, WIDTH, device=device),
        torch.randn(LAYERS, WIDTH, WIDTH, device=device) * (0.5 / WIDTH**0.5),
        1 + 0.1 * torch.randn(LAYERS, WIDTH, device=device),
    )


def step(x: torch.Tensor, weights: torch.Tensor, gains: torch.Tensor) -> torch.Tensor:
    """All layers, in a Python loop as a decode step would run them."""
    for i in range(LAYERS):
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * gains[i]
        x = x + torch.nn.functional.silu(normed @ weights[i])
    return x
