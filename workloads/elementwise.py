"""Fusion showcase: a long pointwise chain over two 4M-element float32 vectors.

Eager launches one kernel per op (about a dozen, each reading and writing 16 MiB); Inductor fuses
the chain into one Triton kernel; ``triton_step`` is the same math written by hand as one kernel.
"""

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # no triton here: traceviz records the triton mode as skipped
    triton = None

DESCRIPTION = "pointwise chain of ~12 ops over 4M float32 (fusion showcase, hand-written Triton)"
RTOL = 1e-4
ATOL = 1e-5

N = 1 << 22
BLOCK = 1024


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Two float32 vectors of :data:`N` elements."""
    return (torch.randn(N, device=device), torch.randn(N, device=device))


def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The chain; every line is one or two eager kernels."""
    z = x * 1.5 + y
    z = torch.sigmoid(z) * z
    z = z * torch.sigmoid(y)
    z = torch.exp(-z * z) + z
    z = torch.where(z > 0, z, 0.1 * z)
    z = z / (1 + z.abs())
    return z * 0.5 + y * 0.25


if triton is not None:

    @triton.jit
    def _chain_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        z = x * 1.5 + y
        z = tl.sigmoid(z) * z
        z = z * tl.sigmoid(y)
        z = tl.exp(-z * z) + z
        z = tl.where(z > 0, z, 0.1 * z)
        z = z / (1 + tl.abs(z))
        tl.store(out_ptr + offs, z * 0.5 + y * 0.25, mask=mask)


def triton_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The same chain as one hand-written Triton kernel."""
    out = torch.empty_like(x)
    n = x.numel()
    _chain_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out
