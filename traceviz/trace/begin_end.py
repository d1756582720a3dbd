"""Duration events given as ``B`` / ``E`` pairs, and the ``ProfilerStep`` windows among them.

Kineto writes every timed event as one ``"ph": "X"`` event with a ``dur``. The Chrome trace
format also allows a span as a begin event (``"ph": "B"``) and an end event (``"ph": "E"``) on
the same thread: an ``E`` closes the most recent still open ``B`` of its ``(pid, tid)``, whatever
its name (a stack). traceviz reads the ``ProfilerStep#N`` user annotations given this way as
step windows, exactly like ``X`` ones (``docs/metrics.md``, "Steps"); other ``B``/``E`` spans
are not read, only counted (the loader names them in a note).

Pairing, per thread with at least one step ``B``: the thread's ``B``/``E`` events in ``ts``
order (file order for equal ``ts``); an ``E`` with no open ``B``, a ``B`` that no ``E`` closes
and an event whose ``ts`` is no valid time (it has no place in the order) are *unpaired* (the
``unpaired_step_events`` health warning counts the step ``B`` among them and those ``E``).
Every step is vectorised over the events (numpy, no Python per event).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.int_sets import distinct, distinct_with
from traceviz.trace.decode import INVALID_NS, BeginEnd


def join(parts: list[tuple[BeginEnd, np.ndarray]]) -> BeginEnd:
    """The chunks' ``B``/``E`` events one after another; each chunk's step name codes are
    renumbered by its ``lut`` (chunk code → trace code)."""
    parts = [(p, lut) for p, lut in parts if len(p)]
    if not parts:
        return BeginEnd()
    step = []
    for p, lut in parts:
        codes = np.full(len(p), -1, np.int32)
        named = p.step_name >= 0
        codes[named] = lut[p.step_name[named]]
        step.append(codes)
    return BeginEnd(*(np.concatenate([getattr(p, k) for p, _ in parts])
                      for k in ("sign", "pid", "tid", "ts_ns")),
                    np.concatenate(step))


@dataclass(frozen=True)
class StepSpans:
    """The ``ProfilerStep`` windows of :func:`pair_steps`, and what did not pair."""

    name: np.ndarray  # int32 name code
    pid: np.ndarray
    tid: np.ndarray
    ts_ns: np.ndarray  # the "B" event's ts
    dur_ns: np.ndarray  # E.ts − B.ts
    unpaired_begins: int  # step "B" events that no "E" closes (or with no valid ts)
    unpaired_ends: int  # "E" events, on a thread with a step "B", that close no "B" (or with
    #                     no valid ts)
    first_unpaired: tuple[int, int] | None  # (index into the events, ts_ns) of the earliest
    other_events: int  # "B"/"E" events that are neither part of a step nor unpaired above


def _segment_cummin(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Running minimum of ``values`` restarting where ``segment`` (non-decreasing ints from
    0) changes: each segment is lowered below every earlier one, so an earlier minimum never
    reaches into it."""
    if not len(values):
        return values
    big = 2 * int(np.abs(values).max()) + 2
    shift = segment.astype(np.int64) * big
    return np.minimum.accumulate(values - shift) + shift


def _depth(sign: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Per event, the open spans of its segment after it (cumulative ``sign``)."""
    total = np.cumsum(sign, dtype=np.int64)
    start = np.r_[True, segment[1:] != segment[:-1]] if len(segment) else np.zeros(0, bool)
    before = (total - sign)[start]
    return total - before[np.cumsum(start) - 1]


def _unmatched(sign: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Per event (sorted by segment, then time): an ``E`` with no open ``B`` before it, or a
    ``B`` that no later ``E`` of its segment closes."""
    depth = _depth(sign, segment)
    low = np.minimum(_segment_cummin(depth, segment), 0)  # lowest depth so far, 0 included
    start = np.r_[True, segment[1:] != segment[:-1]]
    low_before = np.where(start, 0, np.r_[0, low[:-1]])
    lone_end = (sign < 0) & (low < low_before)
    keep = ~lone_end
    s2, seg2 = sign[keep], segment[keep]
    depth2 = _depth(s2, seg2)
    # A "B" at depth d is closed by the first later "E" that takes the depth to d − 1.
    last = seg2[-1] if len(seg2) else 0
    after = _segment_cummin(depth2[::-1], last - seg2[::-1])[::-1]  # min over [k, end]
    lone_begin = np.zeros(len(sign), bool)
    lone_begin[np.flatnonzero(keep)[(s2 > 0) & (after >= depth2)]] = True
    return lone_end | lone_begin


def pair_steps(events: BeginEnd) -> StepSpans | None:
    """Pair the ``B``/``E`` events on the threads holding a step ``B`` (module docstring);
    ``None`` when there are no ``B``/``E`` events."""
    n = len(events)
    if n == 0:
        return None
    none = np.zeros(0, np.int64)
    is_step = events.step_name >= 0
    if not is_step.any():
        return StepSpans(np.zeros(0, np.int32), none, none, none, none, 0, 0, None, n)
    # One int per (pid, tid) (np.unique over rows sorts a void dtype: ~50× slower).
    pid = distinct_with(events.pid, inverse=True)[1].astype(np.int64)
    tid = distinct_with(events.tid, inverse=True)[1].astype(np.int64)
    thread = pid * (int(tid.max()) + 1) + tid
    on_step_thread = np.isin(thread, distinct(thread[is_step]))
    timed = events.ts_ns != INVALID_NS  # an event with no valid time has no place to pair
    rows = np.flatnonzero(on_step_thread & timed)
    rows = rows[np.lexsort((events.ts_ns[rows], thread[rows]))]  # stable: file order on ties
    segment = distinct_with(thread[rows], inverse=True)[1]
    sign = events.sign[rows].astype(np.int64)
    lone = _unmatched(sign, segment)
    paired = rows[~lone]
    s, seg = sign[~lone], segment[~lone]
    # Balanced now: within one (thread, depth) the events alternate B, E, B, E ...
    level = _depth(s, seg) + (s < 0)
    order = np.lexsort((np.arange(len(s)), level, seg))
    begins, ends = paired[order][s[order] > 0], paired[order][s[order] < 0]
    step = is_step[begins]
    begins, ends = begins[step], ends[step]
    lone_rows = np.concatenate([rows[lone], np.flatnonzero(on_step_thread & ~timed)])
    lone_begins = lone_rows[(events.sign[lone_rows] > 0) & is_step[lone_rows]]
    lone_ends = lone_rows[events.sign[lone_rows] < 0]
    flagged = np.concatenate([lone_begins, lone_ends])
    first = None
    if len(flagged):
        at = int(flagged[np.argmin(events.ts_ns[flagged])])
        first = (at, int(events.ts_ns[at]))
    b_ts = events.ts_ns[begins]
    return StepSpans(events.step_name[begins], events.pid[begins], events.tid[begins], b_ts,
                     events.ts_ns[ends] - b_ts, len(lone_begins), len(lone_ends), first,
                     n - 2 * len(begins) - len(flagged))
