"""KV-cache decode step with the capture hazard: the write position comes from ``pos.item()``.

The step reads the position on the host and writes and attends through Python-int slices
(``cache[:, :, p]``, ``cache[:, :, : p + 1]``), so the attention's shape changes every step.
Eager pays a host sync per step; torch.compile breaks the graph at ``.item()`` and recompiles
for the dynamic length; cudagraph trees record a new graph per length; a manual CUDA graph
cannot capture the sync (and would bake one position into the graph if it could).
Compare ``kv_cache_static.py``, the same math with fixed shapes.
"""

import torch

DESCRIPTION = "KV-cache decode step, cache written/read by pos.item() slices (capture hazard)"
RTOL = 1e-4
ATOL = 1e-5
# inputs: q, k_new, v_new, k_cache, v_cache, pos
STATIC_INPUTS = (3, 4, 5)

HEADS, DIM, MAX_LEN, START = 16, 64, 1024, 512


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """One token's q/k/v, half-filled caches and the next position (0-d int64)."""
    def token() -> torch.Tensor:
        return torch.randn(1, HEADS, 1, DIM, device=device)

    k_cache = torch.zeros(1, HEADS, MAX_LEN, DIM, device=device)
    v_cache = torch.zeros(1, HEADS, MAX_LEN, DIM, device=device)
    k_cache[:, :, :START] = torch.randn(1, HEADS, START, DIM, device=device)
    v_cache[:, :, :START] = torch.randn(1, HEADS, START, DIM, device=device)
    pos = torch.tensor(START, device=device)
    return token(), token(), token(), k_cache, v_cache, pos


def step(
    q: torch.Tensor,
    k_new: torch.Tensor,
    v_new: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    pos: torch.Tensor,
) -> torch.Tensor:
    """Write this token at ``pos``, attend over positions ``0..pos``, advance ``pos``."""
    p = int(pos.item())  # host sync; graph break under torch.compile; illegal in capture
    k_cache[:, :, p] = k_new[:, :, 0]
    v_cache[:, :, p] = v_new[:, :, 0]
    k = k_cache[:, :, : p + 1]
    v = v_cache[:, :, : p + 1]
    attn = torch.softmax(q @ k.transpose(-1, -2) * DIM**-0.5, dim=-1)
    pos.add_(1).remainder_(MAX_LEN)
    return attn @ v
