"""Tensor-parallel transformer-MLP blocks (Megatron-style), fwd+bwd+SGD: for ``--nproc``.

Each block is ``x + W2·gelu(W1·LayerNorm(x) + b1) + b2`` with ``W1`` split by columns and
``W2`` by rows across the ranks: every rank holds ``4·width / world`` hidden units, computes a
partial ``W2`` product, and one **all-reduce per block** sums the partials (forward); the
backward all-reduces the gradient of the block's input the same way (Megatron's ``f`` / ``g``
operators). The collectives are PyTorch's functional collectives
(``torch.distributed._functional_collectives.all_reduce``), which ``torch.compile`` traces
into the graph, so eager, ``compile``, ``reduce-overhead`` and a manual ``cudagraph`` capture
(NCCL on CUDA) all run it; on CPU (gloo) eager and ``compile``.

Run with ``traceviz profile workloads/tp_mlp.py --nproc N --modes all`` (``width`` divisible
into ``4·width / N``). The input is the same on every rank (tensor parallelism replicates
activations); weights are built whole from one seed and each rank keeps its slice, so an eager
single-process run of the whole MLP gives the same numbers. ``DATA_PARALLEL = False``: traceviz
does not wrap the model in DDP. Without ``--nproc`` the file is an ordinary workload: ``step``
is one device's whole-MLP forward.

``TRACEVIZ_TP_MLP_WIDTH`` / ``_BLOCKS`` / ``_TOKENS`` override the shape (CPU defaults are tiny
so CI stays fast).
"""

from __future__ import annotations

import os

import torch

DESCRIPTION = ("tensor-parallel MLP blocks, all-reduce per block (CUDA 4x2048, 512 tokens; "
               "CPU 2x32, 8 tokens)")
RTOL = 1e-3
ATOL = 1e-4
FLOAT64_REFERENCE = False
#: No DistributedDataParallel: the model is already split across the ranks.
DATA_PARALLEL = False
#: SGD learning rate.
LR = 1e-3


def _shape(device: torch.device) -> tuple[int, int, int]:
    cpu = device.type == "cpu"
    width = int(os.environ.get("TRACEVIZ_TP_MLP_WIDTH", 32 if cpu else 2048))
    blocks = int(os.environ.get("TRACEVIZ_TP_MLP_BLOCKS", 2 if cpu else 4))
    tokens = int(os.environ.get("TRACEVIZ_TP_MLP_TOKENS", 8 if cpu else 512))
    return width, blocks, tokens


def _world() -> tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _all_reduce(x: torch.Tensor) -> torch.Tensor:
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    return funcol.wait_tensor(funcol.all_reduce(x, "sum", dist.group.WORLD))


class _SumForward(torch.autograd.Function):
    """Megatron's ``g``: all-reduce in the forward, identity in the backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return _all_reduce(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


class _SumBackward(torch.autograd.Function):
    """Megatron's ``f``: identity in the forward, all-reduce of the gradient in the backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return _all_reduce(grad)


class TPBlock(torch.nn.Module):
    """One MLP block holding this rank's column slice of ``W1`` and row slice of ``W2``."""

    def __init__(self, width: int, rank: int, world: int) -> None:
        super().__init__()
        hidden = 4 * width
        if hidden % world:
            raise ValueError(f"4 x width ({hidden}) must divide into {world} ranks")
        part = hidden // world
        cols = slice(rank * part, (rank + 1) * part)
        w1, b1 = torch.randn(hidden, width) / width**0.5, torch.zeros(hidden)
        w2, b2 = torch.randn(width, hidden) / hidden**0.5, torch.zeros(width)
        self.norm = torch.nn.LayerNorm(width)
        self.w1 = torch.nn.Parameter(w1[cols].contiguous())
        self.b1 = torch.nn.Parameter(b1[cols].contiguous())
        self.w2 = torch.nn.Parameter(w2[:, cols].contiguous())
        self.b2 = torch.nn.Parameter(b2)
        self.world = world

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        if self.world > 1:
            h = _SumBackward.apply(h)
        h = torch.nn.functional.gelu(torch.nn.functional.linear(h, self.w1, self.b1))
        h = torch.nn.functional.linear(h, self.w2)
        if self.world > 1:
            h = _SumForward.apply(h)
        return x + h + self.b2


def make_model(device: torch.device) -> torch.nn.Module:
    """This rank's slice of the blocks (traceviz seeds torch before calling this)."""
    width, blocks, _ = _shape(device)
    rank, world = _world()
    return torch.nn.Sequential(*(TPBlock(width, rank, world) for _ in range(blocks))).to(device)


def make_batch(device: torch.device, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets), the same on every rank (activations are replicated)."""
    width, _, tokens = _shape(device)
    g = torch.Generator(device="cpu").manual_seed(1000)
    return (torch.randn(tokens, width, generator=g).to(device),
            torch.randn(tokens, width, generator=g).to(device))


def loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error."""
    return torch.nn.functional.mse_loss(output, target)


# --- the ordinary single-device interface (forward only) ------------------------------------


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """The input and one device's whole MLP weights (world size 1), as tensors."""
    torch.manual_seed(0)
    width, blocks, _ = _shape(device)
    model = torch.nn.Sequential(*(TPBlock(width, 0, 1) for _ in range(blocks))).to(device)
    x, _ = make_batch(device, 0)
    return (x, *(p.detach() for p in model.parameters()))


def step(x: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
    """The blocks' forward over explicit weights (per block, in ``parameters()`` order: w1, b1,
    w2, b2, norm weight, norm bias)."""
    h = x
    for w1, b1, w2, b2, nw, nb in zip(*(params[i::6] for i in range(6)), strict=True):
        y = torch.nn.functional.layer_norm(h, (h.shape[-1],), nw, nb)
        y = torch.nn.functional.gelu(torch.nn.functional.linear(y, w1, b1))
        h = h + torch.nn.functional.linear(y, w2) + b2
    return h
