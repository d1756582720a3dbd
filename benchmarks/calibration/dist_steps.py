"""The distributed calibration workloads (``traceviz profile W --nproc N``): DDP of a small MLP
plus a gradient payload, with one injected effect.

Generated files (:mod:`benchmarks.calibration.cells`) call :func:`build` with a config; it
returns the ``--nproc`` interface of ``workloads/README.md`` (``make_model``, ``make_batch``,
``loss``, ``before_step``) plus the single-device one (``make_inputs``, ``step``: the forward).

**Base work**: ``layers`` rounds of ``gelu(Linear(width))`` over ``batch`` rows, wrapped in
DDP by traceviz. The model also holds a ``payload`` parameter of ``payload`` float32 elements
that enters the loss as ``payload.sum() * 0`` (its gradient is zeros, but DDP all-reduces it
with the weights' gradients each step): the collective's size is set by ``payload``.

**Effects** (config keys; absent on side A):

``straggler_ns``  rank :data:`SLOW_RANK`'s host busy-waits this long at the start of every step
                  (``before_step``, before any of the step's work is launched).
``payload``       the payload parameter's element count (×4 on side B of the payload cell).
``compute_x``     rank :data:`SLOW_RANK` runs its MLP this many times per forward (2 on side B
                  of the compute cell; the same parameters, so DDP's buckets are unchanged).
"""

from __future__ import annotations

import torch

from benchmarks.calibration.steps import spin

#: The rank that the straggler and compute effects slow down.
SLOW_RANK = 1


class CalibMLP(torch.nn.Module):
    """``layers`` × (Linear + GELU) run ``repeat`` times, plus the payload parameter."""

    def __init__(self, width: int, layers: int, payload: int, repeat: int) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(
            *(m for _ in range(layers) for m in (torch.nn.Linear(width, width), torch.nn.GELU())))
        self.payload = torch.nn.Parameter(torch.zeros(payload))
        self.repeat = repeat

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for _ in range(self.repeat):
            h = self.body(h)
        return h + self.payload.sum() * 0.0


def _rank() -> int:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def build(config: dict[str, object]) -> dict[str, object]:
    """The workload interface for ``config`` (keys: ``name``, ``width``, ``layers``, ``batch``,
    ``payload``, ``straggler_ns``, ``compute_x``; module doc)."""
    width, layers, batch = (int(config[k]) for k in ("width", "layers", "batch"))  # type: ignore[call-overload]
    payload = int(config["payload"])  # type: ignore[call-overload]
    straggler_ns = int(config.get("straggler_ns", 0))  # type: ignore[call-overload]
    compute_x = int(config.get("compute_x", 1))  # type: ignore[call-overload]

    def make_model(device: torch.device) -> torch.nn.Module:
        """This rank's model (rank :data:`SLOW_RANK` repeats the MLP ``compute_x`` times)."""
        repeat = compute_x if _rank() == SLOW_RANK else 1
        return CalibMLP(width, layers, payload, repeat).to(device)

    def make_batch(device: torch.device, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
        """This rank's (inputs, targets): ``batch × width``, fixed across steps."""
        g = torch.Generator(device="cpu").manual_seed(1000 + rank)
        return (torch.randn(batch, width, generator=g).to(device),
                torch.randn(batch, width, generator=g).to(device))

    def loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean squared error."""
        return torch.nn.functional.mse_loss(output, target)

    def before_step(rank: int) -> None:
        """The straggler: busy-wait on rank :data:`SLOW_RANK`'s host."""
        if rank == SLOW_RANK:
            spin(straggler_ns)

    def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
        """Rank 0's inputs and one device's weights and biases (the single-device interface:
        the forward only)."""
        params = CalibMLP(width, layers, payload, 1).to(device).body.parameters()
        return (make_batch(device, 0)[0], *(p.detach() for p in params))

    def step(x: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
        """The MLP forward over explicit weights (the payload adds 0)."""
        h = x
        for w, b in zip(params[0::2], params[1::2], strict=True):
            h = torch.nn.functional.gelu(torch.nn.functional.linear(h, w, b))
        return h

    return {"DESCRIPTION": f"calibration {config['name']}: DDP {layers}x{width} MLP, batch "
                           f"{batch}, payload {payload} floats, straggler {straggler_ns} ns, "
                           f"compute x{compute_x} on rank {SLOW_RANK}",
            "RTOL": 1e-3, "ATOL": 1e-4, "FLOAT64_REFERENCE": False, "LR": 1e-3,
            "make_model": make_model, "make_batch": make_batch, "loss": loss,
            "before_step": before_step, "make_inputs": make_inputs, "step": step}
