"""Validity of a trace's values: find nonsense, exclude it from the metrics, and say so.

Definitions (``docs/metrics.md``, "Trace health"). Two stages:

1. :func:`screen_values` looks at each event's own values and **excludes** from every metric
   (and counts) the events whose ``ts`` / ``dur`` are no valid time, the ``ProfilerStep``
   windows of no positive length, and events far outside the trace's time range; it also
   counts the ``ProfilerStep`` ``B``/``E`` events the loader could not pair into windows. The tables
   keep the file's values (``decode.INVALID_NS`` marks NaN / Infinity / text / out of range);
   nothing is ever turned into 0.
2. :func:`ordering_warnings` checks the remaining events against each other: overlapping
   activities on one stream, activities starting before their launch call, and correlation ids
   shared by several runtime calls. These are counted, not excluded.

Every warning carries its count and the first offending event (earliest in the table's time
order). The codes in :data:`DATA_VALIDITY_CODES` are marked ``strict``: ``--strict`` fails on
them. All arithmetic is integer nanoseconds, vectorised over the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from traceviz.analyze.model import EventRef, HealthWarning
from traceviz.analyze.trace.links import Links
from traceviz.int_sets import distinct_with
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace
from traceviz.trace.decode import INVALID_NS, MISSING_ID
from traceviz.vocab import STEP_MARKER, Category

if TYPE_CHECKING:
    from traceviz.analyze.model import Analysis

#: Health codes that say the trace's data is wrong (``--strict`` exits 1 on any of them).
DATA_VALIDITY_CODES = (
    "invalid_timestamp",
    "invalid_duration",
    "negative_timestamp",
    "negative_duration",
    "degenerate_step_windows",
    "unpaired_step_events",
    "far_outside_time_range",
    "stream_overlap",
    "gpu_before_launch",
    "shared_correlation",
)

#: "Far outside": the margin is FAR_FACTOR × the width of the central 98 % of event starts ...
FAR_FACTOR = 10
#: ... and at least this much (so a short or uniform trace never flags ordinary events).
FAR_MIN_MARGIN_NS = 1_000_000_000

_TABLES = ("gpu", "runtime", "cpu")


@dataclass(frozen=True)
class Screened:
    """The trace with its invalid events removed, and what was removed."""

    trace: Trace  # the input itself when nothing was excluded
    gpu_rows: np.ndarray  # int64: row of the input's ``gpu`` table for each kept gpu row
    loaded_gpu_rows: int  # rows of the input's ``gpu`` table
    warnings: tuple[HealthWarning, ...]
    excluded_events: int  # rows of all three tables excluded

    @property
    def excluded_any(self) -> bool:
        return self.excluded_events > 0


def event_ref(trace: Trace, table: str, row: int) -> EventRef:
    """The event at ``row`` of ``trace.<table>``; invalid times become ``None``."""
    df: pd.DataFrame = getattr(trace, table)
    ts = int(df["ts_ns"].iat[row])
    dur = int(df["dur_ns"].iat[row])
    return EventRef(table, str(df["name"].iat[row]), None if ts == INVALID_NS else ts,
                    None if dur == INVALID_NS else dur)


def describe(ref: EventRef) -> str:
    """``kernel 'k' (gpu) at ts=12.345 µs, dur=NaN/inf/invalid``: for warning messages."""
    def t(v: int | None) -> str:
        return "invalid" if v is None else f"{v / 1000:.3f} µs"

    name = ref.name if len(ref.name) <= 80 else ref.name[:77] + "..."
    if ref.table == "flow":  # a flow event has no duration
        return f"flow event {name!r} at ts={t(ref.ts_ns)}"
    return f"{ref.table} event {name!r} at ts={t(ref.ts_ns)}, dur={t(ref.dur_ns)}"


_EXCLUDED = "excluded from every metric"


def _warning(trace: Trace, code: str, count: int, first: tuple[str, int], what: str,
             effect: str, noun: tuple[str, str] = ("event", "events")) -> HealthWarning:
    """``"<what>: <count> <noun>, <effect>; first: <event>"``."""
    ref = event_ref(trace, *first)
    message = f"{what}: {count} {noun[count != 1]}, {effect}; first: {describe(ref)}"
    return HealthWarning(code, message, count, ref, strict=code in DATA_VALIDITY_CODES)


def _first(masks: dict[str, np.ndarray], trace: Trace) -> tuple[str, int]:
    """The earliest flagged row over the tables (by ``ts_ns``; invalid ts count as earliest)."""
    best: tuple[int, str, int] | None = None
    for table, mask in masks.items():
        rows = np.flatnonzero(mask)
        if len(rows):
            row = int(rows[0])  # tables are sorted by ts_ns
            ts = int(getattr(trace, table)["ts_ns"].iat[row])
            if best is None or ts < best[0]:
                best = (ts, table, row)
    assert best is not None
    return best[1], best[2]


def step_markers(cpu: pd.DataFrame) -> np.ndarray:
    """Per ``cpu`` row: a ``ProfilerStep#N`` user annotation."""
    names = cpu["name"].cat.categories
    codes = [i for i, n in enumerate(names) if STEP_MARKER.match(str(n))]
    return (cpu["cat"].to_numpy() == Category.USER_ANNOTATION) & np.isin(
        cpu["name"].cat.codes.to_numpy(), codes
    )


def far_bounds_ns(starts: np.ndarray) -> tuple[int, int] | None:
    """``(lo, hi)``: an event starting before ``lo`` or after ``hi`` is far outside.

    ``p1`` / ``p99`` are nearest-rank percentiles of the event starts; the margin is
    ``max(FAR_FACTOR × (p99 − p1), FAR_MIN_MARGIN_NS)``; ``lo = p1 − margin``,
    ``hi = p99 + margin``. ``None`` without events.
    """
    n = len(starts)
    if n == 0:
        return None
    k1, k99 = max(1, -(-n // 100)) - 1, max(1, -(-n * 99 // 100)) - 1
    part = np.partition(starts, (k1, k99))
    p1, p99 = int(part[k1]), int(part[k99])
    margin = max(FAR_FACTOR * (p99 - p1), FAR_MIN_MARGIN_NS)
    return p1 - margin, p99 + margin


def far_bounds_sorted(parts: list[np.ndarray]) -> tuple[int, int] | None:
    """:func:`far_bounds_ns` of the starts of ``parts`` together, each part sorted: the
    nearest-rank percentiles are found by bisection on the value (``O(log² n)``, no copy)."""
    n = sum(len(p) for p in parts)
    if n == 0:
        return None
    k1, k99 = max(1, -(-n // 100)) - 1, max(1, -(-n * 99 // 100)) - 1
    p1, p99 = _kth_smallest(parts, k1), _kth_smallest(parts, k99)
    margin = max(FAR_FACTOR * (p99 - p1), FAR_MIN_MARGIN_NS)
    return p1 - margin, p99 + margin


def _kth_smallest(parts: list[np.ndarray], k: int) -> int:
    """The ``k``-th smallest (0-based) value of the sorted ``parts`` together: the least
    value ``v`` with more than ``k`` values ``≤ v``."""
    lo = min(int(p[0]) for p in parts if len(p))
    hi = max(int(p[-1]) for p in parts if len(p))
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(int(np.searchsorted(p, mid, side="right")) for p in parts) > k:
            hi = mid
        else:
            lo = mid + 1
    return lo


def screen_values(trace: Trace) -> Screened:
    """Exclude (and count) events whose values are no valid time; see the module docstring.

    A trace's tables are sorted by ``ts_ns`` (:mod:`traceviz.trace.tables`), so a table's
    negative and invalid starts (``INVALID_NS`` is negative) come first, and the far-outside
    bounds of a trace with nothing excluded before them are found by bisection: a clean trace
    costs one pass over each ``dur_ns`` column."""
    value_checks = {
        "invalid_timestamp": "ts is NaN, infinite, not a number or out of range",
        "invalid_duration": "dur is NaN, infinite, not a number or out of range",
        "negative_timestamp": "ts is negative",
        "negative_duration": "dur is negative (the event ends before it starts)",
    }
    flags: dict[str, dict[str, np.ndarray]] = {code: {} for code in value_checks}
    excluded: dict[str, np.ndarray | None] = {}  # None: nothing excluded from the table
    for table in _TABLES:
        df: pd.DataFrame = getattr(trace, table)
        ts, dur = df["ts_ns"].to_numpy(), df["dur_ns"].to_numpy()
        negative_dur = dur < 0
        if (len(ts) == 0 or ts[0] >= 0) and not negative_dur.any():
            excluded[table] = None
            continue
        bad_ts, bad_dur = ts == INVALID_NS, dur == INVALID_NS
        flags["invalid_timestamp"][table] = bad_ts
        flags["invalid_duration"][table] = bad_dur
        flags["negative_timestamp"][table] = (ts < 0) & ~bad_ts
        flags["negative_duration"][table] = negative_dur & ~bad_dur
        excluded[table] = (ts < 0) | negative_dur

    out: list[HealthWarning] = []
    for code, what in value_checks.items():
        count = sum(int(np.count_nonzero(m)) for m in flags[code].values())
        if count:
            out.append(_warning(trace, code, count, _first(flags[code], trace), what,
                                _EXCLUDED))

    unpaired = unpaired_steps_warning(trace)
    if unpaired is not None:
        out.append(unpaired)
    steps = step_markers(trace.cpu)
    degenerate = steps & _either(excluded["cpu"], trace.cpu["dur_ns"].to_numpy() <= 0)
    if degenerate.any():
        count = int(np.count_nonzero(degenerate))
        out.append(_warning(trace, "degenerate_step_windows", count,
                            _first({"cpu": degenerate}, trace),
                            "ProfilerStep window of no positive length (dur zero, negative, NaN "
                            "or infinite)", "not used as steps", ("window", "windows")))
        excluded["cpu"] = _either(excluded["cpu"], degenerate)

    far = _far_outside(trace, excluded)
    if far is not None:
        count = sum(int(np.count_nonzero(m)) for m in far.values())
        out.append(_warning(trace, "far_outside_time_range", count, _first(far, trace),
                            "start far outside the trace's time range (before p1 − margin or "
                            f"after p99 + margin of event starts, margin = max({FAR_FACTOR} × "
                            "(p99 − p1), 1 s))", _EXCLUDED))
        for table, m in far.items():
            excluded[table] = _either(excluded[table], m)

    n_excluded = sum(int(np.count_nonzero(m)) for m in excluded.values() if m is not None)
    gpu_excluded = excluded["gpu"]
    if n_excluded == 0 or gpu_excluded is None:
        gpu_rows = np.arange(len(trace.gpu), dtype=np.int64)
    else:
        gpu_rows = np.flatnonzero(~gpu_excluded).astype(np.int64)
    if n_excluded == 0:
        return Screened(trace, gpu_rows, len(trace.gpu), tuple(out), 0)
    kept = {t: getattr(trace, t).loc[~m].reset_index(drop=True)
            for t, m in excluded.items() if m is not None}
    return Screened(replace(trace, **kept), gpu_rows, len(trace.gpu), tuple(out), n_excluded)


def unpaired_steps_warning(trace: Trace) -> HealthWarning | None:
    """``unpaired_step_events``: the ``ProfilerStep`` ``B``/``E`` events of the trace that did
    not pair into a window (:mod:`traceviz.trace.begin_end`); ``None`` when all paired."""
    u = trace.meta.unpaired_steps
    if u is None:
        return None
    ts = None if u.first_ts_ns == INVALID_NS else u.first_ts_ns
    first = EventRef("cpu", u.first_name, ts, None)
    where = (f"'B' {u.first_name!r}" if u.first_phase == "B" else "'E'") + " at ts=" + (
        "invalid" if ts is None else f"{ts / 1000:.3f} µs")
    return HealthWarning(
        "unpaired_step_events",
        f"ProfilerStep span given as 'B'/'E' events that do not pair: {u.begins} 'B' that no "
        f"'E' closes, {u.ends} 'E' with no open 'B' (on the threads with steps), not used as "
        f"steps; first: {where}", u.begins + u.ends, first, strict=True)


def _either(a: np.ndarray | None, b: np.ndarray) -> np.ndarray:
    """``a | b``, where ``a`` ``None`` stands for no row."""
    return b if a is None else a | b


def index_loaded_rows(a: Analysis, screened: Screened) -> Analysis:
    """``a`` (computed on ``screened.trace``) with its per-row arrays re-indexed to the rows of
    the loaded ``gpu`` table: excluded rows get step -1 and family ``"excluded"``."""
    if not screened.excluded_any:
        return a
    kept, n = screened.gpu_rows, screened.loaded_gpu_rows
    step = np.full(n, -1, np.int32)
    step[kept] = a.activity_step
    family = np.full(n, "excluded", dtype=object)
    family[kept] = a.activity_family
    return replace(a, activity_step=step, activity_family=family,
                   gaps=replace(a.gaps, activity=kept[a.gaps.activity]))


def _far_outside(trace: Trace, excluded: dict[str, np.ndarray | None]
                 ) -> dict[str, np.ndarray] | None:
    """Per table, the not yet excluded events that start outside :func:`far_bounds_ns`
    (tables with none may be left out); ``None`` when there are none. Durations are not
    judged: an annotation that lasts until the profiler stops is legitimate, however long."""
    starts = {t: getattr(trace, t)["ts_ns"].to_numpy() for t in _TABLES}
    if all(m is None for m in excluded.values()):
        # Nothing excluded and every table sorted: bisect for the bounds and the far rows.
        bounds = far_bounds_sorted(list(starts.values()))
        if bounds is None:
            return None
        far = {}
        for t, ts in starts.items():
            before = int(np.searchsorted(ts, bounds[0], side="left"))
            after = int(np.searchsorted(ts, bounds[1], side="right"))
            if before or after < len(ts):
                m = np.zeros(len(ts), bool)
                m[:before] = m[after:] = True
                far[t] = m
        return far or None
    keep = {t: ~m if m is not None else None for t, m in excluded.items()}
    bounds = far_bounds_ns(np.concatenate([ts if keep[t] is None else ts[keep[t]]
                                           for t, ts in starts.items()]))
    if bounds is None:
        return None
    lo, hi = bounds
    far = {}
    for t, ts in starts.items():
        outside = (ts < lo) | (ts > hi)
        far[t] = outside if keep[t] is None else outside & keep[t]
    return far if any(m.any() for m in far.values()) else None


def ordering_warnings(trace: Trace, links: Links) -> tuple[HealthWarning, ...]:
    """Events whose order contradicts how CUDA works (counted, kept in the metrics)."""
    gpu, rt = trace.gpu, trace.runtime
    out: list[HealthWarning] = []
    if len(gpu):
        order = np.lexsort(
            (gpu["ts_ns"].to_numpy(), gpu["stream"].to_numpy(), gpu["device"].to_numpy())
        )
        dev, st = gpu["device"].to_numpy()[order], gpu["stream"].to_numpy()[order]
        ts, end = gpu["ts_ns"].to_numpy()[order], gpu["end_ns"].to_numpy()[order]
        same = (dev[1:] == dev[:-1]) & (st[1:] == st[:-1])
        rows = order[1:][same & (ts[1:] < end[:-1])]
        if len(rows):
            out.append(_warning(trace, "stream_overlap", len(rows), ("gpu", int(rows.min())),
                                "GPU activity starting before the previous one on its stream "
                                "ended (a stream runs its work in order: timestamps are wrong)",
                                "kept", ("activity", "activities")))
        lr = links.launch_row
        has = np.flatnonzero(lr >= 0)
        early = has[gpu["ts_ns"].to_numpy()[has] < rt["ts_ns"].to_numpy()[lr[has]]]
        if len(early):
            out.append(_warning(trace, "gpu_before_launch", len(early), ("gpu", int(early[0])),
                                "GPU activity starting before its launch call (CPU/GPU clock "
                                "skew)", "kept", ("activity", "activities")))
    corr = rt["correlation"].to_numpy()
    rows = np.flatnonzero(corr != MISSING_ID)
    if len(rows):
        _, first = distinct_with(corr[rows], index=True)
        reused = np.ones(len(rows), bool)
        reused[first] = False  # each id's first call owns it; later calls reuse it
        repeated = rows[reused]
        if len(repeated):
            out.append(_warning(trace, "shared_correlation", len(repeated),
                                ("runtime", int(repeated[0])),
                                "runtime call reusing the correlation id of an earlier call",
                                "the earlier call owns the GPU activities", ("call", "calls")))
    return tuple(out)
