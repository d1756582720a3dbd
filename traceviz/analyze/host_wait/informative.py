"""The sources a reader is pointed at, read off a :class:`HostWaitSources`: the informative
call paths (the deepest ones still holding a large share of the host wait) and the time in
the profiler's own ``step()`` frames (measurement overhead); ns."""

from __future__ import annotations

import re

import numpy as np

from traceviz.analyze.host_wait.result import HostWaitSources

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


#: The profiler's own ``step()`` frame (``torch/profiler/profiler.py(884): step``), called
#: between steps by the loop that drives the profiler: measurement overhead.
PROFILER_STEP_FRAME = re.compile(r"(^|[/\\])torch[/\\]profiler[/\\]profiler\.py\(\d+\): step$")


def profiler_step_ns(h: HostWaitSources) -> int:
    """Inclusive host wait (ns, whole trace) in the profiler's ``step()`` frames: the sum of
    the inclusive rows whose label matches :data:`PROFILER_STEP_FRAME` (one frame per line
    number; they do not nest)."""
    return sum(r.host_wait_ns for r in h.table().inclusive
               if PROFILER_STEP_FRAME.search(r.source))
