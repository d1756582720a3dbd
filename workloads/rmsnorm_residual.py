"""Reduction workload: residual add + RMSNorm over 4096 rows of 2048 float32.

Eager runs the add, square, mean, rsqrt and scalings as separate kernels; Inductor emits one
(persistent) reduction kernel; ``triton_step`` is one hand-written kernel, a row per program.
Returns the normalised output and the new residual stream.
"""

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # no triton here: traceviz records the triton mode as skipped
    triton = None

DESCRIPTION = "residual add + RMSNorm, 4096x2048 float32 (reduction, hand-written Triton)"
RTOL = 1e-4
ATOL = 1e-4

ROWS, COLS = 4096, 2048
EPS = 1e-6


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Activations, residual stream and the norm's weight."""
    x = torch.randn(ROWS, COLS, device=device)
    residual = torch.randn(ROWS, COLS, device=device)
    weight = 1 + 0.1 * torch.randn(COLS, device=device)
    return x, residual, weight


def step(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``h = x + residual``; ``out = h * rsqrt(mean(h²) + eps) * weight``."""
    h = x + residual
    inv_rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return h * inv_rms * weight, h


if triton is not None:

    @triton.jit
    def _rmsnorm_residual_kernel(
        x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, n_cols, eps, BLOCK: tl.constexpr
    ):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        base = row * n_cols
        h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + tl.load(
            r_ptr + base + cols, mask=mask, other=0.0
        )
        tl.store(h_ptr + base + cols, h, mask=mask)
        inv_rms = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + base + cols, h * inv_rms * w, mask=mask)


def triton_step(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same step as one hand-written Triton kernel (one program per row)."""
    out = torch.empty_like(x)
    h = torch.empty_like(x)
    rows, cols = x.shape
    _rmsnorm_residual_kernel[(rows,)](
        x, residual, weight, out, h, cols, EPS, BLOCK=triton.next_power_of_2(cols)
    )
    return out, h
