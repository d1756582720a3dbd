"""Nesting one thread's events (depth, parent; improperly nested children clamped to their
parent) and the elementary-interval timeline with a constant innermost open event, which
the waiting windows are cut by (:func:`_pieces`) and instants are looked up in (:func:`_at`).
Times in int64 ns. Every step is vectorised, whatever the nesting depth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.trees import _chain_min
from traceviz.int_sets import stable_order

_MIN_T = np.iinfo(np.int64).min
_MAX_REPAIRS = 4


@dataclass(frozen=True)
class _Nesting:
    """One thread's events in nesting order, with the elementary-interval timeline."""

    order: np.ndarray  # event indices (into the thread's arrays), sorted by start, outer first
    parent: np.ndarray  # per sorted position: parent position, -1 for a root
    depth: np.ndarray  # per sorted position
    bad: int  # events that ended after their parent (clamped)
    times: np.ndarray  # elementary interval starts (first one = int64 min)
    inner: np.ndarray  # innermost open sorted position on [times[k], times[k+1]); -1 none
    opens: np.ndarray  # per sorted position: the first elementary interval it is open on
    closes: np.ndarray  # ... and the first after it: open on [opens, closes)


def _nesting_order(start: np.ndarray, end: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Event indices sorted by start, then end descending (outer first), then ``rank``, then
    input order: ``np.lexsort((rank, -end, start))``, computed as one stable sort of the
    starts (a thread's events arrive as a few sorted runs) plus a lexsort of the tied starts."""
    order = np.argsort(start, kind="stable")
    s = start[order]
    tie = s[1:] == s[:-1]
    if tie.any():
        tied = np.zeros(len(s), bool)
        tied[1:] = tie
        tied[:-1] |= tie
        at = np.flatnonzero(tied)  # runs of equal starts, each contiguous
        group = np.cumsum(np.append(0, ~tie))[at]  # run number of each tied position
        sub = order[at]
        order[at] = sub[np.lexsort((rank[sub], -end[sub], group))]
    return order


def _parents(depth: np.ndarray) -> np.ndarray:
    """Per position: the last earlier position one level up (-1 at depth 0): the parent.
    The keys ``depth · n + position`` sorted (positions in a stable order by depth); each
    position's parent is the last key below ``(depth - 1) · n + position`` if that key is on
    level ``depth - 1``."""
    n = len(depth)
    pos = np.arange(n, dtype=np.int64)
    d = depth.astype(np.int64)
    by_depth = stable_order(d)
    keys = d[by_depth] * n + by_depth
    want = (d - 1) * n + pos
    j = np.searchsorted(keys, want, side="left") - 1
    found = keys[np.maximum(j, 0)]
    return np.where((d > 0) & (j >= 0) & (found >= want - pos), found % max(n, 1), -1)


def _nest(start: np.ndarray, end: np.ndarray, rank: np.ndarray) -> _Nesting:
    """Nest one thread's events. Sweeping the open/close boundaries in time order (closes
    before opens at equal times) gives each event's depth: the events opened before it (its
    position in nesting order) minus those closed at or before its start.

    An event ending after its parent is clamped to its parent's end (top-down, so the fix
    cascades) and the sweep repeated, at most :data:`_MAX_REPAIRS` times; if events still end
    after their parents, :func:`_stack_nesting` settles the ends. The result is always laminar:
    each event lies within its parent and siblings do not overlap."""
    order = _nesting_order(start, end, rank)
    s, e = start[order], end[order]
    bad_first = -1
    for repair in range(_MAX_REPAIRS + 1):
        if repair == _MAX_REPAIRS:
            e = _stack_nesting(s, e)
        by_end, e_sorted, depth, parent = _sweep(s, e)
        over = (parent >= 0) & (e > e[np.maximum(parent, 0)])
        if bad_first < 0:
            bad_first = int(np.count_nonzero(over))
        if not over.any():
            break
        e = np.maximum(_chain_min(e, parent), s + 1)  # a clamped event keeps at least 1 ns
    times, inner = _timeline(s, parent, by_end, e_sorted)
    return _Nesting(order, parent, depth, max(bad_first, 0), times, inner,
                    np.searchsorted(times, s), np.searchsorted(times, e))


def _sweep(s: np.ndarray, e: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(positions by end, the sorted ends, depth, parent) of events sorted by start."""
    by_end = np.argsort(e, kind="stable")  # equal ends: the outer (earlier) one first
    e_sorted = e[by_end]
    depth = np.arange(len(s)) - np.searchsorted(e_sorted, s, side="right")
    return by_end, e_sorted, depth, _parents(depth)


def _stack_nesting(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Ends clamped in one pass over the events in nesting order with a stack of the open
    ones: an event's parent is the innermost event still open at its start (ending after
    it), and the event ends by its parent's end. O(n); reached only when the repeated sweep
    has not settled (events improperly nested in cascades)."""
    out = e.tolist()
    stack: list[int] = []
    for v, t in enumerate(s.tolist()):
        while stack and out[stack[-1]] <= t:
            stack.pop()
        if stack and out[v] > out[stack[-1]]:
            out[v] = out[stack[-1]]
        stack.append(v)
    return np.array(out, np.int64)


def _timeline(s: np.ndarray, parent: np.ndarray, by_end: np.ndarray, e_sorted: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The elementary intervals: their starts (every distinct boundary time, after int64 min)
    and the innermost open position on each (-1: none). At a time where events open, that is
    the last of them (opens go outer first); where events only close, the parent of the
    outermost of them (closes go inner first)."""
    n = len(s)
    t = np.concatenate([s, e_sorted])
    t.sort(kind="stable")  # two sorted runs: merged in linear time
    new = np.ones(len(t), bool)
    new[1:] = t[1:] != t[:-1]
    times = np.empty(int(np.count_nonzero(new)) + 1, np.int64)
    times[0] = _MIN_T
    np.compress(new, t, out=times[1:])
    inner = np.full(len(times), -1, np.int64)
    if n == 0:
        return times, inner
    u = times[1:]
    last_open = np.searchsorted(s, u, side="right") - 1
    opens = s[np.maximum(last_open, 0)] == u
    first_close = np.minimum(np.searchsorted(e_sorted, u, side="left"), n - 1)
    inner[1:] = np.where(opens, last_open, parent[by_end[first_close]])
    return times, inner


def _pieces(nest: _Nesting, a: np.ndarray, b: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut windows ``[a, b)`` (b > a) by the elementary intervals: (window index, elementary
    interval ``k``, ns) per piece, a window's pieces on consecutive ``k``; the innermost
    sorted position of a piece is ``nest.inner[k]``; the ns of each window sum to ``b - a``."""
    t = nest.times
    k0 = np.searchsorted(t, a, side="right") - 1
    k1 = np.searchsorted(t, b, side="left") - 1
    count = k1 - k0 + 1  # >= 1
    w = np.repeat(np.arange(len(a)), count)
    first = np.cumsum(count) - count
    k = k0[w] + (np.arange(len(w)) - first[w])
    # A window's pieces are consecutive: each starts where the previous one ends (an interval
    # start), except the first (at a); the last ends at b.
    lo = t[k]
    lo[first] = a
    hi = np.empty_like(lo)
    hi[:-1] = lo[1:]
    hi[first + count - 1] = b
    return w, k, hi - lo


def _at(nest: _Nesting, t: np.ndarray) -> np.ndarray:
    """The elementary interval holding each instant (events starting at t are open on it)."""
    return np.searchsorted(nest.times, t, side="right") - 1
