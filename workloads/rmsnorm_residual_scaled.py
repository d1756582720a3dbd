"""A variant of ``rmsnorm_residual.py`` for before/after reviews: the residual sum is scaled by
``SCALE`` (1.0) before the norm — numerically the same step with one more full-size pointwise
pass.

Eager runs it as one extra kernel (a read and a write of 4096×2048 float32, ~32 MiB each way);
Inductor fuses it into the same single reduction kernel. So against ``rmsnorm_residual.py`` the
known change is: eager slower by that one kernel, compile unchanged (``docs/comparison.md``,
"Two runs"). No ``triton_step``: the triton mode is recorded as skipped.
"""

import torch

DESCRIPTION = "residual add + RMSNorm with an extra pointwise scale, 4096x2048 float32"
RTOL = 1e-4
ATOL = 1e-4

ROWS, COLS = 4096, 2048
EPS = 1e-6
SCALE = 1.0


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Activations, residual stream and the norm's weight (as ``rmsnorm_residual.py``)."""
    x = torch.randn(ROWS, COLS, device=device)
    residual = torch.randn(ROWS, COLS, device=device)
    weight = 1 + 0.1 * torch.randn(COLS, device=device)
    return x, residual, weight


def step(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``h = (x + residual) × SCALE``; ``out = h * rsqrt(mean(h²) + eps) * weight``."""
    h = (x + residual) * SCALE
    inv_rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return h * inv_rms * weight, h
