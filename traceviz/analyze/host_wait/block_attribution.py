"""One block's attribution (:meth:`_Work.attribute`, run on any thread or forked process):
nest the events near its windows and tails, cut the windows into pieces with one innermost
event each, label the events, intern their call paths and sum the pieces per call path and
per (step, path), with the gap counts (:class:`_BlockSums`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.blocks import _Block
from traceviz.analyze.host_wait.events import _Events
from traceviz.analyze.host_wait.grouping import (
    _chain_sources,
    _distinct,
    _group_sum,
    _on_chains,
    _step_gap_counts,
    _unique_pairs,
)
from traceviz.analyze.host_wait.labels import _Labels
from traceviz.analyze.host_wait.nesting import _at, _levels, _nest, _Nesting, _pieces


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
