"""One rank of a distributed mode run: ``python -m torch.distributed.run … -m
traceviz.collect.rank_child WORKLOAD MODE RUN_DIR --device D --settings JSON``.

The rank reads ``RANK`` / ``LOCAL_RANK`` / ``WORLD_SIZE`` (set by ``torch.distributed.run``),
joins the process group (NCCL on ``cuda:LOCAL_RANK``, gloo on CPU), wraps the workload's
``make_model`` in ``DistributedDataParallel`` and runs forward + backward + SGD steps in the
mode: eager, torch.compile (any compile mode, the DDP module compiled), or a manual
``torch.cuda.CUDAGraph`` capture of the whole training step. The phases are those of
:class:`traceviz.collect.profiled_step.StepRun`, in lockstep with the other ranks: first call
(after the process group is up and the model built), check (parameters after the same number
of updates as an eager DDP run), timing (barrier before every repeat, the same steps per repeat
on every rank; the warm-up is its ``warmup`` steps, with no minimum seconds), paired timing
against an eager step built on every rank (ABBA blocks in lockstep,
:mod:`traceviz.collect.paired`), tracing (barrier before and after). It writes
``logs/<mode>.rank<r>.result.json`` and ``<mode>.rank<r>.pt.trace.json.gz``, and never raises: a
failure is the result's reason.

Each phase it enters is also written to ``logs/<mode>.rank<r>.phase`` (a line: the phase), so
that when a mode times out the parent can name the rank that was behind the others (a rank
that hangs in its capture while its peers wait in their first collective). The process group
times out after the mode's timeout (``--timeout``), so a rank left waiting for a dead or
hung peer ends by itself too.

A workload that is not data-parallel sets ``DATA_PARALLEL = False`` (``workloads/tp_mlp.py``):
its ``make_model`` is used as it is (no ``DistributedDataParallel``). A workload may define
``prepare_mode(mode, rank)``, called on every rank before the mode's step is built (after the
process group is up): it may raise to refuse the mode on that rank.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traceviz.atomic import write_text_atomic
from traceviz.collect.mode_names import COMPILE_MODES, CUDAGRAPH_TREE_MODES
from traceviz.collect.profiled_step import StepRun, phase, write_json

#: Functions a workload needs for ``--nproc`` (see workloads/ddp_mlp.py).
DISTRIBUTED_API = ("make_model", "make_batch", "loss")
#: Side-stream warm-up steps before the manual capture (each is a real training step). The
#: PyTorch CUDA-graphs notes ask for at least 11 DDP-enabled eager iterations before a
#: full-backward capture, DDP constructed on a side stream, and NCCL async error handling off.
CAPTURE_WARMUP_STEPS = 11


def rank_result_path(run_dir: Path, mode: str, rank: int) -> Path:
    return run_dir / "logs" / f"{mode}.rank{rank}.result.json"


def rank_trace_path(run_dir: Path, mode: str, rank: int) -> Path:
    return run_dir / f"{mode}.rank{rank}.pt.trace.json.gz"


def rank_phase_path(run_dir: Path, mode: str, rank: int) -> Path:
    return run_dir / "logs" / f"{mode}.rank{rank}.phase"


class ProcessGroupLockstep:
    """:class:`traceviz.collect.paired.Lockstep` over the default process group."""

    def __init__(self, barrier: Callable[[], None]) -> None:
        self.barrier = barrier  # type: ignore[method-assign]

    def gather(self, values: list[float]) -> list[list[float]]:
        import torch.distributed as dist

        out: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(out, [float(v) for v in values])
        return [list(v) for v in out]


class RankRun(StepRun):
    """One rank's run of a mode (:class:`~traceviz.collect.profiled_step.StepRun`), its
    timing and trace in lockstep with the other ranks; ``RANK`` / ``LOCAL_RANK`` /
    ``WORLD_SIZE`` from the environment."""

    #: A rank's timing warm-up is its ``warmup`` steps alone (no minimum seconds).
    min_warm_s = 0.0

    def __init__(self, workload_path: str, mode: str, device: str, settings: dict[str, Any]):
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        super().__init__(workload_path, mode, device, settings, rank=self.rank,
                         local_rank=self.local_rank, hostname=socket.gethostname())
        self.lockstep = ProcessGroupLockstep(self._barrier)
        self.updates = 0  # training steps applied to the mode's model
        self.phase_file: Path | None = None

    def announce(self, name: str) -> None:
        """Write the phase to this rank's phase file; rank 0 also tells the parent."""
        if self.phase_file is not None:
            write_text_atomic(self.phase_file, name + "\n")
        if self.rank == 0:
            phase(name)

    def _module(self) -> Any:
        from traceviz.collect.workload import load_workload

        wl = load_workload(self.workload_path)
        module = sys.modules[f"traceviz_workload_{wl.path.stem}"]
        missing = [f for f in DISTRIBUTED_API if not callable(getattr(module, f, None))]
        if missing:
            raise ValueError(f"{wl.path.name} is not a distributed workload: it lacks "
                             f"{', '.join(missing)}() (see workloads/ddp_mlp.py)")
        return module

    def _ddp(self, module: Any, device: Any) -> tuple[Any, Any]:
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        torch.manual_seed(0)
        model = module.make_model(device)
        opt_lr = float(getattr(module, "LR", 1e-3))
        if not getattr(module, "DATA_PARALLEL", True):
            return model, torch.optim.SGD(model.parameters(), lr=opt_lr)
        kwargs: dict[str, Any] = {}
        if getattr(module, "BUCKET_CAP_MB", None):
            kwargs["bucket_cap_mb"] = module.BUCKET_CAP_MB
        ddp = DDP(model, device_ids=[self.local_rank] if self.cuda else None, **kwargs)
        opt = torch.optim.SGD(ddp.parameters(), lr=opt_lr)
        return ddp, opt

    def _train_step(self, module: Any, fwd: Callable[..., Any], opt: Any,
                    batch: tuple[Any, Any]) -> Callable[[], Any]:
        """One training step (eager or compiled ``fwd``), gradients set to None first.

        ``zero_grad(set_to_none=True)`` (PyTorch's default) matters under CUDA graph trees: a
        model that is not wrapped in DDP would otherwise keep, as ``.grad``, the backward
        graph's outputs of an earlier generation, and accumulating into them fails with
        "accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"
        (DDP's gradient buckets are allocated outside the graphs' pool, so ``ddp_mlp`` ran).
        """
        x, y = batch
        before = getattr(module, "before_step", None)
        mark = self.mode in CUDAGRAPH_TREE_MODES

        def call() -> Any:
            import torch

            if before is not None:
                before(self.rank)
            if mark:
                torch.compiler.cudagraph_mark_step_begin()
            opt.zero_grad(set_to_none=True)
            out = module.loss(fwd(x), y)
            out.backward()
            opt.step()
            self.updates += 1
            return out

        return call

    def _captured(self, module: Any, ddp: Any, opt: Any, batch: tuple[Any, Any]
                  ) -> Callable[[], Any]:
        """The whole training step captured in one CUDA graph (host delay outside it)."""
        import torch

        x, y = batch

        def body() -> Any:
            opt.zero_grad(set_to_none=False)  # the graph replays into the same .grad tensors
            out = module.loss(ddp(x), y)
            out.backward()
            opt.step()
            return out

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(CAPTURE_WARMUP_STEPS):
                body()
                self.updates += 1
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = body()
        before = getattr(module, "before_step", None)

        def call() -> Any:
            if before is not None:
                before(self.rank)
            graph.replay()
            self.updates += 1
            return static_loss

        return call

    def _barrier(self) -> None:
        import torch.distributed as dist

        if self.cuda:
            dist.barrier(device_ids=[self.local_rank])
        else:
            dist.barrier()

    def _eager_step(self, module: Any, device: Any, batch: tuple[Any, Any]
                    ) -> Callable[[], Any]:
        """An eager training step of a model of its own (the paired timing's baseline)."""
        model, opt = self._ddp(module, device)
        return self._train_step(module, model, opt, batch)

    def _first_step(self, module: Any, ddp: Any, opt: Any, batch: tuple[Any, Any]
                    ) -> Callable[[], Any]:
        """The mode's one-off work: the workload's ``prepare_mode``, the step built (compiled or
        captured) and called once; returns the step."""
        import torch

        prepare = getattr(module, "prepare_mode", None)
        if prepare is not None:
            prepare(self.mode, self.rank)
        if self.mode == "cudagraph":
            if not self.cuda:
                raise ValueError("cudagraph needs CUDA")
            step = self._captured(module, ddp, opt, batch)
        else:
            fwd = ddp
            if self.mode in COMPILE_MODES:
                fwd = torch.compile(ddp, **({} if self.mode == "compile" else
                                             {"mode": self.mode}))
            step = self._train_step(module, fwd, opt, batch)
        step()
        return step

    def run(self, run_dir: Path) -> None:
        """All phases; exceptions propagate with :attr:`result` filled so far."""
        import datetime

        import torch
        import torch.distributed as dist

        from traceviz.collect.correctness import compare

        s = self.settings
        self.phase_file = rank_phase_path(run_dir, self.mode, self.rank)
        self.enter("loading")
        module = self._module()
        device = torch.device(f"cuda:{self.local_rank}" if self.cuda else "cpu")
        if self.cuda:
            torch.cuda.set_device(device)
        capture = self.mode == "cudagraph"
        if capture and self.cuda:
            os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0"  # the DDP-capture recipe
        timeout = s.get("timeout_s")
        dist.init_process_group("nccl" if self.cuda else "gloo",
                                device_id=device if self.cuda else None,
                                **({"timeout": datetime.timedelta(seconds=float(timeout))}
                                   if timeout else {}))
        batch = module.make_batch(device, self.rank)
        if capture and self.cuda:
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                ddp, opt = self._ddp(module, device)
            torch.cuda.current_stream().wait_stream(side)
        else:
            ddp, opt = self._ddp(module, device)
        step = self.first_call(lambda: self._first_step(module, ddp, opt, batch))

        self.check_steps(step, None)
        params = tuple(p.detach().clone() for p in ddp.parameters())
        ref_ddp, ref_opt = self._ddp(module, device)
        ref_step = self._train_step(module, ref_ddp, ref_opt, batch)
        done, self.updates = self.updates, 0
        for _ in range(done):
            ref_step()
        self.sync()
        reference = tuple(p.detach().clone() for p in ref_ddp.parameters())
        correct = compare(params, reference, float(getattr(module, "RTOL", 1e-4)),
                          float(getattr(module, "ATOL", 1e-5)))
        self.result["correctness"] = {**correct.to_dict(), "updates_compared": done}
        del ref_ddp, ref_opt, ref_step, params, reference

        wl = Path(self.workload_path)
        self.measure_and_trace(
            step, baseline=lambda: self._eager_step(module, device, batch),
            trace_path=rank_trace_path(run_dir, self.mode, self.rank),
            metadata={"workload": wl.stem, "workload_path": str(wl.resolve()),
                      "mode": self.mode, "rank": self.rank, "world_size": self.world,
                      "hostname": self.result["hostname"], **s["environment"]},
            mismatch=None if correct.ok else "parameters differ from an eager DDP run after "
            f"{done} updates: {correct.detail}",
        )


def main(argv: list[str] | None = None) -> int:
    """Entry point of one rank (started by ``torch.distributed.run``)."""
    parser = argparse.ArgumentParser(prog="python -m traceviz.collect.rank_child")
    parser.add_argument("workload")
    parser.add_argument("mode")
    parser.add_argument("run_dir")
    parser.add_argument("--device", required=True, choices=["cuda", "cpu"])
    parser.add_argument("--settings", required=True)
    args = parser.parse_args(argv)
    run = RankRun(args.workload, args.mode, args.device, json.loads(args.settings))
    run_dir = Path(args.run_dir)
    code = 0
    try:
        run.run(run_dir)
    except BaseException as exc:
        run.fail(exc)
        code = 1
    finally:
        out = rank_result_path(run_dir, args.mode, run.rank)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json(out, run.result)
    if code == 0:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
