"""KV-cache decode step with fixed shapes: captures cleanly.

The same math as ``kv_cache_dynamic.py``, but the write is ``index_copy_`` at the position
tensor and the attention runs over the whole cache with a mask ``arange(MAX_LEN) <= pos``: no
host sync and no shape change, so torch.compile makes one graph and CUDA graphs replay it.
"""

import torch

DESCRIPTION = "KV-cache decode step, index_copy_ + mask over the full cache (static shapes)"
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
    """Write this token at ``pos``, attend over positions ``0..pos`` by mask, advance ``pos``."""
    index = pos.view(1)
    k_cache.index_copy_(2, index, k_new)
    v_cache.index_copy_(2, index, v_new)
    scores = q @ k_cache.transpose(-1, -2) * DIM**-0.5
    visible = torch.arange(MAX_LEN, device=q.device) <= pos
    attn = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
    pos.add_(1).remainder_(MAX_LEN)
    return attn @ v_cache
