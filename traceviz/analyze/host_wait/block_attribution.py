"""One block's attribution (:meth:`_Work.attribute`, run on any thread or forked process):
nest the events near its windows and tails, cut the windows into pieces with one innermost
event each, label the events, intern their call paths and sum the pieces per call path and
per (step, path), the inclusive view per (step, label) (:mod:`.inclusive`), with the gap
counts (:class:`_BlockSums`). No step walks a chain: time and memory are
O((events + pieces) log n) at any nesting depth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.blocks import _Block
from traceviz.analyze.host_wait.events import _Events
from traceviz.analyze.host_wait.grouping import _group_sum, _step_gap_counts
from traceviz.analyze.host_wait.inclusive import _inclusive, _Pieces, _top_events
from traceviz.analyze.host_wait.labels import _Labels
from traceviz.analyze.host_wait.nesting import _at, _nest, _Nesting, _pieces
from traceviz.analyze.host_wait.trees import _intern, _nearest_marked
from traceviz.int_sets import distinct, union


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
    name code) of its nearest such strict ancestor; -1 where there is none. ``None`` when the
    thread has no such events (eager code: every position would be -1). ``*_lut``: per name
    code, whether it names a compiled region / a CompiledFxGraph call."""
    is_region = region_lut[name]
    is_fx = fx_lut[name]
    if not (is_region.any() or is_fx.any()):
        return None
    region = _nearest_marked(nest.parent, is_region)
    fx = _nearest_marked(nest.parent, is_fx)
    return (np.where(region >= 0, name[np.maximum(region, 0)], -1),
            np.where(fx >= 0, name[np.maximum(fx, 0)], -1))


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
    inclusive_ns: tuple[np.ndarray, np.ndarray, np.ndarray]  # distinct (step, label), ns
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
        (one elementary interval each), label the events open on some piece and sum the
        pieces per call path (:meth:`_sums`)."""
        ev, wins, tails = self.ev, blk.windows, blk.tails
        near = _overlapping(ev.start[blk.events], ev.end[blk.events],
                            np.concatenate([wins.a, tails.t]),
                            np.concatenate([wins.b, tails.t + 1]))
        ei = blk.events if near.all() else blk.events[near]
        nest = _nest(ev.start[ei], ev.end[ei], ev.rank[ei])
        name = ev.name[ei[nest.order]]  # per sorted position
        w, k, ns = _pieces(nest, wins.a, wins.b)
        gap = np.concatenate([wins.gap[w], tails.gap])
        k = np.concatenate([k, _at(nest, tails.t)])
        ns = np.concatenate([ns, tails.ns])
        keep = ns > 0
        if not keep.all():
            gap, k, ns = gap[keep], k[keep], ns[keep]
        # The events open on some piece: its leaf and the leaf's ancestors (laminar nesting).
        before = np.zeros(len(nest.times) + 1, np.int64)
        before[1:] = np.cumsum(np.bincount(k, minlength=len(nest.times)))
        nodes = np.flatnonzero(before[nest.closes] > before[nest.opens])
        keys = (None if self.region_lut is None or self.fx_lut is None
                else _region_keys(name, nest, self.region_lut, self.fx_lut))
        none = np.full(len(nodes), -1, np.int64)
        label = np.full(len(name), -1, np.int64)
        labels = _Labels(self.names)
        label[nodes] = labels.of(keys[0][nodes] if keys else none,
                                 keys[1][nodes] if keys else none, name[nodes])
        path_of, path_parent, path_label, levels = _paths(nodes, nest.parent, nest.depth, label)
        leaf = nest.inner[k]  # sorted position, -1 none
        untraced = labels.untraced() if (leaf < 0).any() else -1
        slot = np.append(path_of, len(path_parent))  # leaf -1 → the untraced slot
        top, followed = _top_events(nodes, label, nest.opens, nest.closes)
        o = np.lexsort((self.gap_step[gap], k))
        pieces = _Pieces(k[o], gap[o], self.gap_step[gap[o]], ns[o])
        inclusive = _inclusive(pieces, top, followed, label[top], nest.opens, nest.closes,
                               ~self.shared, len(labels.ids))
        return self._sums(tuple(labels.ids), nest.bad, gap, slot[leaf], ns, path_parent,
                          np.append(path_label, untraced), levels, inclusive)

    def _sums(self, labels: tuple[str, ...], bad: int, gap: np.ndarray, path: np.ndarray,
              ns: np.ndarray, path_parent: np.ndarray, slot_label: np.ndarray,
              levels: np.ndarray, inclusive: tuple[tuple[np.ndarray, np.ndarray],
                                                   tuple[np.ndarray, np.ndarray], np.ndarray]
              ) -> _BlockSums:
        """Sum the pieces ``(gap, path slot, ns)`` per path and per (step, path); count the
        gaps per (step, label): the self view counts a gap once per label of its pieces'
        paths. The inclusive view (:func:`_inclusive`, over the events) gets the untraced
        slot's pieces, whose chain is the slot alone."""
        n_slots, n_lab = len(slot_label), len(labels)
        path_self_ns = np.zeros(n_slots, np.int64)
        np.add.at(path_self_ns, path, ns)
        sp_key, sp_ns = _group_sum(self.gap_step[gap] * n_slots + path, ns)
        gl = distinct(gap * n_lab + slot_label[path])  # distinct (gap, label)
        self_c, self_s = self._gap_counts(gl, n_lab)
        (i_key, i_ns), (c_key, c_n), i_shared = inclusive
        untraced = slot_label[-1]
        if untraced >= 0:
            u = path == n_slots - 1
            u_key, u_ns = _group_sum(self.gap_step[gap[u]] * n_lab + untraced, ns[u])
            i_key, i_ns = _group_sum(np.concatenate([i_key, u_key]),
                                     np.concatenate([i_ns, u_ns]))
            u_gl = gl[gl % n_lab == untraced]
            u_c, u_s = self._gap_counts(u_gl, n_lab)
            c_key, c_n = _group_sum(np.concatenate([c_key, u_c[0] * n_lab + u_c[1]]),
                                    np.concatenate([c_n, u_c[2]]))
            i_shared = union(i_shared, u_s[0] * n_lab + u_s[1])
        i_keep, c_keep = i_ns > 0, c_n > 0
        i_key, i_ns, c_key, c_n = i_key[i_keep], i_ns[i_keep], c_key[c_keep], c_n[c_keep]
        return _BlockSums(labels, bad, path_parent, slot_label[:-1], levels, path_self_ns,
                          (sp_key // n_slots, sp_key % n_slots, sp_ns),
                          (i_key // n_lab, i_key % n_lab, i_ns), self_c,
                          (c_key // n_lab, c_key % n_lab, c_n), self_s,
                          (i_shared // n_lab, i_shared % n_lab))

    def _gap_counts(self, gl: np.ndarray, n_lab: int
                    ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                               tuple[np.ndarray, np.ndarray]]:
        """From distinct ``gap * n_lab + label`` keys: (step, label, distinct gaps) over the
        gaps of this block alone, and the distinct (gap, label) pairs of shared gaps."""
        mine = ~self.shared[gl // n_lab]
        key, counts = _step_gap_counts(gl[mine], self.gap_step, n_lab)
        theirs = gl[~mine]
        return ((key // n_lab, key % n_lab, counts), (theirs // n_lab, theirs % n_lab))


def _paths(nodes: np.ndarray, parent: np.ndarray, depth: np.ndarray, label: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern the call paths of ``nodes`` (closed under parents, sorted): (path id per event,
    -1 for others; parent path and label per path; level offsets: the paths of level ``d``
    are ``[levels[d], levels[d + 1])``), a parent's id below its children's
    (:func:`~.trees._intern`)."""
    up = parent[nodes]
    local_up = np.where(up >= 0, np.searchsorted(nodes, np.maximum(up, 0)), -1)
    path, path_parent, path_label, levels = _intern(local_up, label[nodes], depth[nodes])
    path_of = np.full(len(label), -1, np.int64)
    path_of[nodes] = path
    return path_of, path_parent, path_label, levels
