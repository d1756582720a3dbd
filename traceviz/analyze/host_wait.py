"""Host-wait attribution: which CPU code was running while the GPU waited for the host.

Definitions (``docs/metrics.md``, "Host-wait sources"): each ``host_wait`` / ``sync_wait`` gap
``[gap start, gap end)`` is split at ``min(launch start, gap end)``, where *launch* is the
launch call of the activity ending the gap, on that call's thread:

* the **waiting window** ``[gap start, min(launch start, gap end))``: at each instant the source
  is the chain of CPU events open on the launch thread (``user_annotation``, ``cpu_op``,
  ``python_function``, runtime/driver calls) below the step marker: ``ProfilerStep#N`` and
  every *step ancestor* (an event enclosing a step marker of its thread, such as the harness's
  Python frames around the profiled loop) are excluded; no open event → ``(python / untraced)``;
* the **launch tail** ``[min(launch start, gap end), gap end)``: the launch call had started but
  the activity had not; attributed to the chain open at the launch call's start (normally the
  launch call itself, under its callers).

So every nanosecond of every gap goes to exactly one innermost event (the **self** view) and
to that event and each distinct ancestor name (the **inclusive** view): per gap, per step and
over the trace, self sums to ``host_wait + sync_wait`` exactly, in integer ns.

Vectorised per block of a thread's events (a thread's events cut where none of them is open,
:func:`_blocks`; one block per thread on one analysis thread): events are nested once (depth =
events opened before minus events closed by the start, parent = the previous event one level
up), the block's timeline is cut into elementary intervals with a constant innermost event, and
the windows are intersected with those intervals by ``searchsorted``. Each block also labels
its events, interns its call paths and sums its pieces per path and per (step, path), so the
merge (:func:`_merge`) works on call paths, never on pieces. Blocks run in forked worker
processes, or on threads where processes cannot fork (:class:`HostWaitPlan`); Python loops run
over blocks, nesting depth and call paths only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise

import numpy as np

from traceviz.analyze.links import Links
from traceviz.analyze.model import GapTable, HealthWarning
from traceviz.trace import Trace
from traceviz.trace.parallel import thread_map
from traceviz.vocab import (
    COMPILED_FX_GRAPH_PREFIX,
    COMPILED_REGION,
    STEP_MARKER,
    Category,
    GapClass,
)

#: Source of time when no CPU event is open on the launch thread.
UNTRACED = "(python / untraced)"
#: Separator between a compiled region and what ran inside it.
IN_REGION = " › "
#: Leaf name of copies inside a CompiledFxGraph call (CUDA-graph input copies).
INPUT_COPIES = "input copies"

_MIN_T = np.iinfo(np.int64).min
_MAX_T = np.iinfo(np.int64).max
# Tie order for events with equal start and end: the outer one first.
_RANK = {Category.USER_ANNOTATION: 0, Category.PYTHON_FUNCTION: 1, Category.CPU_OP: 2}
_RUNTIME_RANK = 3
_MAX_REPAIRS = 4


@dataclass(frozen=True)
class SourceRow:
    """One source of host wait in one scope (a step or the trace)."""

    source: str
    host_wait_ns: int
    share: float | None  # of the scope's host wait (host_wait + sync_wait)
    gaps: int  # gaps in which this source got > 0 ns


@dataclass(frozen=True)
class SourceTable:
    """Sources of one scope, sorted by ``host_wait_ns`` (descending), then name."""

    scope: str  # step name, or "trace"
    total_ns: int  # host_wait + sync_wait of the scope (== sum of the self rows)
    inclusive: tuple[SourceRow, ...]
    self: tuple[SourceRow, ...]


@dataclass(frozen=True)
class HostWaitSources:
    """Attributed host wait, as a sparse (step × source) table of integer ns.

    ``step``/``source``/``self_ns``/``inclusive_ns``/``self_gaps``/``inclusive_gaps`` are
    parallel arrays, one row per (step, source) pair with > 0 ns in either view. ``path_*``
    hold the distinct call paths (root → leaf chains of sources) with their self ns over the
    trace: the flame graph.
    """

    step_names: tuple[str, ...]
    sources: tuple[str, ...]  # label per source id
    step_total_ns: np.ndarray = field(repr=False)  # int64 per step: host_wait + sync_wait gaps
    step: np.ndarray = field(repr=False)  # int64
    source: np.ndarray = field(repr=False)  # int64 id into ``sources``
    self_ns: np.ndarray = field(repr=False)  # int64
    inclusive_ns: np.ndarray = field(repr=False)  # int64
    self_gaps: np.ndarray = field(repr=False)  # int64
    inclusive_gaps: np.ndarray = field(repr=False)  # int64
    path_parent: np.ndarray = field(repr=False)  # int64 per call path: parent path, -1 root
    path_source: np.ndarray = field(repr=False)  # int64 per call path: its innermost source
    path_self_ns: np.ndarray = field(repr=False)  # int64 per call path: self ns, whole trace
    gaps: int  # host_wait + sync_wait gaps attributed
    improperly_nested: int  # CPU events ending after their parent (clamped to it)
    has_stacks: bool  # python_function events were present

    @property
    def total_ns(self) -> int:
        return int(self.step_total_ns.sum())

    def table(self, step: int | None = None) -> SourceTable:
        """Full sorted table of one step (by index) or, with ``None``, of the whole trace."""
        if step is None:
            sel = slice(None)
        else:  # rows are sorted by step
            lo, hi = np.searchsorted(self.step, [step, step + 1])
            sel = slice(int(lo), int(hi))
        total = self.total_ns if step is None else int(self.step_total_ns[step])
        scope = "trace" if step is None else self.step_names[step]
        src = self.source[sel]

        def rows(ns: np.ndarray, gaps: np.ndarray) -> tuple[SourceRow, ...]:
            ids, by_ns, by_gaps = src, ns[sel], gaps[sel]
            if step is None:  # several steps: sum per source
                by_ns = np.zeros(len(self.sources), np.int64)
                np.add.at(by_ns, src, ns[sel])
                by_gaps = np.zeros(len(self.sources), np.int64)
                np.add.at(by_gaps, src, gaps[sel])
                ids = np.arange(len(self.sources))
            keep = by_ns > 0
            ids, by_ns, by_gaps = ids[keep], by_ns[keep], by_gaps[keep]
            order = np.lexsort((ids, -by_ns))  # source ids are in name order
            return tuple(
                SourceRow(self.sources[i], v, v / total if total > 0 else None, g)
                for i, v, g in zip(ids[order].tolist(), by_ns[order].tolist(),
                                   by_gaps[order].tolist(), strict=True)
            )

        return SourceTable(scope, total, rows(self.inclusive_ns, self.inclusive_gaps),
                           rows(self.self_ns, self.self_gaps))

    def path_inclusive_ns(self) -> np.ndarray:
        """Per call path: its self ns plus that of every path below it (whole trace)."""
        inc = self.path_self_ns.copy()
        # Parents are numbered before their children, so one reverse pass adds each subtree.
        for i in range(len(inc) - 1, -1, -1):
            if self.path_parent[i] >= 0:
                inc[self.path_parent[i]] += inc[i]
        return inc

    def per_step_inclusive_ns(self, steps: np.ndarray) -> dict[str, float]:
        """Mean inclusive ns per step over the given step indices, by source label."""
        return self._per_step_mean(self.inclusive_ns, steps)

    def per_step_self_ns(self, steps: np.ndarray) -> dict[str, float]:
        """Mean self ns per step over the given step indices, by source label."""
        return self._per_step_mean(self.self_ns, steps)

    def _per_step_mean(self, values: np.ndarray, steps: np.ndarray) -> dict[str, float]:
        """``values`` (one per (step, source) row) summed per source over ``steps``, divided
        by the number of steps; sources with nothing left out."""
        if len(steps) == 0:
            return {}
        sel = np.isin(self.step, steps)
        out = np.zeros(len(self.sources), np.int64)
        np.add.at(out, self.source[sel], values[sel])
        return {self.sources[i]: int(out[i]) / len(steps) for i in np.flatnonzero(out)}


def top_rows(rows: tuple[SourceRow, ...], n: int, total_ns: int) -> tuple[SourceRow, ...]:
    """The first ``n`` rows plus, if more, one ``(N other sources)`` row summing the rest
    (its ``gaps`` is the largest gap count among them: gaps can repeat across sources)."""
    if len(rows) <= n:
        return rows
    rest = rows[n:]
    ns = sum(r.host_wait_ns for r in rest)
    return (*rows[:n], SourceRow(f"({len(rest)} other sources)", ns,
                                 ns / total_ns if total_ns > 0 else None,
                                 max(r.gaps for r in rest)))


# --- events and nesting --------------------------------------------------------------------


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


@dataclass(frozen=True)
class _Nesting:
    """One thread's events in nesting order, with the elementary-interval timeline."""

    order: np.ndarray  # event indices (into the thread's arrays), sorted by start, outer first
    parent: np.ndarray  # per sorted position: parent position, -1 for a root
    depth: np.ndarray  # per sorted position
    bad: int  # events that ended after their parent (clamped)
    times: np.ndarray  # elementary interval starts (first one = int64 min)
    inner: np.ndarray  # innermost open sorted position on [times[k], times[k+1]); -1 none


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


def _levels(depth: np.ndarray) -> list[np.ndarray]:
    """Indices of the non-negative ``depth``, level by level (0, 1, …), ascending within each
    level: one stable sort (a radix sort for 16-bit values)."""
    if len(depth) == 0:
        return []
    small = depth.astype(np.int16) if depth.max() < 2**15 else depth
    return np.split(np.argsort(small, kind="stable"), np.cumsum(np.bincount(depth))[:-1])


def _parents(depth: np.ndarray) -> np.ndarray:
    """Per position: the last earlier position one level up (-1 at depth 0): the parent."""
    parent = np.full(len(depth), -1, np.int64)
    for up, child in pairwise(_levels(depth)):
        j = np.searchsorted(up, child, side="left") - 1
        parent[child] = np.where(j >= 0, up[np.maximum(j, 0)], -1)
    return parent


def _nest(start: np.ndarray, end: np.ndarray, rank: np.ndarray) -> _Nesting:
    """Nest one thread's events. Sweeping the open/close boundaries in time order (closes
    before opens at equal times) gives each event's depth: the events opened before it (its
    position in nesting order) minus those closed at or before its start."""
    order = _nesting_order(start, end, rank)
    s, e = start[order], end[order]
    n = len(s)
    bad_first = -1
    for _ in range(_MAX_REPAIRS):
        by_end = np.argsort(e, kind="stable")  # equal ends: the outer (earlier) one first
        e_sorted = e[by_end]
        depth = np.arange(n) - np.searchsorted(e_sorted, s, side="right")
        parent = _parents(depth)
        over = (parent >= 0) & (e > e[np.maximum(parent, 0)])
        if bad_first < 0:
            bad_first = int(np.count_nonzero(over))
        if not over.any():
            break
        for d in range(1, int(depth.max()) + 1):  # clamp top-down so the fix cascades
            at = np.flatnonzero((depth == d) & (parent >= 0))
            e[at] = np.minimum(e[at], e[parent[at]])
        e = np.maximum(e, s + 1)  # a clamped event keeps at least 1 ns
    times, inner = _timeline(s, parent, by_end, e_sorted)
    return _Nesting(order, parent, depth, max(bad_first, 0), times, inner)


def _timeline(s: np.ndarray, parent: np.ndarray, by_end: np.ndarray, e_sorted: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The elementary intervals: their starts (every distinct boundary time, after int64 min)
    and the innermost open position on each (-1: none). At a time where events open, that is
    the last of them (opens go outer first); where events only close, the parent of the
    outermost of them (closes go inner first)."""
    n = len(s)
    t = np.concatenate([s, e_sorted])
    t.sort()
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
    """Cut windows ``[a, b)`` (b > a) by the elementary intervals: (window index, innermost
    sorted position or -1, ns) per piece; the ns of each window sum to ``b - a``."""
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
    return w, nest.inner[k], hi - lo


def _at(nest: _Nesting, t: np.ndarray) -> np.ndarray:
    """Innermost open sorted position at each instant (events starting at t are open)."""
    return nest.inner[np.searchsorted(nest.times, t, side="right") - 1]


# --- labels ----------------------------------------------------------------------------------


#: `` at 0x7eff10006e40`` in ``<built-in method add_ of Tensor object at 0x…>``: an object
#: address, different in every run, so it is dropped from the source name.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>$)")


def _short(name: str) -> str:
    """``## Call CompiledFxGraph fxyz… ##`` → ``CompiledFxGraph fxyz…`` (first 8 chars); object
    addresses dropped from Python built-in frames (so sources match across runs)."""
    if name.startswith(COMPILED_FX_GRAPH_PREFIX):
        h = name[len(COMPILED_FX_GRAPH_PREFIX):].strip(" #")
        return f"CompiledFxGraph {h[:8]}" if h else "CompiledFxGraph"
    return _ADDRESS.sub("", name)


#: A Python frame as the profiler names it: ``path/to/file.py(LINE): function``.
_FRAME = re.compile(r"^(?P<path>.+?)\((?P<line>\d+)\): (?P<func>.*)$")
#: ``<built-in method NAME of TYPE object>``: the type is often a long pybind11 record name.
_BUILTIN_METHOD = re.compile(r"^<built-in method (?P<name>\S*) of .+>$")
#: Longest file stem shown (generated inductor modules are named by a 52-char hash).
_MAX_STEM = 24


def display_name(source: str) -> str:
    """Short form of a source label for tables, figures and sentences; the label itself (JSON,
    comparisons) is unchanged. Per part of a ``region › name`` label: a Python frame keeps its
    file name and line (``/work/main/workloads/train_step.py(30): step`` →
    ``train_step.py(30): step``; a stem over 24 characters is cut to 23 and ``…``), a
    built-in method drops its type (``<built-in method add_>``, ``<built-in method (unnamed)>``
    for an empty name); other names are kept."""
    return IN_REGION.join(_display_part(p) for p in source.split(IN_REGION))


def _display_part(name: str) -> str:
    if m := _FRAME.match(name):
        file = m["path"].replace("\\", "/").rsplit("/", 1)[-1]
        stem, dot, ext = file.rpartition(".")
        if not dot:
            stem, ext = file, ""
        if len(stem) > _MAX_STEM:
            stem = stem[:_MAX_STEM - 1] + "…"
        return f"{stem}{dot}{ext}({m['line']}): {m['func']}"
    if m := _BUILTIN_METHOD.match(name):
        return f"<built-in method {m['name'] or '(unnamed)'}>"
    return name


def _region_label(names: list[str], region_name: int, fx_name: int, name: int) -> str:
    """Label of an event: its name, prefixed by the compiled region it runs in (if any);
    copies inside a CompiledFxGraph call are that region's ``input copies``. A compiled
    region marker is named by itself, also when nested in another region."""
    own = _short(names[name])
    if COMPILED_REGION.match(names[name]):
        return own
    region = names[region_name] if region_name >= 0 else (
        _short(names[fx_name]) if fx_name >= 0 else None)
    if region is None:
        return own
    leaf = INPUT_COPIES if fx_name >= 0 and "copy" in names[name].lower() else own
    return f"{region}{IN_REGION}{leaf}"


def _overlapping(start: np.ndarray, end: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mask of events ``[start, end)`` that intersect at least one interval ``[a, b)``."""
    if len(a) == 0 or len(start) == 0:
        return np.zeros(len(start), bool)
    o = np.argsort(a, kind="stable")
    a, b = a[o], b[o]
    reach = np.maximum.accumulate(b)
    new = np.ones(len(a), bool)
    new[1:] = a[1:] > reach[:-1]
    m_start = a[new]
    m_end = np.maximum.reduceat(b, np.flatnonzero(new))
    j = np.searchsorted(m_end, start, side="right")
    jc = np.minimum(j, len(m_end) - 1)
    return (j < len(m_end)) & (m_start[jc] < end)


def _region_keys(name: np.ndarray, nest: _Nesting, region_lut: np.ndarray,
                 fx_lut: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per sorted position: (enclosing compiled-region name code, enclosing CompiledFxGraph
    name code); -1 where there is no such strict ancestor. ``None`` when the thread has no
    such events (eager code: every position would be -1). ``*_lut``: per name code, whether
    it names a compiled region / a CompiledFxGraph call."""
    n = len(name)
    is_region = region_lut[name]
    is_fx = fx_lut[name]
    if not (is_region.any() or is_fx.any()):
        return None
    region = np.full(n, -1, np.int64)
    fx = np.full(n, -1, np.int64)
    for d in range(1, int(nest.depth.max()) + 1 if n else 0):
        at = np.flatnonzero(nest.depth == d)
        par = nest.parent[at]
        at, par = at[par >= 0], par[par >= 0]
        region[at] = np.where(is_region[par], name[par], region[par])
        fx[at] = np.where(is_fx[par], name[par], fx[par])
    return region, fx


def _ancestors(leaves: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The leaves and every ancestor of them (sorted, distinct); each node visited once."""
    seen = np.zeros(len(parent), bool)
    seen[leaves] = True
    cur = parent[np.flatnonzero(seen)]  # leaves repeat: start from each distinct one once
    cur = cur[cur >= 0]
    while len(cur):
        cur = cur[~seen[cur]]
        seen[cur] = True
        cur = parent[cur]
        cur = cur[cur >= 0]
    return np.flatnonzero(seen)


def _unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (a, b) pairs of int64 ≥ -1, sorted by a then b, and the inverse index; one
    1-D integer key (``np.unique(axis=...)`` sorts structured rows, far slower), marked in a
    table when its range is small (:func:`_dense`), else sorted."""
    m = int(b.max()) + 2 if len(b) else 1
    key = (a + 1) * m + (b + 1)
    if _dense(key):
        present = np.zeros(int(key.max()) + 1, bool)
        present[key] = True
        uniq = np.flatnonzero(present)
        return uniq // m - 1, uniq % m - 1, (np.cumsum(present) - 1)[key]
    o = np.argsort(key, kind="stable")  # inputs here come in runs: a stable sort is fastest
    k = key[o]
    new = np.concatenate([[True], k[1:] != k[:-1]]) if len(k) else np.zeros(0, bool)
    inv = np.empty(len(k), np.int64)
    inv[o] = np.cumsum(new) - 1
    uniq = k[new]
    return uniq // m - 1, uniq % m - 1, inv


#: Keys ``0 ≤ key < 2 × count + DENSE_SLACK`` are handled with a table indexed by key.
DENSE_SLACK = 1 << 16


def _dense(key: np.ndarray) -> bool:
    """Whether the non-negative int64 ``key`` has a range small enough for a key-indexed
    table (no sort): below ``2 × len(key) + DENSE_SLACK``."""
    return len(key) > 0 and int(key.min()) >= 0 and int(key.max()) < 2 * len(key) + DENSE_SLACK


def _group_sum(key: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (sorted) and the exact int64 sum of ``values`` per key (a key-indexed
    table when the range is small, :func:`_dense`; else a sort)."""
    if _dense(key):
        span = int(key.max()) + 1
        sums = np.zeros(span, np.int64)
        np.add.at(sums, key, values)
        present = np.zeros(span, bool)
        present[key] = True
        distinct = np.flatnonzero(present)
        return distinct, sums[distinct]
    o = np.argsort(key, kind="stable")  # keys come in runs: the stable sort is the fastest
    k = key[o]
    first = _firsts(k)
    sums = np.add.reduceat(values[o], first) if len(k) else np.zeros(0, np.int64)
    return k[first], sums


def _firsts(k: np.ndarray) -> np.ndarray:
    """Indices where a new value starts in the sorted array ``k``."""
    if len(k) == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))


def _distinct(key: np.ndarray) -> np.ndarray:
    """Sorted distinct values of ``key`` (a plain sort: no indices to carry)."""
    k = np.sort(key)
    return k[_firsts(k)]


def _step_gap_counts(gap_src: np.ndarray, gap_step: np.ndarray, n_src: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """From the distinct ``gap * n_src + source`` keys: (key = step * n_src + source, sorted;
    number of gaps of that step in which the source got time)."""
    k = np.sort(gap_step[gap_src // n_src] * n_src + gap_src % n_src)
    first = _firsts(k)
    return k[first], np.diff(np.append(first, len(k)))


def _chain_sources(path_parent: np.ndarray, path_source: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per call path, the distinct sources on its chain (itself and its ancestors), as CSR
    (``ptr``, ``sources``). One pass over the paths (parents are numbered first)."""
    chains: list[tuple[int, ...]] = []
    for parent_path, src in zip(path_parent.tolist(), path_source.tolist(), strict=True):
        up = chains[parent_path] if parent_path >= 0 else ()
        chains.append(up if src in up else (*up, src))
    ptr = np.zeros(len(chains) + 1, np.int64)
    ptr[1:] = np.cumsum([len(c) for c in chains])
    flat = np.fromiter((s for c in chains for s in c), np.int64, count=int(ptr[-1]))
    return ptr, flat


def _on_chains(ptr: np.ndarray, chain: np.ndarray, paths: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct source on the chain of each of ``paths`` (CSR ``ptr``/``chain`` of
    :func:`_chain_sources`): (index into ``paths``, source), one row per pair."""
    count = ptr[paths + 1] - ptr[paths]
    rep = np.repeat(np.arange(len(paths)), count)
    first = np.repeat(ptr[paths] - (np.cumsum(count) - count), count)
    return rep, chain[np.arange(len(rep)) + first]


# --- blocks of events, attributed in parallel -----------------------------------------------

#: A thread's events are cut into blocks of at least this many events for the analysis threads.
MIN_BLOCK_EVENTS = 32_768
#: ... and into at most this many blocks per analysis thread (load balance across threads).
BLOCKS_PER_THREAD = 4
#: Whatever the thread count, a block holds at most about this many events: a block's working
#: arrays are several times its events, so this bounds the attribution's peak memory (on the
#: 10⁶-step benchmark trace, one block of its 2·10⁶ events took 335 MiB beyond what stayed).
MAX_BLOCK_EVENTS = 1 << 18


def _block_count(events: int, threads: int) -> int:
    """Blocks to cut a thread's ``events`` into: enough for blocks of at most
    :data:`MAX_BLOCK_EVENTS`, and on several analysis threads, for load balance, up to
    :data:`BLOCKS_PER_THREAD` per thread (of at least :data:`MIN_BLOCK_EVENTS`)."""
    by_size = -(-events // MAX_BLOCK_EVENTS)
    if threads <= 1:
        return max(1, by_size)
    return max(1, by_size, min(events // MIN_BLOCK_EVENTS, BLOCKS_PER_THREAD * threads))


@dataclass(frozen=True)
class _Windows:
    """Waiting windows ``[a, b)`` (``b > a``) and the gap (row of the gap selection) of each."""

    gap: np.ndarray
    a: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class _Tails:
    """Launch tails: the gap of each, the instant ``t`` (the launch call's start) whose
    innermost open event gets the tail, and its length in ns."""

    gap: np.ndarray
    t: np.ndarray
    ns: np.ndarray


@dataclass(frozen=True)
class _Block:
    """Events of one thread (global indices) that no event of that thread outside them
    overlaps, with the windows' parts and the tails inside the block's time range."""

    events: np.ndarray
    windows: _Windows
    tails: _Tails


def _blocks(ev: _Events, lo: int, hi: int, count: int, windows: _Windows, tails: _Tails
            ) -> tuple[list[_Block], np.ndarray]:
    """Cut the thread's events ``[lo, hi)`` into about ``count`` blocks of similar size, at
    instants ``c`` where none of them is open (each one ends at or before ``c`` or starts at
    or after it): sorted by start, position ``i`` is such a cut when every event before it has
    ended by ``start[i]``. A block's time range is ``[c_j, c_j+1)`` (the first from −∞, the last
    to +∞); windows are cut at the ``c_j`` and tails go to the block holding their instant.

    Nothing open crosses a cut, so each event's parent, depth and enclosing region lie in its
    block, and each instant's innermost open event is found in the block holding it: the
    blocks' pieces are those of the whole thread, with a piece that crosses a cut in two parts
    of the same (gap, leaf), whose ns add up. Also returns the gaps (rows of the gap
    selection) with window parts or tails in more than one block, sorted."""
    n = hi - lo
    one = [_Block(np.arange(lo, hi), windows, tails)], np.zeros(0, np.int64)
    if count <= 1 or n < 2:
        return one
    start, end = ev.start[lo:hi], ev.end[lo:hi]
    order = np.argsort(start, kind="stable")
    s = start[order]
    reach = np.maximum.accumulate(end[order])
    ok = np.flatnonzero(reach[:-1] <= s[1:]) + 1
    want = np.searchsorted(ok, np.arange(1, count) * n // count)
    cuts = np.unique(ok[want[want < len(ok)]])
    if len(cuts) == 0:
        return one
    at = s[cuts]  # c_1 … c_B-1
    # Window parts: window [a, b) spans the blocks of a (cuts <= a) to b - 1 (cuts < b).
    first = np.searchsorted(at, windows.a, side="right")
    count_w = np.searchsorted(at, windows.b, side="left") - first + 1
    w = np.repeat(np.arange(len(windows.a)), count_w)
    blk = first[w] + (np.arange(len(w)) - np.repeat(np.cumsum(count_w) - count_w, count_w))
    bounds = np.concatenate([[_MIN_T], at, [_MAX_T]])
    part_a = np.maximum(windows.a[w], bounds[blk])
    part_b = np.minimum(windows.b[w], bounds[blk + 1])
    p_of = np.argsort(blk, kind="stable")  # window parts by block
    p_at = np.searchsorted(blk[p_of], np.arange(len(cuts) + 2))
    t_blk = np.searchsorted(at, tails.t, side="right")
    t_of = np.argsort(t_blk, kind="stable")  # tails by block
    t_at = np.searchsorted(t_blk[t_of], np.arange(len(cuts) + 2))
    pos = np.concatenate([[0], cuts, [n]])
    n_blk = len(cuts) + 1
    in_blk = _distinct(np.concatenate([windows.gap[w] * n_blk + blk, tails.gap * n_blk + t_blk]))
    g = in_blk // n_blk
    out = []
    for j in range(len(cuts) + 1):
        ps, ts = p_of[p_at[j] : p_at[j + 1]], t_of[t_at[j] : t_at[j + 1]]
        if len(ps) or len(ts):  # a block with neither gets no time
            out.append(_Block(
                lo + order[pos[j] : pos[j + 1]],
                _Windows(windows.gap[w[ps]], part_a[ps], part_b[ps]),
                _Tails(tails.gap[ts], tails.t[ts], tails.ns[ts])))
    return out, _distinct(g[1:][g[1:] == g[:-1]])


class _Labels:
    """One block's label ids: each distinct label (:func:`_region_label` of an event's
    (region, CompiledFxGraph, name) codes, or :data:`UNTRACED`) gets one id, in the order
    first met (the merge maps every block's labels onto the sorted sources)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.ids: dict[str, int] = {}

    def of(self, region: np.ndarray, fx: np.ndarray, name: np.ndarray) -> np.ndarray:
        """Label id per event, from its code arrays (one label per distinct triple)."""
        r, f, rf = _unique_pairs(region, fx)
        rfi, own, inv = _unique_pairs(rf, name)
        triples = zip(r[rfi].tolist(), f[rfi].tolist(), own.tolist(), strict=True)
        ids = [self.ids.setdefault(_region_label(self.names, *t), len(self.ids))
               for t in triples]
        return np.array(ids, np.int64)[inv] if ids else np.zeros(0, np.int64)

    def untraced(self) -> int:
        return self.ids.setdefault(UNTRACED, len(self.ids))


@dataclass(frozen=True)
class _BlockSums:
    """One block's attributed time, summed over its pieces, on call paths and labels local to
    the block (the last path slot, ``len(path_parent)``, is the untraced path). Gap counts are
    (step, label, gaps) for the gaps only this block has time of, and the distinct
    (gap, label) pairs of the gaps it shares with other blocks."""

    labels: tuple[str, ...]  # per label id
    bad: int  # improperly nested events
    path_parent: np.ndarray  # per local path: its parent local path, -1 root
    path_label: np.ndarray  # per local path: its label id
    levels: np.ndarray  # local paths of nesting level d: [levels[d], levels[d + 1])
    path_self_ns: np.ndarray  # per local path and the untraced slot
    step_path: tuple[np.ndarray, np.ndarray, np.ndarray]  # distinct (step, path slot), ns
    self_counts: tuple[np.ndarray, np.ndarray, np.ndarray]  # (step, label, gaps)
    inclusive_counts: tuple[np.ndarray, np.ndarray, np.ndarray]
    self_shared: tuple[np.ndarray, np.ndarray]  # distinct (gap, label)
    inclusive_shared: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class _Work:
    """What every block needs: the events and their names, the region name tables (per name
    code: whether it names a compiled region / a CompiledFxGraph call; ``None``: the trace
    names neither), the step of each gap and which gaps have time in more than one block."""

    ev: _Events
    names: list[str]
    region_lut: np.ndarray | None
    fx_lut: np.ndarray | None
    gap_step: np.ndarray
    shared: np.ndarray

    def attribute(self, blk: _Block) -> _BlockSums:
        """Nest the block's events near its windows and tails, cut the windows into pieces
        (one innermost event each) and sum the pieces per call path (:meth:`_sums`)."""
        ev, wins, tails = self.ev, blk.windows, blk.tails
        near = _overlapping(ev.start[blk.events], ev.end[blk.events],
                            np.concatenate([wins.a, tails.t]),
                            np.concatenate([wins.b, tails.t + 1]))
        ei = blk.events if near.all() else blk.events[near]
        nest = _nest(ev.start[ei], ev.end[ei], ev.rank[ei])
        name = ev.name[ei[nest.order]]  # per sorted position
        w, inner, ns = _pieces(nest, wins.a, wins.b)
        gap = np.concatenate([wins.gap[w], tails.gap])
        leaf = np.concatenate([inner, _at(nest, tails.t)])  # sorted position, -1 none
        ns = np.concatenate([ns, tails.ns])
        keep = ns > 0
        if not keep.all():
            gap, leaf, ns = gap[keep], leaf[keep], ns[keep]
        # Label the leaves and their ancestors, then intern their call paths.
        nodes = _ancestors(leaf[leaf >= 0], nest.parent)
        keys = (None if self.region_lut is None or self.fx_lut is None
                else _region_keys(name, nest, self.region_lut, self.fx_lut))
        none = np.full(len(nodes), -1, np.int64)
        label = np.full(len(name), -1, np.int64)
        labels = _Labels(self.names)
        label[nodes] = labels.of(keys[0][nodes] if keys else none,
                                 keys[1][nodes] if keys else none, name[nodes])
        path_of, path_parent, path_label, levels = _paths(nodes, nest.parent, nest.depth, label)
        untraced = labels.untraced() if (leaf < 0).any() else -1
        slot = np.append(path_of, len(path_parent))  # leaf -1 → the untraced slot
        return self._sums(tuple(labels.ids), nest.bad, gap, slot[leaf], ns, path_parent,
                          np.append(path_label, untraced), levels)

    def _sums(self, labels: tuple[str, ...], bad: int, gap: np.ndarray, path: np.ndarray,
              ns: np.ndarray, path_parent: np.ndarray, slot_label: np.ndarray,
              levels: np.ndarray) -> _BlockSums:
        """Sum the pieces ``(gap, path slot, ns)`` per path and per (step, path); count the
        gaps per (step, label): the self view counts a gap once per label of its pieces'
        paths, the inclusive view once per label on those paths' chains."""
        n_slots = len(slot_label)
        path_self_ns = np.zeros(n_slots, np.int64)
        np.add.at(path_self_ns, path, ns)
        sp_key, sp_ns = _group_sum(self.gap_step[gap] * n_slots + path, ns)
        gp = _distinct(gap * n_slots + path)  # distinct (gap, path slot)
        gp_gap, gp_path = gp // n_slots, gp % n_slots
        rep, on_chain = _on_chains(*_chain_sources(np.append(path_parent, -1), slot_label),
                                   gp_path)
        self_c, self_s = self._gap_counts(gp_gap, slot_label[gp_path])
        inc_c, inc_s = self._gap_counts(gp_gap[rep], on_chain)
        return _BlockSums(labels, bad, path_parent, slot_label[:-1], levels, path_self_ns,
                          (sp_key // n_slots, sp_key % n_slots, sp_ns), self_c, inc_c,
                          self_s, inc_s)

    def _gap_counts(self, gap: np.ndarray, label: np.ndarray
                    ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                               tuple[np.ndarray, np.ndarray]]:
        """From (gap, label) pairs: (step, label, distinct gaps) over the gaps of this block
        alone, and the distinct (gap, label) pairs of shared gaps."""
        n_lab = int(label.max()) + 1 if len(label) else 1
        gl = _distinct(gap * n_lab + label)
        g = gl // n_lab
        mine = ~self.shared[g]
        key, counts = _step_gap_counts(gl[mine], self.gap_step, n_lab)
        theirs = gl[~mine]
        return ((key // n_lab, key % n_lab, counts), (theirs // n_lab, theirs % n_lab))


# --- the attribution -------------------------------------------------------------------------


@dataclass(frozen=True)
class HostWaitPlan:
    """The attribution cut into blocks (:func:`_blocks`): ``attribute(i)`` nests, attributes
    and sums block ``i``, on any thread or forked process; ``merge`` joins the blocks' sums
    (all of them, in block order) into the result."""

    blocks: list[_Block]
    work: _Work
    step_names: tuple[str, ...]
    step_total: np.ndarray
    has_stacks: bool

    def attribute(self, i: int) -> _BlockSums:
        return self.work.attribute(self.blocks[i])

    def merge(self, done: list[_BlockSums]) -> HostWaitSources:
        return self.merger()(done)

    def merger(self) -> Callable[[list[_BlockSums]], HostWaitSources]:
        """:meth:`merge` without the plan: holding it does not keep the events and the
        blocks alive (the caller frees them before the merge)."""
        return partial(_merge, g_step=self.work.gap_step, step_names=self.step_names,
                       step_total=self.step_total, has_stacks=self.has_stacks)


def plan_host_wait(trace: Trace, links: Links, gaps: GapTable, step_names: tuple[str, ...],
                   threads: int = 1) -> HostWaitPlan:
    """Plan the attribution of every ``host_wait`` / ``sync_wait`` gap to the CPU events open
    on the thread of the launch call that ends it (definitions in the module docstring):
    gather each CPU thread's events (on ``threads`` threads) and cut them into blocks
    (:func:`_block_count`: at most about :data:`MAX_BLOCK_EVENTS` events each, and about
    :data:`BLOCKS_PER_THREAD` per worker on several). The result,
    ``plan.merge([plan.attribute(i) for i in range(len(plan.blocks))])``, does not depend on
    ``threads`` nor on where the blocks ran."""
    rt = trace.runtime
    n_steps = len(step_names)
    has_stacks = trace.meta.category_counts.get("python_function", 0) > 0
    rows = np.flatnonzero((gaps.cls == GapClass.HOST_WAIT) | (gaps.cls == GapClass.SYNC_WAIT))
    step_total = np.zeros(n_steps, np.int64)
    np.add.at(step_total, gaps.step[rows].astype(np.int64), gaps.duration_ns[rows])
    launch = links.launch_row[gaps.activity[rows]]
    # Both classes require a launch call at or after the gap start; keep the guard explicit.
    assert (launch >= 0).all(), "host_wait/sync_wait gap without a launch call"
    gs, ge = gaps.start_ns[rows], gaps.end_ns[rows]
    ls = rt["ts_ns"].to_numpy()[launch]
    split = np.clip(ls, gs, ge)  # end of the waiting window, start of the launch tail
    pid, tid = rt["pid"].to_numpy()[launch], rt["tid"].to_numpy()[launch]
    pairs = [(p, t) for p in _distinct(pid).tolist() for t in _distinct(tid[pid == p]).tolist()]
    thread_of = {pt: k for k, pt in enumerate(pairs)}
    g_thread = _thread_ids(pid, tid, thread_of)
    ev = _events(trace, thread_of, threads)
    names = [str(n) for n in trace.names]

    region_lut, fx_lut = np.zeros(len(names), bool), np.zeros(len(names), bool)
    used = np.zeros(len(names), bool)
    used[ev.name] = True
    for c in np.flatnonzero(used).tolist():
        region_lut[c] = COMPILED_REGION.match(names[c]) is not None
        fx_lut[c] = names[c].startswith(COMPILED_FX_GRAPH_PREFIX)

    def cut(k: int) -> tuple[list[_Block], np.ndarray]:
        """CPU thread ``k``'s blocks, and its gaps with time in more than one of them."""
        gi = np.flatnonzero(g_thread == k)
        win, tail = split[gi] > gs[gi], ge[gi] > split[gi]
        lo, hi = int(ev.offsets[k]), int(ev.offsets[k + 1])
        return _blocks(ev, lo, hi, _block_count(hi - lo, threads),
                       _Windows(gi[win], gs[gi][win], split[gi][win]),
                       _Tails(gi[tail], ls[gi][tail], ge[gi][tail] - split[gi][tail]))

    blocks: list[_Block] = []
    shared = np.zeros(len(rows), bool)  # gaps with time in more than one block
    for got, across in thread_map(cut, range(len(pairs)), threads):
        blocks += got
        shared[across] = True
    regions = bool(region_lut.any() or fx_lut.any())
    work = _Work(ev, names, region_lut if regions else None, fx_lut if regions else None,
                 gaps.step[rows].astype(np.int64), shared)
    return HostWaitPlan(blocks, work, step_names, step_total, has_stacks)


def _merge(done: list[_BlockSums], g_step: np.ndarray, step_names: tuple[str, ...],
           step_total: np.ndarray, has_stacks: bool) -> HostWaitSources:
    """The blocks' sums on one set of call paths and sources (the merge works on paths and
    (step, path) sums, never on pieces)."""
    sources = sorted({label for b in done for label in b.labels})
    rank = {s: i for i, s in enumerate(sources)}
    # Per block: label id -> source id.
    sid_of = [np.array([rank[label] for label in b.labels] or [0], np.int64) for b in done]
    path_parent, path_source, global_of = _global_paths(done, sid_of)
    untraced = rank.get(UNTRACED, -1)
    if untraced >= 0:  # time with no open event: a root path of its own, numbered last
        path_parent = np.append(path_parent, -1)
        path_source = np.append(path_source, untraced)
    n_paths, n_src = len(path_parent), max(len(sources), 1)
    slots = [np.append(g, n_paths - 1 if untraced >= 0 else -1) for g in global_of]

    path_self_ns = np.zeros(n_paths, np.int64)
    for b, g in zip(done, slots, strict=True):
        used = b.path_self_ns > 0
        np.add.at(path_self_ns, g[used], b.path_self_ns[used])
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    sp_key, sp_ns = _group_sum(
        cat([b.step_path[0] * n_paths + g[b.step_path[1]] for b, g in zip(done, slots,
                                                                          strict=True)]),
        cat([b.step_path[2] for b in done]))
    sp_step, sp_path = sp_key // n_paths, sp_key % n_paths
    rep, on_chain = _on_chains(*_chain_sources(path_parent, path_source), sp_path)
    # Per (step, source): self = the path's own source, inclusive = each distinct source on
    # its chain.
    s_keys, s_ns = _group_sum(sp_step * n_src + path_source[sp_path], sp_ns)
    i_keys, i_ns = _group_sum(sp_step[rep] * n_src + on_chain, sp_ns[rep])
    del sp_key, sp_ns, sp_step, sp_path, rep, on_chain  # one row per (step, path): the peak
    all_keys = np.union1d(s_keys, i_keys)

    def gap_counts(own: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                   shared: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Gaps per (step, source), on ``all_keys``: the blocks' own counts plus the distinct
        (gap, source) pairs of shared gaps. Every piece has ns > 0, so the keys with gaps
        are those with ns."""
        keys = cat([s * n_src + sid[lab] for (s, lab, _), sid in zip(own, sid_of, strict=True)])
        counts = cat([c for _, _, c in own])
        pairs = _distinct(cat([gap * n_src + sid[lab]
                               for (gap, lab), sid in zip(shared, sid_of, strict=True)]))
        k2, c2 = _step_gap_counts(pairs, g_step, n_src)
        keys, counts = _group_sum(np.concatenate([keys, k2]), np.concatenate([counts, c2]))
        return spread(keys, counts)

    def spread(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.zeros(len(all_keys), np.int64)
        out[np.searchsorted(all_keys, keys)] = values
        return out

    return HostWaitSources(
        step_names=step_names,
        sources=tuple(sources),
        step_total_ns=step_total,
        step=all_keys // n_src,
        source=all_keys % n_src,
        self_ns=spread(s_keys, s_ns),
        inclusive_ns=spread(i_keys, i_ns),
        self_gaps=gap_counts([b.self_counts for b in done], [b.self_shared for b in done]),
        inclusive_gaps=gap_counts([b.inclusive_counts for b in done],
                                  [b.inclusive_shared for b in done]),
        path_parent=path_parent,
        path_source=path_source,
        path_self_ns=path_self_ns,
        gaps=len(g_step),
        improperly_nested=sum(b.bad for b in done),
        has_stacks=has_stacks,
    )


def _global_paths(done: list[_BlockSums], sid_of: list[np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Intern the blocks' call paths as one set, level by level: the distinct (parent path,
    source) pairs of a level, sorted, are numbered after the levels above (so a parent's id is
    below its children's). ``sid_of``: per block, the source id of each of its labels.
    Returns (parent path and source per path; per block, the global path of each local
    one)."""
    global_of = [np.full(len(b.path_parent), -1, np.int64) for b in done]
    parents, sources = [], []
    n = 0
    for d in range(max((len(b.levels) - 1 for b in done), default=0)):
        spans = [(int(b.levels[d]), int(b.levels[d + 1])) if d + 1 < len(b.levels) else (0, 0)
                 for b in done]
        par = [np.where(b.path_parent[lo:hi] >= 0, g[np.maximum(b.path_parent[lo:hi], 0)], -1)
               for b, g, (lo, hi) in zip(done, global_of, spans, strict=True)]
        src = [sid[b.path_label[lo:hi]] for b, sid, (lo, hi) in zip(done, sid_of, spans,
                                                                  strict=True)]
        u_par, u_src, inv = _unique_pairs(np.concatenate(par), np.concatenate(src))
        at = 0
        for g, (lo, hi) in zip(global_of, spans, strict=True):
            g[lo:hi] = n + inv[at : at + hi - lo]
            at += hi - lo
        parents.append(u_par)
        sources.append(u_src)
        n += len(u_par)
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    return cat(parents), cat(sources), global_of


def _paths(nodes: np.ndarray, parent: np.ndarray, depth: np.ndarray, label: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern the call paths of ``nodes`` (closed under parents) level by level.

    Returns (path id per event, -1 for others; parent path and label per path; level offsets:
    the paths of level ``d`` are ``[levels[d], levels[d + 1])``). Paths are numbered root
    level first, so a parent's id is below its children's.
    """
    path_of = np.full(len(label), -1, np.int64)
    parents, labels, levels = [], [], [0]
    for level in _levels(depth[nodes]):
        at = nodes[level]
        up = parent[at]
        par = np.where(up >= 0, path_of[np.maximum(up, 0)], -1)
        u_par, u_lab, inv = _unique_pairs(par, label[at])
        path_of[at] = levels[-1] + inv
        parents.append(u_par)
        labels.append(u_lab)
        levels.append(levels[-1] + len(u_par))
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    return path_of, cat(parents), cat(labels), np.array(levels, np.int64)


#: The profiler's own ``step()`` frame (``torch/profiler/profiler.py(884): step``), called
#: between steps by the loop that drives the profiler: measurement overhead.
PROFILER_STEP_FRAME = re.compile(r"(^|[/\\])torch[/\\]profiler[/\\]profiler\.py\(\d+\): step$")


def profiler_step_ns(h: HostWaitSources) -> int:
    """Inclusive host wait (ns, whole trace) in the profiler's ``step()`` frames: the sum of
    the inclusive rows whose label matches :data:`PROFILER_STEP_FRAME` (one frame per line
    number; they do not nest)."""
    return sum(r.host_wait_ns for r in h.table().inclusive
               if PROFILER_STEP_FRAME.search(r.source))


def nesting_health(sources: HostWaitSources) -> tuple[HealthWarning, ...]:
    """``improperly_nested_cpu_events`` when some CPU events ended after their parent."""
    n = sources.improperly_nested
    if not n:
        return ()
    return (HealthWarning(
        "improperly_nested_cpu_events",
        "CPU events that end after the event enclosing them on their thread (clamped to it "
        "for host-wait sources)", n),)


# --- comparison against a baseline ---------------------------------------------------------

#: Sources listed each way (grew / shrank).
TOP_CHANGES = 5
#: Sources named in the explanation phrase (the largest informative ones).
PHRASE_SOURCES = 2
#: Share of the trace's host wait a call path must hold to be named (informative sources).
MIN_PHRASE_SHARE = 0.1


def informative_sources(h: HostWaitSources, min_share: float = MIN_PHRASE_SHARE
                        ) -> tuple[tuple[str, int], ...]:
    """The deepest call paths that still hold a large share of the trace's host wait, summed
    by source: ``(source, ns)``, largest first (then by name).

    A call path (flame-graph node, whole trace) is **informative** when its inclusive time is
    at least ``min_share`` of the host wait and no path directly below it reaches that share.
    Wrappers that every bit of time passes through (the step function, harness frames, a
    compiled region holding one call) are therefore skipped in favour of the deepest frame
    where the time splits; informative paths never nest, so their times are disjoint and
    their shares add up to at most 100 %.
    """
    total = h.total_ns
    if total <= 0 or len(h.path_parent) == 0:
        return ()
    inc = h.path_inclusive_ns()
    big = inc >= min_share * total
    has_big_child = np.zeros(len(inc), bool)
    child = h.path_parent >= 0
    has_big_child[h.path_parent[child & big]] = True
    pick = np.flatnonzero(big & ~has_big_child)
    ns = np.zeros(len(h.sources), np.int64)
    np.add.at(ns, h.path_source[pick], inc[pick])
    ids = np.flatnonzero(ns)
    order = np.lexsort((ids, -ns[ids]))  # source ids are in name order
    return tuple((h.sources[i], int(ns[i])) for i in ids[order].tolist())


@dataclass(frozen=True)
class SourceChange:
    """Mean host wait per step of one source in the baseline and in the mode (ns)."""

    source: str
    baseline_ns: float
    mode_ns: float

    @property
    def delta_ns(self) -> float:
        return self.mode_ns - self.baseline_ns


@dataclass(frozen=True)
class HostWaitShift:
    """How a mode's host wait sources differ from the baseline's (means per step over the
    steps with GPU work; self view, so the changes of all sources sum to the total change)."""

    mode: str
    baseline: str
    baseline_ns: float  # mean host_wait + sync_wait per step
    mode_ns: float
    grew: tuple[SourceChange, ...]  # largest increase first, at most TOP_CHANGES
    shrank: tuple[SourceChange, ...]  # largest decrease first, at most TOP_CHANGES
    top: tuple[SourceChange, ...]  # the mode's largest informative sources (inclusive)

    def phrase(self) -> str:
        """One clause for a verdict explanation, in ms/step (means per step, said so), e.g.
        "means per step: host + sync wait 1.77 → 1.72
        ms/step; 1.07 ms/step in `Torch-Compiled Region: 0/0` (baseline 0.00), …". A source
        "stays" when its inclusive time moved by at most 10 % of its value in the mode. Values
        under 0.1 ms keep 2 significant digits (0.0042), others 2 decimals."""
        out = (f"means per step: host + sync wait {_ms(self.baseline_ns)} → "
               f"{_ms(self.mode_ns)} ms/step")
        parts = []
        for c in self.top:
            verb = "stays in" if abs(c.delta_ns) <= 0.1 * c.mode_ns else "in"
            parts.append(f"{_ms(c.mode_ns)} ms/step {verb} `{display_name(c.source)}` "
                         f"(baseline {_ms(c.baseline_ns)})")
        return out + ("; " + ", ".join(parts) if parts else "")


def _ms(ns: float) -> str:
    """ns as ms: 2 decimals, or 2 significant digits under 0.1 ms (so 4.2 µs is not 0.00)."""
    v = ns / 1e6
    return f"{v:.2g}" if 0 < abs(v) < 0.1 else f"{v:.2f}"


def _gpu_steps(step_period_ns: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.asarray(step_period_ns, np.int64) > 0)


def _baseline_value(base: dict[str, float], source: str) -> float:
    """The baseline's value of ``source``; when the baseline has no such label, that of the
    label's last part (``Torch-Compiled Region: 2/0 › f.py(36): opt`` is the same code as
    ``f.py(36): opt`` in an eager baseline); 0 when it has neither."""
    if source in base:
        return base[source]
    return base.get(source.rsplit(IN_REGION, 1)[-1], 0.0)


def host_wait_shift(mode: str, sources: HostWaitSources, step_period_ns: np.ndarray,
                    baseline: str, base_sources: HostWaitSources,
                    base_step_period_ns: np.ndarray) -> HostWaitShift:
    """Compare a mode's host-wait sources with the baseline's (``step_period_ns``: the period
    of every step, to pick the steps with GPU work over which means are taken)."""
    m_steps, b_steps = _gpu_steps(step_period_ns), _gpu_steps(base_step_period_ns)
    m_self, b_self = sources.per_step_self_ns(m_steps), base_sources.per_step_self_ns(b_steps)
    changes = [SourceChange(s, b_self.get(s, 0.0), m_self.get(s, 0.0))
               for s in sorted(set(m_self) | set(b_self))]
    grew = sorted((c for c in changes if c.delta_ns > 0), key=lambda c: (-c.delta_ns, c.source))
    shrank = sorted((c for c in changes if c.delta_ns < 0), key=lambda c: (c.delta_ns, c.source))
    m_total = float(sources.step_total_ns[m_steps].mean()) if len(m_steps) else 0.0
    b_total = float(base_sources.step_total_ns[b_steps].mean()) if len(b_steps) else 0.0
    m_inc = sources.per_step_inclusive_ns(m_steps)
    b_inc = base_sources.per_step_inclusive_ns(b_steps)
    named = [s for s, _ in informative_sources(sources) if s in m_inc]
    below = sorted(named, key=lambda s: (-m_inc[s], s))
    return HostWaitShift(
        mode=mode, baseline=baseline, baseline_ns=b_total, mode_ns=m_total,
        grew=tuple(grew[:TOP_CHANGES]), shrank=tuple(shrank[:TOP_CHANGES]),
        top=tuple(SourceChange(s, _baseline_value(b_inc, s), m_inc[s])
                  for s in below[:PHRASE_SOURCES]),
    )
