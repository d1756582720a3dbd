"""Is a trace one rank of a distributed run, and how much of its GPU busy is NCCL?

``traceviz compare`` on single rank traces (``docs/comparison.md``, "Distributed traces")
warns with these facts: a rank's GPU busy includes its collective kernels, which spin while
they wait for the other ranks, so a rank that mostly waits in NCCL reads "GPU-bound".

``nccl_busy_ns``: per step with GPU work, the length of the union of the step's collective
kernels (``COLLECTIVE_KERNEL``, attributed to the step by their launch call), summed over the
steps — the whole trace. ``gpu_busy_ns``: the steps' GPU busy (union of all activities), summed
the same way. Integer ns.
"""

from __future__ import annotations

from dataclasses import dataclass

from traceviz.analyze.distributed.instances import collective_kernel_rows
from traceviz.analyze.distributed.metrics import union_by_step
from traceviz.analyze.model import Analysis
from traceviz.trace import Trace


@dataclass(frozen=True)
class RankFacts:
    """A rank trace's place in its run and its NCCL share of GPU busy (whole trace)."""

    rank: int | None  # distributedInfo.rank (None: not recorded)
    world_size: int | None  # distributedInfo.world_size (None: not recorded)
    nccl_busy_ns: int
    gpu_busy_ns: int

    @property
    def nccl_share(self) -> float | None:
        """NCCL busy / GPU busy over all steps with GPU work (``None``: no GPU busy)."""
        return self.nccl_busy_ns / self.gpu_busy_ns if self.gpu_busy_ns else None


def rank_facts(trace: Trace, analysis: Analysis) -> RankFacts | None:
    """The facts of ``trace`` when it is a rank of a distributed run (``distributedInfo``
    with a world size above 1, or collective kernels in its steps); ``None`` otherwise."""
    dist = trace.meta.distributed or {}
    world = dist.get("world_size")
    world = world if isinstance(world, int) and not isinstance(world, bool) else None
    rows = collective_kernel_rows(trace)
    rows = rows[analysis.activity_step[rows] >= 0]
    if (world is None or world <= 1) and not len(rows):
        return None
    gpu = trace.gpu
    nccl = union_by_step(analysis.activity_step[rows].astype("int64"),
                         gpu["ts_ns"].to_numpy()[rows], gpu["end_ns"].to_numpy()[rows])
    steps = analysis.steps
    busy = int(steps.column("gpu_busy_ns")[steps.column("period_ns") > 0].sum())
    return RankFacts(trace.meta.rank, world, sum(nccl.values()), busy)
