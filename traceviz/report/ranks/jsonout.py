"""The multi-rank JSON document (``traceviz report DIR_OF_RANK_TRACES --format json``).

Top-level keys: ``schema``, ``traceviz_version``, ``ranks`` (the cross-rank results, shape in
``docs/metrics.md`` "Rank traces"), ``failed_ranks`` (only when some rank trace could not be
analysed: ``path`` and one-line ``reason`` each), ``per_rank_analysis`` (each rank's
single-trace document, as ``traceviz report TRACE --format json`` writes it, with a ``rank``
key first). Times in µs (``ns / 1000``).

The per-rank documents arrive already encoded (a worker process made them, see
:mod:`traceviz.scale.task`) and are embedded as :class:`msgspec.Raw`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from traceviz._version import __version__
from traceviz.analyze.distributed.model import FailedRank, RanksAnalysis
from traceviz.report.ranks.text import straggler_sentence
from traceviz.report.units import share, us

SCHEMA = "traceviz.ranks/1"


def ranks_to_dict(r: RanksAnalysis, documents: Sequence[bytes],
                  failed: Sequence[FailedRank] = ()) -> dict[str, Any]:
    """The whole document; ``documents``: each rank's encoded single-trace document (with its
    ``rank`` key), in the order of ``r.ranks``."""
    st = r.straggler
    doc = {
        "schema": SCHEMA,
        "traceviz_version": __version__,
        "ranks": {
            "count": len(r.ranks),
            "world_size": r.world_size,
            "consistent": r.consistent,
            "inconsistency": list(r.inconsistency),
            "forced": r.forced,
            "traces": [{"rank": i.rank, "path": i.path, "rank_source": i.rank_source,
                        "hostname": i.hostname, "gpu": i.gpu} for i in r.ranks],
            "clock": {
                "aligned_by": r.clock.aligned_by,
                "reference_rank": r.clock.reference_rank,
                "offsets_us": {str(k): us(v) for k, v in r.clock.offsets_ns.items()},
                "spread_us": {str(k): us(v) for k, v in r.clock.spread_ns.items()},
            },
            "straggler": None if st is None else {
                "rank": st.rank,
                "share_of_steps": share(st.share_of_steps),
                "mean_lateness_us": us(st.mean_lateness_ns),
                "cause": st.cause,
                "steps": st.steps,
                "matched_steps": st.matched_steps,
                "concentrated_at": None if st.concentrated_at is None else {
                    "collective": st.concentrated_at[0],
                    "index": st.concentrated_at[1],
                    "share": share(st.concentrated_at[2]),
                    "lateness_us_per_step": us(st.concentrated_lateness_ns),
                },
                "sentence": straggler_sentence(r),
            },
            "steps": list(r.steps),
            "step_skew_us_median": us(r.step_skew_ns_median),
            "slowest_period_us_median": us(r.slowest_period_ns_median),
            "per_rank": [{
                "rank": p.rank,
                "steps": p.steps,
                "period_us_median": us(p.period_ns_median),
                "gpu_busy_us_median": us(p.gpu_busy_ns_median),
                "compute_busy_us_median": us(p.compute_busy_ns_median),
                "effective_busy_us_median": us(p.effective_busy_ns_median),
                "comm_wait_us_median": us(p.comm_wait_ns_median),
                "comm_transfer_us_median": us(p.comm_transfer_ns_median),
                "exposed_comm_us_median": us(p.exposed_comm_ns_median),
                "host_wait_us_median": us(p.host_wait_ns_median),
                "sync_wait_us_median": us(p.sync_wait_ns_median),
                "cpu_bound_share_median": share(p.cpu_bound_share_median),
            } for p in r.per_rank],
            "rank_steps": [{
                "rank": s.rank, "step": s.step, "period_us": us(s.period_ns),
                "gpu_busy_us": us(s.gpu_busy_ns), "compute_busy_us": us(s.compute_busy_ns),
                "effective_busy_us": us(s.effective_busy_ns),
                "comm_wait_us": us(s.comm_wait_ns), "comm_transfer_us": us(s.comm_transfer_ns),
                "exposed_comm_us": us(s.exposed_comm_ns), "host_wait_us": us(s.host_wait_ns),
                "sync_wait_us": us(s.sync_wait_ns), "lateness_us": us(s.lateness_ns),
                "collectives": s.collectives, "matched": s.matched,
            } for s in r.rank_steps],
            "step_stragglers": [{"step": s.step, "rank": s.rank, "lateness_us": us(s.lateness_ns),
                                 "cause": s.cause} for s in r.step_stragglers],
            "collectives": [{
                "group": c.group, "name": c.name, "bytes": c.bytes if c.bytes >= 0 else None,
                "count": c.count, "wait_us_p50": us(c.wait_p50_ns),
                "transfer_us_p50": us(c.transfer_p50_ns),
            } for c in r.collectives],
            "health": [{"code": w.code, "message": w.message, "count": w.count}
                       for w in r.health],
        },
    }
    if failed:
        doc["failed_ranks"] = [{"path": f.path, "reason": f.reason} for f in failed]
    if len(documents) != len(r.ranks):
        raise ValueError(f"{len(documents)} rank documents for {len(r.ranks)} ranks")
    doc["per_rank_analysis"] = [msgspec.Raw(d) for d in documents]
    return doc
