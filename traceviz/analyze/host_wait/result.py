"""The result of host-wait attribution: the sparse (step × source) table of integer ns with
its call paths (:class:`HostWaitSources`), the sorted tables read off it, and its health
warning (CPU events that were not properly nested)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from traceviz.analyze.model import HealthWarning


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


def nesting_health(sources: HostWaitSources) -> tuple[HealthWarning, ...]:
    """``improperly_nested_cpu_events`` when some CPU events ended after their parent."""
    n = sources.improperly_nested
    if not n:
        return ()
    return (HealthWarning(
        "improperly_nested_cpu_events",
        "CPU events that end after the event enclosing them on their thread (clamped to it "
        "for host-wait sources)", n),)
