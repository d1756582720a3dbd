"""DDP training step of a 6-layer Linear+GELU MLP (width 2048, batch 64): for `--nproc`.

Run it on N ranks with ``traceviz profile workloads/ddp_mlp.py --nproc N``: traceviz starts one
process per rank (``torch.distributed.run``), wraps :func:`make_model` in
``DistributedDataParallel`` (NCCL on CUDA, gloo on CPU; gradient buckets of
:data:`BUCKET_CAP_MB`), and times forward + backward + SGD step. Without ``--nproc`` the file
is an ordinary workload: ``step`` is the model's forward on one device.

Straggler knob (README, "Distributed runs"): with ``TRACEVIZ_STRAGGLER_RANK=R`` and
``TRACEVIZ_STRAGGLER_DELAY_MS=D`` in the environment, rank R's host sleeps D ms at the start of
every step (before any GPU work of the step is launched), so its collectives arrive late.

The CPU (gloo) size is small so CI stays fast: ``TRACEVIZ_DDP_MLP_WIDTH`` / ``_LAYERS`` /
``_BATCH`` override the shape.
"""

from __future__ import annotations

import os
import time

import torch

DESCRIPTION = "DDP fwd+bwd+SGD of a Linear+GELU MLP (CUDA 6x2048, batch 64; CPU 2x64, batch 8)"
RTOL = 1e-3
ATOL = 1e-4
FLOAT64_REFERENCE = False

#: DDP gradient bucket size (MB).
BUCKET_CAP_MB = 8
#: SGD learning rate.
LR = 1e-3


def _shape(device: torch.device) -> tuple[int, int, int]:
    cpu = device.type == "cpu"
    width = int(os.environ.get("TRACEVIZ_DDP_MLP_WIDTH", 64 if cpu else 2048))
    layers = int(os.environ.get("TRACEVIZ_DDP_MLP_LAYERS", 2 if cpu else 6))
    batch = int(os.environ.get("TRACEVIZ_DDP_MLP_BATCH", 8 if cpu else 64))
    return width, layers, batch


def make_model(device: torch.device) -> torch.nn.Module:
    """The MLP (same weights on every rank: traceviz seeds torch before calling this)."""
    width, layers, _ = _shape(device)
    mods: list[torch.nn.Module] = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*mods).to(device)


def make_batch(device: torch.device, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's (inputs, targets): different data per rank, fixed across steps."""
    width, _, batch = _shape(device)
    g = torch.Generator(device="cpu").manual_seed(1000 + rank)
    x = torch.randn(batch, width, generator=g)
    y = torch.randn(batch, width, generator=g)
    return x.to(device), y.to(device)


def loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error."""
    return torch.nn.functional.mse_loss(output, target)


def before_step(rank: int) -> None:
    """The straggler knob: sleep on the chosen rank's host (see the module docstring)."""
    chosen = os.environ.get("TRACEVIZ_STRAGGLER_RANK")
    delay_ms = float(os.environ.get("TRACEVIZ_STRAGGLER_DELAY_MS", "0") or 0)
    if chosen is not None and chosen.strip() != "" and int(chosen) == rank and delay_ms > 0:
        time.sleep(delay_ms / 1000)


# --- the ordinary single-device interface (forward only) ------------------------------------


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Rank 0's inputs and the MLP's weights and biases, as tensors."""
    model = make_model(device)
    x, _ = make_batch(device, 0)
    return (x, *(p.detach() for p in model.parameters()))


def step(x: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
    """The MLP forward over explicit weights."""
    h = x
    for w, b in zip(params[0::2], params[1::2], strict=True):
        h = torch.nn.functional.gelu(torch.nn.functional.linear(h, w, b))
    return h
