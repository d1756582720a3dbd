"""Per-step GPU busy time, period, and classified idle gaps (definitions: docs/metrics.md).

For each step with GPU work: the union of its activity intervals over all streams gives
``gpu_busy``; the holes between merged intervals plus the tail hole up to the period end are
the gaps, so ``busy + sum(gaps) == period`` exactly. A gap is classified by the activity that
ends it (the one starting at the gap's end; when several do, the one whose launch call started
first), in this order: ``graph_internal``, ``sync_wait``, ``host_wait``, ``other_idle``; then
the part after the ending activity's launch call returned is split off as ``queued``
(:mod:`traceviz.analyze.trace.queued`), so a gap may be two rows of the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from traceviz.analyze.columnar import object_column
from traceviz.analyze.model import GapStatsTable, GapTable
from traceviz.analyze.trace.intervals import group_union
from traceviz.analyze.trace.links import Links
from traceviz.analyze.trace.queued import split_queued
from traceviz.int_sets import distinct, run_starts
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace
from traceviz.vocab import GAP_CLASS_NAMES, GapClass, LaunchKind

_NO_LAUNCH = np.iinfo(np.int64).max


@dataclass(frozen=True)
class StepTimeline:
    """Per step (index = step position): GPU extent, busy, period and idle time by class."""

    gpu_start_ns: np.ndarray  # int64; -1 where the step has no GPU work
    gpu_end_ns: np.ndarray
    period_ns: np.ndarray
    busy_ns: np.ndarray
    idle_ns_by_class: np.ndarray  # shape (n_steps, len(GapClass)), columns in GapClass order
    gaps: GapTable


def step_timeline(
    trace: Trace, links: Links, activity_step: np.ndarray, n_steps: int
) -> StepTimeline:
    """Compute busy, period and gaps for every step from the attributed activities."""
    gpu = trace.gpu
    rt = trace.runtime
    ts_all = gpu["ts_ns"].to_numpy()
    end_all = gpu["end_ns"].to_numpy()
    launch_row_all = links.launch_row
    rt_ts = rt["ts_ns"].to_numpy()
    launch_ts_all = np.where(
        launch_row_all >= 0, rt_ts[np.maximum(launch_row_all, 0)] if len(rt_ts) else 0, _NO_LAUNCH
    )

    rows = np.flatnonzero(activity_step >= 0)
    order = rows[np.lexsort((launch_ts_all[rows], ts_all[rows], activity_step[rows]))]
    step = activity_step[order].astype(np.int64)
    ts = ts_all[order]
    end = end_all[order]
    u = group_union(step, ts, end)

    gpu_start = np.full(n_steps, -1, np.int64)
    gpu_end = np.full(n_steps, -1, np.int64)
    busy = np.zeros(n_steps, np.int64)
    steps_with = step[u.group_first_row] if len(order) else np.zeros(0, np.int64)
    gpu_start[steps_with] = u.first_start_ns
    gpu_end[steps_with] = u.last_end_ns
    busy[steps_with] = u.busy_ns

    # Period end: the next step with GPU work, unless it starts before this one's work ends.
    period_end = gpu_end.copy()
    tail_from: list[int] = []
    tail_ender: list[int] = []
    for k in range(len(steps_with) - 1):
        s, nxt = steps_with[k], steps_with[k + 1]
        if gpu_start[nxt] > gpu_end[s]:
            period_end[s] = gpu_start[nxt]
            tail_from.append(int(s))
            tail_ender.append(int(order[u.group_first_row[k + 1]]))
    period = np.where(gpu_start >= 0, period_end - gpu_start, 0)

    # Gaps: internal holes, then tail holes.
    g_step = np.concatenate([steps_with[u.gap_group], np.asarray(tail_from, np.int64)])
    g_start = np.concatenate([u.gap_start_ns, gpu_end[np.asarray(tail_from, np.int64)]])
    g_ender = np.concatenate([order[u.gap_rows], np.asarray(tail_ender, np.int64)])
    g_end = ts_all[g_ender]
    g_tail = np.concatenate([np.zeros(len(u.gap_rows), bool), np.ones(len(tail_from), bool)])
    cls = _classify(trace, links, g_step, g_start, g_ender, g_tail, activity_step)
    ender_launch = links.launch_row[g_ender]
    rt_end = rt["end_ns"].to_numpy()
    g = split_queued(
        rt_end[np.maximum(ender_launch, 0)] if len(rt_end) else np.zeros(len(g_ender), np.int64),
        ender_launch >= 0,
        {"step": g_step, "start": g_start, "end": g_end, "cls": cls, "ender": g_ender,
         "tail": g_tail},
    )

    srt = np.lexsort((g["start"], g["step"]))
    gaps = GapTable(
        step=g["step"][srt].astype(np.int32),
        start_ns=g["start"][srt],
        end_ns=g["end"][srt],
        cls=g["cls"][srt],
        stream=gpu["stream"].to_numpy()[g["ender"][srt]] if len(srt) else np.zeros(0, np.int64),
        activity=g["ender"][srt],
        tail=g["tail"][srt],
    )
    idle = np.zeros((n_steps, len(GAP_CLASS_NAMES)), np.int64)
    np.add.at(idle, (gaps.step, gaps.cls), gaps.end_ns - gaps.start_ns)
    return StepTimeline(gpu_start, gpu_end, period, busy, idle, gaps)


def _classify(
    trace: Trace,
    links: Links,
    g_step: np.ndarray,
    g_start: np.ndarray,
    g_ender: np.ndarray,
    g_tail: np.ndarray,
    activity_step: np.ndarray,
) -> np.ndarray:
    gpu, rt = trace.gpu, trace.runtime
    n = len(g_start)
    cls = np.full(n, GapClass.OTHER_IDLE, np.int8)
    if n == 0:
        return cls
    corr = gpu["correlation"].to_numpy()
    lrow = links.launch_row[g_ender]
    has_launch = lrow >= 0
    lrow_c = np.maximum(lrow, 0)
    kind = rt["kind"].to_numpy()[lrow_c] if len(rt) else np.zeros(n, np.int8)
    launch_ts = rt["ts_ns"].to_numpy()[lrow_c] if len(rt) else np.zeros(n, np.int64)

    # 1. graph_internal: an activity of the same graph launch ends exactly at the gap start.
    graph_gap = has_launch & (kind == LaunchKind.GRAPH) & ~g_tail
    if graph_gap.any():
        graph_acts = np.flatnonzero(
            (links.launch_row >= 0)
            & (rt["kind"].to_numpy()[np.maximum(links.launch_row, 0)] == LaunchKind.GRAPH)
            & (activity_step >= 0)
        )
        ends = pd.DataFrame(
            {
                "step": activity_step[graph_acts].astype(np.int64),
                "end": gpu["end_ns"].to_numpy()[graph_acts],
                "corr": corr[graph_acts],
            }
        ).drop_duplicates()
        probe = pd.DataFrame(
            {
                "step": g_step[graph_gap],
                "end": g_start[graph_gap],
                "corr": corr[g_ender[graph_gap]],
                "i": np.flatnonzero(graph_gap),
            }
        )
        hit = probe.merge(ends, on=["step", "end", "corr"], how="inner")["i"].to_numpy()
        cls[hit] = GapClass.GRAPH_INTERNAL

    # 2./3. The launch call started at or after the gap start: the host had not issued it yet.
    host = has_launch & (launch_ts >= g_start) & (cls == GapClass.OTHER_IDLE)
    sync_end = np.sort(rt.loc[rt["is_sync"].to_numpy(), "end_ns"].to_numpy(), kind="stable")
    if len(sync_end):
        after_start = np.searchsorted(sync_end, g_start, side="right")
        by_launch = np.searchsorted(sync_end, launch_ts, side="right")
        synced = (by_launch - after_start) > 0
    else:
        synced = np.zeros(n, bool)
    cls[host & synced] = GapClass.SYNC_WAIT
    cls[host & ~synced] = GapClass.HOST_WAIT
    return cls


def nearest_rank(
    sorted_values: np.ndarray, starts: np.ndarray, counts: np.ndarray, q: float
) -> np.ndarray:
    """Nearest-rank percentile of each sorted group: the smallest value with at least a
    fraction ``q`` of the group at or below it."""
    k = np.maximum(np.ceil(q * counts).astype(np.int64), 1) - 1
    return sorted_values[starts + k]


def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of int keys (a radix sort when they fit 16 bits unsigned)."""
    if len(keys) and keys.min() >= 0 and keys.max() < 1 << 16:
        keys = keys.astype(np.uint16)
    return np.argsort(keys, kind="stable")


def _repeated(value: str, n: int) -> np.ndarray:
    """An object array of ``n`` references to ``value`` (``np.full`` would copy the string
    into every element)."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


def gap_stats(gaps: GapTable, step_names: tuple[str, ...]) -> GapStatsTable:
    """Count, p50, p90, max and sum of gap lengths per class: per step, per stream, overall."""
    dur = gaps.end_ns - gaps.start_ns
    by_dur = np.argsort(dur, kind="stable")  # sorted by (group, dur) below, one group sort each
    n_cls = len(GAP_CLASS_NAMES)
    class_names = object_column(GAP_CLASS_NAMES, n_cls)
    streams = distinct(gaps.stream)
    scopes: tuple[tuple[str, Callable[[], np.ndarray], Callable[[], np.ndarray]], ...] = (
        ("step", lambda: gaps.step.astype(np.int64),
         lambda: object_column(step_names, len(step_names))),
        ("stream", lambda: np.searchsorted(streams, gaps.stream),
         lambda: object_column([f"stream {s}" for s in streams], len(streams))),
        ("all", lambda: np.zeros(len(dur), np.int64), lambda: object_column(["all"], 1)),
    )
    parts: list[dict[str, np.ndarray]] = []
    for scope, scope_key, scope_labels in scopes:  # one scope's arrays alive at a time
        group = scope_key() * n_cls + gaps.cls
        order = by_dur[_stable_argsort(group[by_dur])]
        g_sorted, d_sorted = group[order], dur[order]
        del group, order
        starts = run_starts(g_sorted)
        if len(starts) == 0:
            continue
        uniq = g_sorted[starts]
        counts = np.diff(np.append(starts, len(g_sorted)))
        labels = scope_labels()
        parts.append({
            "scope": _repeated(scope, len(uniq)),
            "key": labels[uniq // n_cls],
            "gap_class": class_names[uniq % n_cls],
            "count": counts,
            "p50_ns": nearest_rank(d_sorted, starts, counts, 0.5),
            "p90_ns": nearest_rank(d_sorted, starts, counts, 0.9),
            "max_ns": d_sorted[starts + counts - 1],
            "sum_ns": np.add.reduceat(d_sorted, starts),
        })
    names = [f.name for f in GapStatsTable.specs]
    if not parts:
        return GapStatsTable({k: np.zeros(0, object if k in ("scope", "key", "gap_class")
                                          else np.int64) for k in names})
    # column by column, each part's copy freed once joined
    return GapStatsTable({k: np.concatenate([p.pop(k) for p in parts]) for k in names})

