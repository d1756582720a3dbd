"""One rank's compact digest: everything the cross-rank analysis needs from a rank's trace and
analysis, and nothing per event (``rank_digest(trace, analysis) -> RankDigest``).

A digest is frozen and picklable, so a worker process (or a Dask worker) can load and analyse a
rank trace and send only the digest back; :func:`traceviz.analyze.distributed.analyze_digests`
then matches the ranks. Its size grows with the rank's steps and collective instances, not with
its events: per numbered step six numbers and the step's compute busy time; per collective
instance one row; and the compute intervals that overlap the rank's own collectives (the only
compute that can hide a transfer, see :func:`clip_to_windows`). Times are integer ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.distributed.discover import gpu_name, rank_info
from traceviz.analyze.distributed.instances import collective_kernel_rows, rank_instances
from traceviz.analyze.distributed.metrics import compute_intervals, union_by_step
from traceviz.analyze.distributed.model import RankInfo
from traceviz.analyze.model import Analysis, HealthWarning
from traceviz.analyze.trace.intervals import group_union
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace


@dataclass(frozen=True)
class StepDigest:
    """One numbered step of a rank (the single-trace step metrics the ranks report uses)."""

    number: int
    period_ns: int
    gpu_busy_ns: int
    host_wait_ns: int
    sync_wait_ns: int
    cpu_bound_share: float | None


@dataclass(frozen=True)
class Intervals:
    """Disjoint intervals ``[ts_ns, end_ns)`` per step number, sorted by (step, ts); the
    trace's own relative clock."""

    step: np.ndarray  # int64 step number
    ts_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.step)


@dataclass(frozen=True)
class RankDigest:
    """What the cross-rank analysis needs from one rank (see the module docstring)."""

    info: RankInfo
    base_time_ns: int  # baseTimeNanoseconds, 0 when absent
    steps: tuple[StepDigest, ...]  # numbered steps; a repeated number keeps its last step
    instances: pd.DataFrame  # columns INSTANCE_COLUMNS (absolute own-clock ns)
    outside: int  # collective kernels launched outside every numbered step
    compute_busy_ns: dict[int, int]  # step number -> union of non-collective activities
    compute_in_comm: Intervals  # compute union ∩ the union of the step's instance windows
    health: tuple[HealthWarning, ...]  # the rank's single-trace health warnings
    span_ns: tuple[int, int] | None = None  # absolute [first start, last end] of its events


def rank_digest(trace: Trace, analysis: Analysis) -> RankDigest:
    """The digest of one rank trace and its single-trace analysis."""
    rank, source, world, host, groups = rank_info(trace)
    base = trace.meta.base_time_ns or 0
    by_number = {s.number: s for s in analysis.steps if s.number is not None}
    steps = tuple(StepDigest(n, s.period_ns, s.gpu_busy_ns, s.host_wait_ns, s.sync_wait_ns,
                             s.cpu_bound_share) for n, s in by_number.items())
    inst, outside = rank_instances(trace, analysis)
    step, ts, end = compute_intervals(trace, analysis, collective_kernel_rows(trace))
    windows = (inst["step"].to_numpy(np.int64), inst["start_ns"].to_numpy(np.int64) - base,
               inst["end_ns"].to_numpy(np.int64) - base)
    return RankDigest(
        info=RankInfo(rank, trace.meta.path, source, world, host, groups, gpu_name(trace)),
        base_time_ns=base,
        steps=steps,
        instances=inst,
        outside=outside,
        compute_busy_ns=union_by_step(step, ts, end),
        compute_in_comm=clip_to_windows(merged(step, ts, end), merged(*windows)),
        health=tuple(analysis.health),
        span_ns=event_span(trace),
    )


def event_span(trace: Trace) -> tuple[int, int] | None:
    """``(first start, last end)`` of the trace's timed events (GPU, runtime and CPU tables),
    absolute ns (``baseTimeNanoseconds`` + ts; absolute-epoch traces as they are); ``None``
    when it has none."""
    base = trace.meta.base_time_ns or 0
    starts = [int(t["ts_ns"].min()) for t in (trace.gpu, trace.runtime, trace.cpu) if len(t)]
    ends = [int(t["end_ns"].max()) for t in (trace.gpu, trace.runtime, trace.cpu) if len(t)]
    if not starts:
        return None
    return base + min(starts), base + max(ends)


def merged(step: np.ndarray, ts: np.ndarray, end: np.ndarray) -> Intervals:
    """The union of the intervals of each step, as disjoint intervals (touching ones merge)."""
    if not len(ts):
        z = np.zeros(0, np.int64)
        return Intervals(z, z, z)
    order = np.lexsort((ts, step))
    step, ts, end = step[order], ts[order], end[order]
    u = group_union(step, ts, end)
    starts = np.sort(np.concatenate([u.group_first_row, u.gap_rows]), kind="stable")
    is_gap = np.zeros(len(ts), bool)
    is_gap[u.gap_rows] = True
    gap_start = np.zeros(len(ts), np.int64)
    gap_start[u.gap_rows] = u.gap_start_ns
    first = np.zeros(len(ts), bool)
    first[u.group_first_row] = True
    group_of_row = np.cumsum(first) - 1
    nxt = np.append(starts[1:], len(ts))
    next_is_gap = np.zeros(len(starts), bool)
    next_is_gap[:-1] = is_gap[nxt[:-1]]
    ends = np.where(next_is_gap, gap_start[np.minimum(nxt, len(ts) - 1)],
                    u.last_end_ns[group_of_row[starts]])
    return Intervals(step[starts], ts[starts], ends)


def clip_to_windows(a: Intervals, b: Intervals) -> Intervals:
    """``a ∩ b`` per step (both disjoint per step): the parts of ``a`` inside ``b``, non-empty
    intervals only."""
    if not len(a) or not len(b):
        z = np.zeros(0, np.int64)
        return Intervals(z, z, z)
    step = np.concatenate([a.step, a.step, b.step, b.step])
    pos = np.concatenate([a.ts_ns, a.end_ns, b.ts_ns, b.end_ns])
    delta = np.concatenate([np.ones(len(a), np.int64), -np.ones(len(a), np.int64),
                            np.ones(len(b), np.int64), -np.ones(len(b), np.int64)])
    order = np.lexsort((delta, pos, step))  # ends before starts at one position
    step, pos, delta = step[order], pos[order], delta[order]
    depth = np.cumsum(delta)  # every step nets to 0, so the count restarts per step
    both = np.flatnonzero(depth[:-1] == 2)
    keep = both[pos[both + 1] > pos[both]]
    return Intervals(step[keep], pos[keep], pos[keep + 1])


def instance_frame(digests: list[RankDigest]) -> pd.DataFrame:
    """All ranks' instances in one frame with a ``rank`` column (digests in rank order)."""
    frames = [d.instances.assign(rank=d.info.rank) for d in digests]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
