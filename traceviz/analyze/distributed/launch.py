"""Launch-overhead evidence of a distributed run, for the launch verdict across modes.

On N ranks, host time a CUDA graph saves on the straggler does not shorten the step by itself:
it comes back as less comm wait on its peers. So the evidence of a distributed mode is the
straggler's host wait (``host_wait + sync_wait``, median per step) together with the other
ranks' comm wait (median over those ranks of their ``comm_wait_ns_median``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from traceviz.analyze.distributed.bounding import BoundingRank
from traceviz.analyze.distributed.metrics import (
    excess_over_peers,
    lateness_significant,
    relative_cause,
)
from traceviz.analyze.distributed.model import RanksAnalysis
from traceviz.analyze.verdicts import WIN, Verdict


@dataclass(frozen=True)
class LaunchEvidence:
    """``None`` fields: not measurable (no straggler, no matched collectives, one rank)."""

    straggler_rank: int | None
    straggler_host_wait_ns: float | None
    peers_comm_wait_ns: float | None
    slowest_period_ns: float | None
    #: how much the straggler's ``(host_wait + sync_wait, compute_busy)`` exceed its peers'
    #: (ns per step: :func:`~traceviz.analyze.distributed.metrics.excess_over_peers`), ``None``
    #: when not known
    straggler_excess_ns: tuple[float, float] | None = None


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
        straggler_excess_ns=excess_over_peers(
            *_waits_and_compute([(p.rank, p.host_wait_ns_median + p.sync_wait_ns_median,
                                  p.compute_busy_ns_median) for p in r.per_rank], st.rank)),
    )


def _waits_and_compute(rows: list[tuple[Any, float, float]], rank: int
                       ) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """``(rank's (waits, compute), its peers' [(waits, compute), ...])`` of ``(rank, waits,
    compute)`` rows (each rank's medians per step); ``(0, 0)`` when ``rank`` has no row."""
    own = next(((w, c) for r, w, c in rows if r == rank), (0.0, 0.0))
    return own, [(w, c) for r, w, c in rows if r != rank]


def straggler_cause(ev: LaunchEvidence | None, min_share: float) -> str | None:
    """What sets ``ev``'s straggler apart from its peers (:func:`~traceviz.analyze.distributed.
    metrics.relative_cause` against the slowest rank's period), ``None`` when not known."""
    if ev is None or ev.straggler_excess_ns is None or ev.slowest_period_ns is None:
        return None
    return relative_cause(ev.straggler_excess_ns, ev.slowest_period_ns, min_share)


def without_unconfirmed(ev: LaunchEvidence | None, bounding: BoundingRank
                        ) -> LaunchEvidence | None:
    """``ev`` without its straggler when its bounding rank says the unprofiled issue times did
    not confirm it (:attr:`~traceviz.analyze.distributed.bounding.BoundingRank.
    late_under_profiler`): the launch verdict then reads no straggler, as the headline."""
    if ev is None or bounding.late_under_profiler is None:
        return ev
    return LaunchEvidence(None, None, None, ev.slowest_period_ns)


def launch_evidence_from_summary(summary: Any) -> LaunchEvidence | None:
    """The same evidence from a manifest's ``ranks_summary`` (``profile --nproc``; µs there),
    ``None`` when the summary is missing or has no ranks. Its straggler stands only when its
    lateness is significant across the summary's steps (:func:`~traceviz.analyze.distributed.
    metrics.lateness_significant`, 0 in the steps another rank was last; summaries written
    before that rule may name one it does not)."""
    if not isinstance(summary, dict) or not isinstance(summary.get("per_rank"), list):
        return None
    per = {p.get("rank"): p for p in summary["per_rank"] if isinstance(p, dict)}
    if not per:
        return None
    slowest = summary.get("slowest_period_us_median")
    slowest_ns = float(slowest) * 1000 if isinstance(slowest, (int, float)) else None
    st = summary.get("straggler")
    rank = st.get("rank") if isinstance(st, dict) else None
    if rank not in per or not _significant(summary.get("step_stragglers"), rank):
        return LaunchEvidence(None, None, None, slowest_ns)
    mine = per[rank]
    host = (mine.get("host_wait_us_median") or 0.0) + (mine.get("sync_wait_us_median") or 0.0)
    peers = [p["comm_wait_us_median"] for r, p in per.items()
             if r != rank and isinstance(p.get("comm_wait_us_median"), (int, float))]
    rows = [(r, _us(p.get("host_wait_us_median")) + _us(p.get("sync_wait_us_median")),
             _us(p.get("compute_busy_us_median"))) for r, p in per.items()]
    return LaunchEvidence(rank, float(host) * 1000,
                          float(np.median(peers)) * 1000 if peers else None, slowest_ns,
                          excess_over_peers(*_waits_and_compute(rows, rank)))


def _us(x: Any) -> float:
    """A summary's µs value in ns (0 when missing or not a number)."""
    return float(x) * 1000 if isinstance(x, (int, float)) and not isinstance(x, bool) else 0.0


def _significant(steps: Any, rank: int) -> bool:
    """Whether ``rank``'s lateness in a summary's ``step_stragglers`` (its lateness in the steps
    it was last, 0 in the others) is significant; ``True`` when the summary lists no steps."""
    if not isinstance(steps, list) or not steps:
        return True
    late = [float(s.get("lateness_us") or 0.0) if isinstance(s, dict) and s.get("rank") == rank
            else 0.0 for s in steps]
    return lateness_significant(late)


#: ``evidence["rules"]`` of a distributed mode's launch verdict decided on the bounding rank's
#: own unprofiled split (:mod:`traceviz.analyze.distributed.bounding`).
BOUNDING_SPLIT_RULES = "unprofiled, bounding rank"


def distributed_launch_verdict(v: Verdict, base: LaunchEvidence, mode: LaunchEvidence,
                               speed_status: str, min_wait_share: float,
                               bounding_split: bool = False) -> Verdict:
    """The launch verdict of a distributed mode, from the straggler and its peers.

    On N ranks a graph's saving on the straggler's host comes back as less comm wait on its
    peers, so the slowest rank's own host wait need not move. With a straggler in both runs:
    the evidence gains the straggler's host wait and the peers' comm wait (baseline, mode, µs).

    ``bounding_split``: ``v`` was decided on the bounding rank's own unprofiled split (the
    lockstep blocks with that rank's host issue times): its status stands, with the
    straggler's numbers beside it, and ``evidence["rules"]`` is :data:`BOUNDING_SPLIT_RULES`.
    Otherwise (no per-rank issue times: the profiled-trace rules, or an older lockstep run's
    split on each block's slowest rank) the straggler rule applies and ``evidence["rules"]``
    gains ", straggler": a speed WIN whose straggler host-wait drop is at least
    ``min_wait_share`` of the slowest rank's period saved, with the peers' comm wait falling
    too, is a launch WIN ("launch overhead removed on the straggler"); else the verdict stands,
    with the numbers added. Without a straggler in both runs ``v`` is returned unchanged.
    """
    if (base.straggler_host_wait_ns is None or mode.straggler_host_wait_ns is None
            or base.slowest_period_ns is None or mode.slowest_period_ns is None):
        return v
    saved = base.slowest_period_ns - mode.slowest_period_ns
    host_drop = base.straggler_host_wait_ns - mode.straggler_host_wait_ns
    peers = (None if base.peers_comm_wait_ns is None or mode.peers_comm_wait_ns is None
             else base.peers_comm_wait_ns - mode.peers_comm_wait_ns)
    evidence = {**v.evidence,
                "straggler_host_wait_us": [base.straggler_host_wait_ns / 1000,
                                           mode.straggler_host_wait_ns / 1000],
                "peers_comm_wait_us": [None if base.peers_comm_wait_ns is None
                                       else base.peers_comm_wait_ns / 1000,
                                       None if mode.peers_comm_wait_ns is None
                                       else mode.peers_comm_wait_ns / 1000],
                "slowest_period_us": [base.slowest_period_ns / 1000,
                                      mode.slowest_period_ns / 1000],
                "rules": (BOUNDING_SPLIT_RULES if bounding_split
                          else f"{v.evidence.get('rules') or 'profiled-trace'}, straggler")}
    who = (f"rank {mode.straggler_rank}" if base.straggler_rank == mode.straggler_rank
           else f"rank {base.straggler_rank} → rank {mode.straggler_rank}")
    facts = (f"distributed: the straggler's ({who}) host wait "
             f"{base.straggler_host_wait_ns / 1e6:.2f} → {mode.straggler_host_wait_ns / 1e6:.2f}"
             f" ms/step, its peers' comm wait "
             + ("n/a" if peers is None else
                f"{base.peers_comm_wait_ns / 1e6:.2f} → {mode.peers_comm_wait_ns / 1e6:.2f}"
                " ms/step")
             + f", slowest rank's period {base.slowest_period_ns / 1e6:.2f} → "
             f"{mode.slowest_period_ns / 1e6:.2f} ms/step")
    thresholds = {**v.thresholds, "launch_min_wait_share": min_wait_share}
    if (not bounding_split and v.status != WIN and speed_status == WIN and saved > 0
            and peers is not None
            and peers > 0 and host_drop >= min_wait_share * saved):
        return replace(v, status=WIN, evidence=evidence, thresholds=thresholds,
                       explanation=f"launch overhead removed on the straggler: its host wait "
                       f"fell by {host_drop / saved:.0%} of the slowest rank's period saved "
                       f"and its peers wait less for it ({facts}); on the slowest rank alone: "
                       f"{v.status}: {v.explanation}")
    return replace(v, evidence=evidence, thresholds=thresholds,
                   explanation=f"{v.explanation}; {facts}")
