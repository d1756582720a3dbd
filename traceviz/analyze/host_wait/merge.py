"""The merge of the blocks' sums into one :class:`HostWaitSources`: the blocks' call paths
interned as one set, and their (step, path) sums, inclusive (step, label) sums and gap counts
mapped onto the sorted sources (the merge works on call paths and labels, never on pieces)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from traceviz.analyze.host_wait.block_attribution import _BlockSums
from traceviz.analyze.host_wait.grouping import _group_sum, _step_gap_counts
from traceviz.analyze.host_wait.labels import UNTRACED
from traceviz.analyze.host_wait.result import HostWaitSources
from traceviz.analyze.host_wait.trees import _intern
from traceviz.int_sets import distinct, union


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
    # Per (step, source): self = the path's own source; inclusive from the blocks' sums.
    s_keys, s_ns = _group_sum(sp_key // n_paths * n_src + path_source[sp_key % n_paths], sp_ns)
    del sp_key, sp_ns  # one row per (step, path): the peak
    i_keys, i_ns = _group_sum(
        cat([step * n_src + sid[lab] for (step, lab, _), sid in zip(
            (b.inclusive_ns for b in done), sid_of, strict=True)]),
        cat([b.inclusive_ns[2] for b in done]))
    all_keys = union(s_keys, i_keys)

    def gap_counts(own: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                   shared: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Gaps per (step, source), on ``all_keys``: the blocks' own counts plus the distinct
        (gap, source) pairs of shared gaps. Every piece has ns > 0, so the keys with gaps
        are those with ns."""
        keys = cat([s * n_src + sid[lab] for (s, lab, _), sid in zip(own, sid_of, strict=True)])
        counts = cat([c for _, _, c in own])
        pairs = distinct(cat([gap * n_src + sid[lab]
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
    """Intern the blocks' call paths as one set (:func:`~.trees._intern` over the forest of
    all blocks' paths, labelled by source): numbered by level, within a level by (parent path,
    source), so a parent's id is below its children's. ``sid_of``: per block, the source id
    of each of its labels. Returns (parent path and source per path; per block, the global
    path of each local one)."""
    sizes = [len(b.path_parent) for b in done]
    base = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    parent = cat([np.where(b.path_parent >= 0, b.path_parent + off, -1)
                  for b, off in zip(done, base[:-1].tolist(), strict=True)])
    source = cat([sid[b.path_label] for b, sid in zip(done, sid_of, strict=True)])
    depth = cat([np.repeat(np.arange(len(b.levels) - 1), np.diff(b.levels)) for b in done])
    path, path_parent, path_source, _ = _intern(parent, source, depth)
    return path_parent, path_source, [path[lo:hi] for lo, hi in pairwise(base.tolist())]
