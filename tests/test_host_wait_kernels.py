"""The vectorised building blocks of host-wait attribution against their plain definitions:
the nesting order is ``lexsort((rank, -end, start))``, a parent is the last earlier event one
level up, depth and the elementary timeline follow a boundary sweep, and the key-indexed (dense)
and sorting paths of the grouping helpers give the same answer."""

from __future__ import annotations

import numpy as np
import pytest

from traceviz.analyze.host_wait.grouping import DENSE_SLACK, _dense, _group_sum, _unique_pairs
from traceviz.analyze.host_wait.nesting import _nest, _nesting_order, _parents


def random_events(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts and ends from a tiny range, so equal starts, equal ends and equal (start, end)
    pairs are frequent; ranks repeat too."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 12, n).astype(np.int64)
    end = start + rng.integers(1, 6, n)
    return start, end, rng.integers(0, 4, n).astype(np.int8)


@pytest.mark.parametrize("seed", range(20))
def test_nesting_order_is_the_lexsort_by_start_then_longer_then_rank_then_input(seed: int
                                                                              ) -> None:
    start, end, rank = random_events(seed, int(np.random.default_rng(seed).integers(0, 60)))
    assert np.array_equal(_nesting_order(start, end, rank), np.lexsort((rank, -end, start)))


def test_nesting_order_of_no_events_is_empty() -> None:
    z = np.zeros(0, np.int64)
    assert len(_nesting_order(z, z, np.zeros(0, np.int8))) == 0


@pytest.mark.parametrize("seed", range(10))
def test_parent_is_the_last_earlier_position_one_level_up(seed: int) -> None:
    rng = np.random.default_rng(seed)
    depth = [0]
    for _ in range(80):  # a valid depth sequence: each step goes at most one level deeper
        depth.append(int(rng.integers(0, depth[-1] + 2)))
    d = np.array(depth, np.int64)
    want = [max((j for j in range(i) if d[j] == d[i] - 1), default=-1) if d[i] > 0 else -1
            for i in range(len(d))]
    assert _parents(d).tolist() == want


def test_dense_range_edge_is_two_per_key_plus_slack() -> None:
    n = 10
    limit = 2 * n + DENSE_SLACK  # keys must stay below it
    assert _dense(np.array([0] * (n - 1) + [limit - 1], np.int64))
    assert not _dense(np.array([0] * (n - 1) + [limit], np.int64))
    assert not _dense(np.array([-1] + [0] * (n - 1), np.int64))  # negative keys: sort
    assert not _dense(np.zeros(0, np.int64))


@pytest.mark.parametrize("spread", [5, 10**12])  # small range: table; huge range: sort
def test_unique_pairs_and_group_sum_match_numpy_unique_on_both_paths(spread: int) -> None:
    rng = np.random.default_rng(spread % 97)
    a = rng.integers(-1, 4, 500)
    b = rng.choice(np.array([-1, 0, 3, spread], np.int64), 500)
    ua, ub, inv = _unique_pairs(a, b)
    want = np.unique(np.stack([a, b], 1), axis=0)
    assert np.array_equal(np.stack([ua, ub], 1), want)
    assert np.array_equal(ua[inv], a) and np.array_equal(ub[inv], b)
    assert _dense((a + 1) * (int(b.max()) + 2) + (b + 1)) == (spread == 5)

    key = (a + 1) * (spread + 1) + (b + 1)
    values = rng.integers(1, 2**40, 500)  # big values: the sums must stay exact int64
    keys, sums = _group_sum(key, values)
    u, inverse = np.unique(key, return_inverse=True)
    assert np.array_equal(keys, u)
    exact = [sum(int(v) for v, i in zip(values, inverse, strict=True) if i == j)
             for j in range(len(u))]
    assert sums.tolist() == exact
    assert _dense(key) == (spread == 5)


def sweep(s: list[int], e: list[int], parent: list[int]) -> tuple[list[int], list[int], list[int]]:
    """The definition, one boundary at a time: boundaries sorted by time, closes before opens,
    closes inner (later position) first, opens outer (earlier position) first. Depth = events
    open after the open boundary, minus one; per distinct time, the innermost after its last
    boundary: the event that opened, or the parent of the event that closed."""
    bounds = sorted([(e[i], 0, -i) for i in range(len(s))] + [(s[i], 1, i) for i in range(len(s))])
    depth, times, inner = [0] * len(s), [], []
    open_now = 0
    for k, (t, is_open, i) in enumerate(bounds):
        open_now += 1 if is_open else -1
        if is_open:
            depth[i] = open_now - 1
        if k + 1 == len(bounds) or bounds[k + 1][0] != t:
            times.append(t)
            inner.append(i if is_open else parent[-i])
    return depth, times, inner


def nested_draw(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Properly nested events with shared starts, shared ends, touching siblings and
    identical spans, in random input order."""
    rng = np.random.default_rng(seed)
    out: list[tuple[int, int]] = []

    def children(lo: int, hi: int, depth: int) -> None:
        t = lo
        while t < hi and depth > 0:
            t += int(rng.integers(0, 3))  # 0: touching the previous sibling or the parent
            end = min(hi, t + int(rng.integers(1, max(2, hi - lo))))
            if end <= t:
                break
            for _ in range(int(rng.integers(1, 3))):  # sometimes the same span twice
                out.append((t, end))
            children(t, end, depth - 1)
            t = end

    children(0, 60, 5)
    order = rng.permutation(len(out))
    start = np.array([out[i][0] for i in order], np.int64)
    end = np.array([out[i][1] for i in order], np.int64)
    return start, end, rng.integers(0, 4, len(out)).astype(np.int8)


@pytest.mark.parametrize("seed", range(30))
def test_depth_and_timeline_follow_the_boundary_sweep(seed: int) -> None:
    start, end, rank = nested_draw(seed)
    nest = _nest(start, end, rank)
    assert nest.bad == 0
    s, e = start[nest.order].tolist(), end[nest.order].tolist()
    depth, times, inner = sweep(s, e, nest.parent.tolist())
    assert nest.depth.tolist() == depth
    assert nest.times.tolist() == [np.iinfo(np.int64).min, *times]
    assert nest.inner.tolist() == [-1, *inner]
    assert len(set(s)) < len(s) and len(set(e)) < len(e)  # shared edges were exercised
