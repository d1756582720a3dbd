"""The candidate CPU events of host-wait attribution, gathered per CPU thread: the cpu table
minus step markers and step ancestors (events enclosing a step marker of their thread),
plus the runtime calls, each with its tie order for equal (start, end)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.trace import Trace
from traceviz.trace.parallel import thread_map
from traceviz.vocab import STEP_MARKER, Category

# Tie order for events with equal start and end: the outer one first.
_RANK = {Category.USER_ANNOTATION: 0, Category.PYTHON_FUNCTION: 1, Category.CPU_OP: 2}
_RUNTIME_RANK = 3


@dataclass(frozen=True)
class _Events:
    """All candidate CPU events (cpu table minus step markers, plus runtime calls), grouped by
    thread: thread ``k``'s events are ``[offsets[k], offsets[k + 1])``, its cpu rows (in table
    order) before its runtime rows (in table order)."""

    offsets: np.ndarray  # int64, one more than the threads
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    rank: np.ndarray  # int8 tie order
    name: np.ndarray  # int64 code into trace.names


def _events(trace: Trace, thread_of: dict[tuple[int, int], int], threads: int = 1) -> _Events:
    """Each thread's rows are selected with whole-table masks and gathered once (a trace's
    tables are large: every full-size temporary costs); per table, then per (thread, table),
    on ``threads`` threads."""
    cpu, rt = trace.cpu, trace.runtime
    names = trace.names
    step_codes = np.fromiter((i for i, n in enumerate(names) if STEP_MARKER.match(n)), np.int64)
    c_cat = cpu["cat"].to_numpy()
    is_marker = np.isin(cpu["name"].cat.codes.to_numpy(), step_codes) & (
        c_cat == Category.USER_ANNOTATION)
    rank_lut = np.full(max(Category) + 1, _RANK[Category.CPU_OP], np.int8)
    for cat, r in _RANK.items():
        rank_lut[cat] = r
    m_thread = _thread_ids(cpu["pid"].to_numpy()[is_marker], cpu["tid"].to_numpy()[is_marker],
                           thread_of)
    m_start, m_end = cpu["ts_ns"].to_numpy()[is_marker], cpu["end_ns"].to_numpy()[is_marker]

    # Plain columns only from here on: the threads below touch numpy arrays, not pandas.
    tables = [{"start": t["ts_ns"].to_numpy(), "end": t["end_ns"].to_numpy(),
               "pid": t["pid"].to_numpy(), "tid": t["tid"].to_numpy(),
               "name": t["name"].cat.codes.to_numpy()} for t in (cpu, rt)]
    tables[0]["cat"] = c_cat

    def candidates(t: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Thread per row, and the candidate rows: positive length, not a step marker."""
        cand = t["end"] > t["start"]
        if "cat" in t:
            cand &= ~is_marker
        return _thread_ids(t["pid"], t["tid"], thread_of), cand

    cands = thread_map(candidates, tables, threads)

    def rows(k_table: tuple[int, int]) -> tuple[np.ndarray, ...]:
        """(start, end, rank, name) of thread ``k``'s candidates in one table, without the
        thread's step ancestors."""
        k, i = k_table
        t, (th, cand) = tables[i], cands[i]
        mine = m_thread == k
        at = np.flatnonzero(cand & (th == k))
        start, end = t["start"][at], t["end"][at]
        keep = ~_encloses_step(start, end, m_start[mine], m_end[mine])
        if not keep.all():
            at, start, end = at[keep], start[keep], end[keep]
        rank = rank_lut[t["cat"][at]] if "cat" in t else np.full(len(at), _RUNTIME_RANK, np.int8)
        return start, end, rank, t["name"][at]

    parts = thread_map(rows, [(k, t) for k in range(len(thread_of)) for t in (0, 1)], threads)
    sizes = [len(p[0]) for p in parts]
    offsets = np.zeros(len(thread_of) + 1, np.int64)
    offsets[1:] = np.cumsum(np.add.reduceat(sizes, range(0, len(sizes), 2))) if sizes else []
    dtypes = (np.int64, np.int64, np.int8, np.int64)
    cols = [np.concatenate([p[i] for p in parts]).astype(dt, copy=False) if parts
            else np.zeros(0, dt) for i, dt in enumerate(dtypes)]
    return _Events(offsets, *cols)


def _encloses_step(start: np.ndarray, end: np.ndarray, m_start: np.ndarray, m_end: np.ndarray
                   ) -> np.ndarray:
    """Mask of the events of one thread that are **step ancestors**: they enclose at least one
    step marker of the thread (``start ≤ marker start`` and ``end ≥ marker end``, equal bounds
    included).

    With the markers sorted by start: the markers starting at or after an event's start are a
    suffix, and one of them ends by the event's end iff the suffix's smallest end does (a
    suffix minimum, so markers need not be disjoint).
    """
    out = np.zeros(len(start), bool)
    if len(m_start) == 0:
        return out
    o = np.argsort(m_start, kind="stable")
    ms, me = m_start[o], m_end[o]
    suffix_min_end = np.minimum.accumulate(me[::-1])[::-1]
    j = np.searchsorted(ms, start, side="left")  # first marker starting at or after
    found = np.flatnonzero(j < len(ms))
    out[found] = suffix_min_end[j[found]] <= end[found]
    return out


def _thread_ids(pid: np.ndarray, tid: np.ndarray, thread_of: dict[tuple[int, int], int]
                ) -> np.ndarray:
    """Thread id per row for the (pid, tid) pairs in ``thread_of``; -1 for other threads."""
    out = np.full(len(pid), -1, np.int64)
    for (p, t), k in thread_of.items():
        out[(pid == p) & (tid == t)] = k
    return out
