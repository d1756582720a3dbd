"""A tiny DDP workload (CPU, gloo) whose ``prepare_mode`` fails on purpose, for the
``--nproc`` failure tests: ``TRACEVIZ_TEST_FAIL="<mode>:<rank>:<raise|hang|stall|linger>,…"``
makes that rank raise, or sleep for an hour, in that mode, before the mode's step is built.
``stall`` first prints the line NCCL's watchdog prints (torch's ``[rankN]:`` prefix included)
when a collective times out, as a rank left waiting for a hung peer does on a GPU with async
error handling off, where it then stays blocked. ``linger`` lets the rank run the mode to the
end and sleep for an hour on its way out (at interpreter exit, after its result is written), as
ranks hung tearing down their process group do."""

from __future__ import annotations

import atexit
import os
import sys
import time

import torch

DESCRIPTION = "tiny DDP MLP with an injected failure (tests)"
WIDTH, BATCH = 16, 4


def make_model(device: torch.device) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()).to(device)


def make_batch(device: torch.device, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cpu").manual_seed(1000 + rank)
    return (torch.randn(BATCH, WIDTH, generator=g).to(device),
            torch.randn(BATCH, WIDTH, generator=g).to(device))


def loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(output, target)


def prepare_mode(mode: str, rank: int) -> None:
    for item in filter(None, os.environ.get("TRACEVIZ_TEST_FAIL", "").split(",")):
        m, r, how = item.split(":")
        if m == mode and int(r) == rank:
            if how == "linger":
                atexit.register(time.sleep, 3600)
                continue
            if how == "stall":
                print(f"[rank{rank}]:[E ProcessGroupNCCL.cpp:689] [Rank {rank}] Watchdog caught "
                      "collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran "
                      "for 60001 milliseconds before timing out.", file=sys.stderr, flush=True)
            if how in ("hang", "stall"):
                time.sleep(3600)
            raise RuntimeError(f"injected failure on rank {rank} in {mode}")


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    return (make_batch(device, 0)[0],)


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x)
