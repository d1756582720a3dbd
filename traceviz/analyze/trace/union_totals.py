"""Trace totals of period, busy and idle time over the union of the step periods.

Definitions (``docs/metrics.md``, "Totals and per-step medians"): when no two step periods
overlap, the totals are the sums over the steps. When some do (a step's GPU work starts before
the previous step's ends), summing would count the shared time twice, so:

* ``period`` is the length of the union of the step periods;
* ``gpu_busy`` is the length of the union of every attributed activity's interval;
* each idle instant (in a period, in no attributed activity) lies in the gap of at least one
  step; it counts once, in the first class of the order ``graph_internal``, ``sync_wait``,
  ``host_wait``, ``other_idle``, ``queued`` (the :class:`~traceviz.vocab.GapClass` order)
  among the gaps covering it.

So ``gpu_busy + Σ idle == period`` holds for the totals too, exactly, in integer ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.model import GapTable
from traceviz.analyze.trace.intervals import group_union
from traceviz.int_sets import distinct
from traceviz.vocab import GAP_CLASS_NAMES


@dataclass(frozen=True)
class UnionTotals:
    """Period, busy and idle by class (``GapClass`` order) over the union of the periods."""

    period_ns: int
    busy_ns: int
    idle_ns_by_class: tuple[int, ...]
    step_period_sum_ns: int  # the plain sum of the step periods (>= period_ns)


def _merged(ts: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The disjoint intervals of the union of ``[ts, end)`` (any order)."""
    if len(ts) == 0:
        return ts, end
    order = np.argsort(ts, kind="stable")
    ts, end = ts[order], end[order]
    u = group_union(np.zeros(len(ts), np.int64), ts, end)
    starts = np.concatenate([u.first_start_ns, ts[u.gap_rows]])
    ends = np.concatenate([u.gap_start_ns, u.last_end_ns])
    return starts, ends


def union_totals(
    gpu_start_ns: np.ndarray,
    period_ns: np.ndarray,
    gaps: GapTable,
    busy_by_step_ns: np.ndarray,
    activity_ts_ns: np.ndarray,
    activity_end_ns: np.ndarray,
) -> UnionTotals:
    """Totals over the union of the periods (module doc). Per step: ``gpu_start_ns`` (-1: no
    GPU work), ``period_ns``, ``busy_by_step_ns``; ``gaps``: every step's gaps; the attributed
    activities' intervals."""
    has = gpu_start_ns >= 0
    ps = gpu_start_ns[has]
    pe = ps + period_ns[has]
    step_sum = int((pe - ps).sum())
    order = np.argsort(ps, kind="stable")
    ps_s, pe_s = ps[order], pe[order]
    if not (len(ps_s) > 1 and (ps_s[1:] < np.maximum.accumulate(pe_s)[:-1]).any()):
        idle = np.zeros(len(GAP_CLASS_NAMES), np.int64)
        np.add.at(idle, gaps.cls.astype(np.int64), gaps.end_ns - gaps.start_ns)
        return UnionTotals(step_sum, int(busy_by_step_ns.sum()), tuple(int(v) for v in idle),
                           step_sum)
    p_start, p_end = _merged(ps, pe)
    b_start, b_end = _merged(activity_ts_ns, activity_end_ns)
    points = distinct(np.concatenate([gaps.start_ns, gaps.end_ns, b_start, b_end]))
    seg_ns = np.diff(points)

    def covered(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Per elementary segment: whether one of the intervals covers it."""
        d = np.zeros(len(points), np.int64)
        np.add.at(d, np.searchsorted(points, starts), 1)
        np.add.at(d, np.searchsorted(points, ends), -1)
        return np.cumsum(d)[:-1] > 0

    seg_cls = np.full(len(seg_ns), -1, np.int64)
    for c in reversed(range(len(GAP_CLASS_NAMES))):  # earlier classes overwrite later ones
        mine = gaps.cls == c
        seg_cls[covered(gaps.start_ns[mine], gaps.end_ns[mine])] = c
    idle_seg = (seg_cls >= 0) & ~covered(b_start, b_end)
    idle = np.zeros(len(GAP_CLASS_NAMES), np.int64)
    np.add.at(idle, seg_cls[idle_seg], seg_ns[idle_seg])
    return UnionTotals(int((p_end - p_start).sum()), int((b_end - b_start).sum()),
                       tuple(int(v) for v in idle), step_sum)
