"""Launch-overhead evidence of a distributed run, for the launch verdict across modes.

On N ranks, host time a CUDA graph saves on the straggler does not shorten the step by itself:
it comes back as less comm wait on its peers. So the evidence of a distributed mode is the
straggler's host wait (``host_wait + sync_wait``, median per step) together with the other
ranks' comm wait (median over those ranks of their ``comm_wait_ns_median``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.distributed.model import RanksAnalysis


@dataclass(frozen=True)
class LaunchEvidence:
    """``None`` fields: not measurable (no straggler, no matched collectives, one rank)."""

    straggler_rank: int | None
    straggler_host_wait_ns: float | None
    peers_comm_wait_ns: float | None
    slowest_period_ns: float | None


def launch_evidence(r: RanksAnalysis) -> LaunchEvidence:
    """The straggler's host wait and its peers' comm wait (see the module docstring)."""
    st = r.straggler
    if st is None:
        return LaunchEvidence(None, None, None, r.slowest_period_ns_median)
    peers = [p.comm_wait_ns_median for p in r.per_rank
             if p.rank != st.rank and p.comm_wait_ns_median is not None]
    return LaunchEvidence(
        straggler_rank=st.rank,
        straggler_host_wait_ns=float(st.host_wait_ns_median),
        peers_comm_wait_ns=float(np.median(peers)) if peers else None,
        slowest_period_ns=r.slowest_period_ns_median,
    )
