"""Training step: forward + backward of a 3-layer MLP, then a hand-rolled SGD-momentum update.

The update is a per-parameter loop (18 small kernels) under ``torch.compiler.disable``, the way
a user who compiles only the model leaves the optimizer eager: with ``reduce-overhead`` the
forward and backward graphs are CUDA-graphed, ``loss.backward()`` is a graph break, and the
optimizer's launches stay. Parameters and momentum buffers are state (``STATIC_INPUTS``).
"""

import itertools

import torch

DESCRIPTION = "MLP training step (fwd+bwd+SGD-momentum), optimizer left eager"
RTOL = 1e-3
ATOL = 1e-5
# inputs: x, target, then 3 x (weight, bias), then their 6 momentum buffers
STATIC_INPUTS = tuple(range(2, 14))

BATCH, DIMS = 256, (512, 1024, 1024, 64)
LR, MOMENTUM = 1e-2, 0.9


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Batch, targets, parameters (as ``nn.Parameter``) and zeroed momentum buffers."""
    params = []
    for fan_in, fan_out in itertools.pairwise(DIMS):
        w = torch.randn(fan_in, fan_out, device=device) / fan_in**0.5
        params.append(torch.nn.Parameter(w))
        params.append(torch.nn.Parameter(torch.zeros(fan_out, device=device)))
    buffers = [torch.zeros_like(p, requires_grad=False) for p in params]
    x = torch.randn(BATCH, DIMS[0], device=device)
    target = torch.randn(BATCH, DIMS[-1], device=device)
    return (x, target, *params, *buffers)


@torch.compiler.disable
def _sgd_momentum_(params: tuple[torch.Tensor, ...], buffers: tuple[torch.Tensor, ...]) -> None:
    """``buf = momentum * buf + grad; p -= lr * buf``, one parameter at a time, eagerly."""
    with torch.no_grad():
        for p, buf in zip(params, buffers, strict=True):
            buf.mul_(MOMENTUM).add_(p.grad)
            p.add_(buf, alpha=-LR)
            p.grad = None


def step(x: torch.Tensor, target: torch.Tensor, *state: torch.Tensor) -> torch.Tensor:
    """Forward, MSE loss, backward, update; returns the loss before the update."""
    params, buffers = state[:6], state[6:]
    h = x
    for i in range(0, 6, 2):
        h = h @ params[i] + params[i + 1]
        if i < 4:
            h = torch.nn.functional.gelu(h)
    loss = torch.nn.functional.mse_loss(h, target)
    loss.backward()
    _sgd_momentum_(params, buffers)
    return loss.detach()
