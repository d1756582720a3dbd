"""Interval unions per group, vectorised (no Python loop over events).

All inputs are integer nanoseconds, sorted by ``(group, ts)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np


@dataclass(frozen=True)
class GroupUnion:
    """Union of the intervals of each group.

    ``gap_rows`` are the (sorted) rows that start a new merged interval after a hole inside their
    group; the hole is ``[gap_start_ns, ts[gap_rows]]``.
    """

    group_first_row: np.ndarray  # first sorted row of each group
    group_last_row: np.ndarray  # last sorted row of each group
    first_start_ns: np.ndarray  # per group
    last_end_ns: np.ndarray  # per group: max end
    busy_ns: np.ndarray  # per group: length of the union
    gap_rows: np.ndarray
    gap_start_ns: np.ndarray
    gap_group: np.ndarray  # group position (0..n_groups-1) of each hole


def _grouped_cummax(
    group_pos: np.ndarray, first_row: np.ndarray, ts: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Running max of ``end`` that restarts at each group (``group_pos`` = 0,1,2,... sorted)."""
    rel = end - ts[first_row][group_pos]  # >= 0 because rows are sorted by ts within a group
    span = int(rel.max()) + 1 if len(rel) else 1
    n_groups = len(first_row)
    if span * max(n_groups, 1) < (1 << 62):
        shifted = rel + group_pos.astype(np.int64) * span
        return (
            np.maximum.accumulate(shifted)
            - group_pos.astype(np.int64) * span
            + ts[first_row][group_pos]
        )
    out = np.empty_like(end)  # pragma: no cover - needs > 2^62 ns of spans
    bounds = np.append(first_row, len(end))
    for a, b in pairwise(bounds):
        out[a:b] = np.maximum.accumulate(end[a:b])
    return out


def group_union(group: np.ndarray, ts: np.ndarray, end: np.ndarray) -> GroupUnion:
    """Merge the intervals ``[ts, end]`` of each group (rows sorted by group, then ts).

    Touching intervals (``ts == previous max end``) merge without a hole.
    """
    n = len(ts)
    if n == 0:
        z = np.zeros(0, np.int64)
        return GroupUnion(z, z, z, z, z, z, z, z)
    new_group = np.empty(n, bool)
    new_group[0] = True
    new_group[1:] = group[1:] != group[:-1]
    first_row = np.flatnonzero(new_group)
    last_row = np.append(first_row[1:] - 1, n - 1)
    group_pos = np.cumsum(new_group) - 1
    cm = _grouped_cummax(group_pos, first_row, ts, end)
    prev = np.empty(n, np.int64)
    prev[0] = 0
    prev[1:] = cm[:-1]
    hole = ~new_group & (ts > prev)
    gap_rows = np.flatnonzero(hole)
    gap_start = prev[gap_rows]
    gap_group = group_pos[gap_rows]
    first_start = ts[first_row]
    last_end = cm[last_row]
    hole_len = np.zeros(len(first_row), np.int64)
    np.add.at(hole_len, gap_group, ts[gap_rows] - gap_start)
    busy = last_end - first_start - hole_len
    return GroupUnion(
        first_row, last_row, first_start, last_end, busy, gap_rows, gap_start, gap_group
    )


def union_length(ts: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals (any order), in the inputs' unit."""
    if len(ts) == 0:
        return 0
    order = np.argsort(ts, kind="stable")
    u = group_union(np.zeros(len(ts), np.int64), ts[order], end[order])
    return int(u.busy_ns[0])
