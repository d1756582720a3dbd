"""Per-rank-per-step metrics of a multi-rank run, stragglers and summaries.

``compute_busy``: union of the step's non-collective GPU activities (all streams).
``exposed_comm``: length of the union of the step's transfer intervals
``[max(own arrival, last arrival), end]`` not covered by compute (``|T ∪ C| − |C|``).
The run straggler: the rank last to arrive in most matched steps, named only when its
lateness is significant across them (:func:`lateness_significant`). Concentration of the run
straggler's lateness: its lateness summed per instance index (the
instance's position in its step, start order) over the matched steps, as shares of the total.

These are the **profiled** steps, where the profiler's own cost differs per rank (symmetric
ranks of ``reports/ddp_mlp``: rank 1 1.5–5.4 ms late in every profiled step of compile). A
comparison names the run straggler as the rank that bounds a step only when, set apart from its
peers by its host (:func:`relative_cause`), the unprofiled lockstep blocks confirm it
(:mod:`traceviz.analyze.distributed.bounding`: its host issue time per step above its peers' by
``straggler_min_host_share`` of the step, the CI above 0); set apart by its GPU, or without per-rank
issue times, the profiled rule here stands.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from traceviz.analyze.distributed.instances import step_numbers
from traceviz.analyze.distributed.matching import lower_median
from traceviz.analyze.distributed.model import (
    CollectiveSummary,
    RankStep,
    RankSummary,
    RunStraggler,
    StepStraggler,
)
from traceviz.analyze.model import Analysis
from traceviz.analyze.trace.intervals import group_union
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace

#: The run straggler's lateness is "concentrated" at an instance index holding at least this
#: share of it (over the matched steps).
CONCENTRATION_SHARE = 0.5
#: A straggler is named only when its lateness per matched step (0 where it arrived first) has
#: a mean at least this many standard errors above 0 (:func:`lateness_significant`).
STRAGGLER_MIN_T = 3.0


def lateness_significant(lateness: list[float] | np.ndarray) -> bool:
    """Whether one rank's total lateness per matched step (ns; 0 in the steps where it was not
    late) stands out across the steps: mean > 0 and mean / (sd / √n) ≥ :data:`STRAGGLER_MIN_T`
    (sd with n − 1; fewer than two steps, or every step alike: any lateness counts).

    Someone always arrives last: on symmetric ranks the last arriver changes from step to step
    and its lateness is noise, so its mean is a few standard errors at most. Cells, from the
    committed 2-GPU runs (5 matched steps each): the injected straggler of
    ``reports/ddp_mlp_straggler`` (rank 1, 8.7–10.9 ms late in every step of every mode: t ≥ 9)
    is named; ``reports/tp_mlp`` reduce-overhead and cudagraph (the last arriver alternates,
    6–30 µs late: t ≈ 2) and ``reports/ddp_mlp`` cudagraph (rank 0 last in 4 of 5 steps, 24–81
    µs: t = 2.8) are not; a rank late by milliseconds in every step under the profiler
    (``reports/tp_mlp`` eager, t = 6.3; ``reports/ddp_mlp`` reduce-overhead, t = 3.5) is —
    under the profiler; without it those ranks are alike, which the bounding rank's unprofiled
    check (:func:`traceviz.analyze.distributed.bounding.straggler_check`) sees."""
    x = np.asarray(lateness, dtype=np.float64)
    mean = float(x.mean()) if x.size else 0.0
    if mean <= 0:
        return False
    sd = float(x.std(ddof=1)) if x.size > 1 else 0.0
    return bool(sd == 0 or mean / (sd / np.sqrt(x.size)) >= STRAGGLER_MIN_T)


def union_by_step(step: np.ndarray, ts: np.ndarray, end: np.ndarray) -> dict[int, int]:
    """Step number -> length of the union of that step's intervals."""
    if not len(ts):
        return {}
    order = np.lexsort((ts, step))
    u = group_union(step[order], ts[order], end[order])
    keys = step[order][u.group_first_row]
    return {int(k): int(b) for k, b in zip(keys, u.busy_ns, strict=True)}


def compute_intervals(trace: Trace, analysis: Analysis, coll_rows: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(step number, ts_ns, end_ns)`` of the non-collective GPU activities attributed to a
    step (the trace's relative clock)."""
    gpu = trace.gpu
    numbers = step_numbers(analysis)
    keep = analysis.activity_step >= 0
    keep[coll_rows] = False
    rows = np.flatnonzero(keep)
    step = numbers[analysis.activity_step[rows]].astype(np.int64)
    return step, gpu["ts_ns"].to_numpy()[rows], gpu["end_ns"].to_numpy()[rows]


def exposed_by_step(compute: tuple[np.ndarray, np.ndarray, np.ndarray],
                    transfers: pd.DataFrame) -> dict[int, int]:
    """Step number -> transfer time not overlapped by compute, ``|T ∪ C| − |C|``
    (``compute``: (step, ts_ns, end_ns); ``transfers``: step, ts_ns, end_ns; one clock).

    ``compute`` may be cut to any superset of the transfers (a rank's own collective windows,
    :func:`~traceviz.analyze.distributed.digest.clip_to_windows`): ``|T ∪ C| − |C| = |T \\ C|``
    only sees the compute inside T.
    """
    c_step, c_ts, c_end = compute
    step = np.concatenate([c_step, transfers["step"].to_numpy()]).astype(np.int64)
    ts = np.concatenate([c_ts, transfers["ts_ns"].to_numpy()])
    end = np.concatenate([c_end, transfers["end_ns"].to_numpy()])
    both = union_by_step(step, ts, end)
    alone = union_by_step(c_step, c_ts, c_end)
    return {s: b - alone.get(s, 0) for s, b in both.items()}


def cause(host_wait_ns: float, sync_wait_ns: float, compute_busy_ns: float,
          period_ns: float) -> str:
    """``host`` when host wait + sync wait exceed compute busy, else ``gpu``; ``unknown`` when
    the step has no GPU period (a CPU-only trace says nothing about it)."""
    if period_ns <= 0:
        return "unknown"
    return "host" if host_wait_ns + sync_wait_ns > compute_busy_ns else "gpu"


def excess_over_peers(straggler: tuple[float, float], peers: list[tuple[float, float]]
                      ) -> tuple[float, float] | None:
    """How much a straggler's ``(host_wait + sync_wait, compute_busy)`` (ns per step, medians)
    exceed the medians of its peers'; ``None`` without peers."""
    if not peers:
        return None
    return (straggler[0] - float(np.median([p[0] for p in peers])),
            straggler[1] - float(np.median([p[1] for p in peers])))


def relative_cause(excess: tuple[float, float], period_ns: float, min_share: float) -> str:
    """What sets a straggler apart from its peers, from its :func:`excess_over_peers`
    ``(waits, compute)``: ``gpu`` when its compute busy exceeds theirs by more than its waits
    do and by at least ``min_share`` of the step (``period_ns``: the slowest rank's median
    period), else ``host`` — its host, checked without the profiler
    (:mod:`traceviz.analyze.distributed.bounding`), which is all that can differ when nothing
    on its GPU does.

    :func:`cause` weighs a rank's waits against its own compute, which a compute-heavy step
    wins whatever made the rank late: ``reports/tp_mlp`` eager, rank 0 4.3 ms late per step
    with host wait 3.9 ms (its peer's: 0) against compute 4.9 ms (its peer's alike) is ``gpu``
    there and ``host`` here. One rank's compute ×2 raises its compute busy by a whole step's
    compute, not its waits: ``gpu`` in both. ``reports/ddp_mlp`` cudagraph, rank 1 24.6 µs
    late per step, no waits, compute 6.8 µs above its peer's on a 1.18 ms step (0.6 %):
    ``host`` here."""
    waits, compute = excess
    return "gpu" if compute > waits and compute >= min_share * period_ns else "host"


def step_stragglers(rank_steps: tuple[RankStep, ...], with_collectives: set[int]
                    ) -> tuple[StepStraggler, ...]:
    """Per matched step with collectives: the rank with the largest total lateness (lowest
    rank on a tie); no straggler when every lateness is 0."""
    by_step: dict[int, list[RankStep]] = {}
    for rs in rank_steps:
        if rs.matched and rs.step in with_collectives:
            by_step.setdefault(rs.step, []).append(rs)
    out = []
    for step, rows in sorted(by_step.items()):
        top = max(rows, key=lambda r: (r.lateness_ns or 0, -r.rank))
        late = top.lateness_ns or 0
        if late <= 0:
            out.append(StepStraggler(step, None, 0, None))
        else:
            out.append(StepStraggler(step, top.rank, late,
                                     cause(top.host_wait_ns, top.sync_wait_ns,
                                           top.compute_busy_ns, top.period_ns)))
    return tuple(out)


def run_straggler(stragglers: tuple[StepStraggler, ...], rank_steps: tuple[RankStep, ...],
                  inst: pd.DataFrame) -> RunStraggler | None:
    """The rank that is straggler in most steps (lowest rank on a tie), when its lateness is
    significant across the matched steps (:func:`lateness_significant`), else ``None``."""
    counts = Counter(s.rank for s in stragglers if s.rank is not None)
    if not counts:
        return None
    rank = min(counts, key=lambda r: (-counts[r], r))
    matched = [s.step for s in stragglers]
    mine = [rs for rs in rank_steps if rs.rank == rank and rs.step in set(matched)]
    lateness = [rs.lateness_ns or 0 for rs in mine]
    if not lateness_significant(lateness):
        return None
    host = np.median([rs.host_wait_ns + rs.sync_wait_ns for rs in mine])
    comp = np.median([rs.compute_busy_ns for rs in mine])
    period = np.median([rs.period_ns for rs in mine])
    rows = inst[(inst["rank"] == rank) & (inst["match"] >= 0) & inst["step"].isin(matched)]
    late_rows = rows[(rows["lateness_ns"] > 0) & (rows["wait_ns"] == 0)]
    per_step_late = late_rows.groupby("step").size().reindex(matched, fill_value=0)
    per_step_all = rows.groupby("step").size().reindex(matched, fill_value=0)
    name = Counter(late_rows["name"]).most_common(1)
    concentrated, concentrated_ns = lateness_concentration(rows, len(matched))
    return RunStraggler(
        rank=rank,
        steps=counts[rank],
        matched_steps=len(matched),
        mean_lateness_ns=int(sum(lateness) // len(lateness)) if lateness else 0,
        cause=cause(host, 0, comp, period),
        host_wait_ns_median=int(host),
        compute_busy_ns_median=int(comp),
        late_instances_per_step=float(np.median(per_step_late.to_numpy())),
        instances_per_step=float(np.median(per_step_all.to_numpy())),
        lateness_ns_per_instance=lower_median(late_rows["lateness_ns"].to_numpy())
        if len(late_rows) else 0,
        collective_name=str(name[0][0]) if name else "",
        concentrated_at=concentrated,
        concentrated_lateness_ns=concentrated_ns,
    )


def lateness_concentration(rows: pd.DataFrame, steps: int
                           ) -> tuple[tuple[str, int, float] | None, int]:
    """``((name, index, share), lateness per step at that index)`` when one instance index
    holds at least :data:`CONCENTRATION_SHARE` of the lateness summed over ``rows`` (one
    rank's matched instances in ``steps`` steps: step, name, start_ns, lateness_ns), else
    ``(None, 0)``. Index: the instance's position in its step by start (from 0); on a tie of
    sums the lower index; name: the most frequent name at that index (first seen on a tie)."""
    if not len(rows) or steps <= 0:
        return None, 0
    ordered = rows.sort_values(["step", "start_ns"], kind="stable")
    index = ordered.groupby("step").cumcount().to_numpy(np.int64)
    late = ordered["lateness_ns"].to_numpy(np.int64)
    sums = np.bincount(index, weights=late) if len(index) else np.zeros(0)
    total = int(late.sum())
    if total <= 0:
        return None, 0
    top = int(np.argmax(sums))
    at_top = int(late[index == top].sum())
    share = at_top / total
    if share < CONCENTRATION_SHARE:
        return None, 0
    names = Counter(ordered["name"].to_numpy()[index == top].tolist()).most_common(1)
    return (str(names[0][0]), top, share), at_top // steps


def _med(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def rank_summary(rank: int, rows: list[RankStep]) -> RankSummary:
    """Medians over the rank's common steps (comm metrics: over its matched steps)."""
    m = [r for r in rows if r.matched]
    shares = [r.cpu_bound_share for r in rows if r.cpu_bound_share is not None]
    return RankSummary(
        rank=rank,
        steps=len(rows),
        period_ns_median=_med([r.period_ns for r in rows]) or 0.0,
        gpu_busy_ns_median=_med([r.gpu_busy_ns for r in rows]) or 0.0,
        compute_busy_ns_median=_med([r.compute_busy_ns for r in rows]) or 0.0,
        effective_busy_ns_median=_med([r.effective_busy_ns for r in m
                                       if r.effective_busy_ns is not None]),
        comm_wait_ns_median=_med([r.comm_wait_ns for r in m if r.comm_wait_ns is not None]),
        comm_transfer_ns_median=_med([r.comm_transfer_ns for r in m
                                      if r.comm_transfer_ns is not None]),
        exposed_comm_ns_median=_med([r.exposed_comm_ns for r in m
                                     if r.exposed_comm_ns is not None]),
        host_wait_ns_median=_med([r.host_wait_ns for r in rows]) or 0.0,
        sync_wait_ns_median=_med([r.sync_wait_ns for r in rows]) or 0.0,
        cpu_bound_share_median=_med(shares),
    )


def collective_summaries(inst: pd.DataFrame) -> tuple[CollectiveSummary, ...]:
    """Matched instances grouped by (group, name, bytes), with nearest-rank median wait and
    transfer over their (rank, instance) rows."""
    m = inst[inst["match"] >= 0]
    out = []
    for (group, name, size), g in m.groupby(["group", "name", "bytes"], sort=True):
        out.append(CollectiveSummary(
            group=str(group), name=str(name), bytes=int(size), count=int(g["match"].nunique()),
            wait_p50_ns=lower_median(g["wait_ns"].to_numpy()),
            transfer_p50_ns=lower_median(g["transfer_ns"].to_numpy())))
    return tuple(out)
