"""A rank's training step under CUDA graph trees, for a model that is not wrapped in DDP
(``workloads/tp_mlp.py``'s blocks on one GPU, no process group). With gradients zeroed in place
(``zero_grad(set_to_none=False)``) the second step failed: "accessing tensor output of CUDAGraphs
that has been overwritten by a subsequent run" (``.grad`` held the backward graph's outputs of
an earlier generation). GPU only."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

WORKLOAD = Path(__file__).resolve().parents[1] / "workloads" / "tp_mlp.py"


@pytest.mark.gpu
def test_a_model_without_ddp_trains_for_six_steps_in_reduce_overhead() -> None:
    import torch

    from traceviz.collect.rank_child import RankRun

    run = RankRun(str(WORKLOAD), "reduce-overhead", "cuda", {})
    module = run._module()
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = module.make_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    step = run._train_step(module, torch.compile(model, mode="reduce-overhead"), opt,
                           module.make_batch(device, 0))
    losses = [float(step()) for _ in range(6)]
    torch.cuda.synchronize()
    assert run.updates == 6
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0]  # SGD on a fixed batch: the loss falls
