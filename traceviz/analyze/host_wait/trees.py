"""Vectorised kernels on forests given by parent pointers (``parent[v]``: the parent of node
``v``, -1 for a root), by pointer jumping: each round doubles the span of every pointer, so
a forest of ``n`` nodes and depth ``D`` costs O(n log D) numpy work and O(log D) rounds,
whatever the depth (no Python loop over levels or nodes)."""

from __future__ import annotations

import numpy as np

from traceviz.analyze.host_wait.grouping import _unique_pairs
from traceviz.int_sets import distinct_with


def _chain_min(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Per node: the minimum of ``values`` over the node and all its ancestors."""
    out = values.copy()
    up = parent.copy()
    live = np.flatnonzero(up >= 0)
    while len(live):
        hop = up[live]
        out[live] = np.minimum(out[live], out[hop])
        up[live] = up[hop]
        live = live[up[live] >= 0]
    return out


def _nearest_marked(parent: np.ndarray, marked: np.ndarray) -> np.ndarray:
    """Per node: its nearest strict ancestor with ``marked`` set, -1 if none. Invariant:
    every node strictly between a node and its pointer is unmarked."""
    near = parent.copy()
    live = np.flatnonzero(near >= 0)
    live = live[~marked[near[live]]]
    while len(live):
        near[live] = near[near[live]]
        live = live[near[live] >= 0]
        live = live[~marked[near[live]]]
    return near


def _intern(parent: np.ndarray, label: np.ndarray, depth: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern the call paths of a forest: the label sequences from a root down to each node.

    Returns (path number per node; parent path and label per path; level offsets: the paths
    of depth ``d`` are ``[levels[d], levels[d + 1])``). Paths are numbered by depth, then by
    their label sequence compared root first, so a parent's number is below its children's
    and, within a level, paths are sorted by (parent number, label).
    """
    n = len(label)
    if n == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, np.zeros(1, np.int64)
    uniq, first, inv = distinct_with(_path_ids(parent, label, depth), index=True,
                                     inverse=True)
    level = depth[first]
    by_level = np.argsort(level, kind="stable")  # ids already sorted: (depth, id) order
    number = np.empty(len(uniq), np.int64)
    number[by_level] = np.arange(len(uniq))
    path = number[inv]
    rep = first[by_level]
    up = parent[rep]
    path_parent = np.where(up >= 0, path[np.maximum(up, 0)], -1)
    levels = np.zeros(int(level.max()) + 2, np.int64)
    levels[1:] = np.cumsum(np.bincount(level))
    return path, path_parent, label[rep].astype(np.int64), levels


def _path_ids(parent: np.ndarray, label: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per node an id of its label sequence from its root (``depth``: its strict ancestors):
    equal ids iff equal sequences; among nodes of one depth, ids follow the sequences' order,
    root first. By doubling: after a round, a node's id names the last ``span`` labels of its
    sequence (all of it when shorter), paired from two halves of ``span / 2``."""
    ids = distinct_with(label, inverse=True)[1].astype(np.int64)
    up = parent.astype(np.int64, copy=True)  # the span-th ancestor, -1 past the root
    span, longest = 1, int(depth.max()) + 1
    while span < longest:
        has = up >= 0
        upper = np.where(has, ids[np.maximum(up, 0)], -1)
        ids = _unique_pairs(upper, ids)[2]
        up = np.where(has, up[np.maximum(up, 0)], -1)
        span *= 2
    return ids
