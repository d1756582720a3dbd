"""Communication/computation overlap of one rank, by traceviz's definition (``docs/hta.md``).

traceviz's communication is the **transfer** of each matched collective instance — from the
last rank's arrival to the instance's end (``docs/metrics.md``, "Rank traces") — not the whole
NCCL kernel, whose first part spins while the rank waits for the others. The overlap share of a
rank is the part of its transfer time that compute covers, over its matched steps:

    overlap = Σ (comm_transfer − exposed_comm) / Σ comm_transfer

(integer ns sums; ``exposed_comm`` = transfer not covered by the rank's compute). HTA's
``get_comm_comp_overlap`` divides the compute-covered part of the whole NCCL kernels by their
length, spin included.
"""

from __future__ import annotations

from traceviz.analyze.distributed.model import RanksAnalysis


def transfer_overlap_share(r: RanksAnalysis, rank: int) -> float | None:
    """The overlap share of ``rank`` (module doc); ``None`` without a matched transfer."""
    steps = [s for s in r.rank_steps if s.rank == rank and s.comm_transfer_ns is not None
             and s.exposed_comm_ns is not None]
    transfer = sum(int(s.comm_transfer_ns or 0) for s in steps)
    exposed = sum(int(s.exposed_comm_ns or 0) for s in steps)
    return (transfer - exposed) / transfer if transfer > 0 else None


def overlap_by_path(r: RanksAnalysis) -> dict[str, float]:
    """``{rank trace path: overlap share}`` of every rank with a matched transfer."""
    out = {}
    for info in r.ranks:
        share = transfer_overlap_share(r, info.rank)
        if share is not None:
            out[info.path] = share
    return out
