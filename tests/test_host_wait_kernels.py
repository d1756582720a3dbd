"""The vectorised building blocks of host-wait attribution against their plain definitions:
the nesting order is ``lexsort((rank, -end, start))``, boundaries close before they open at
equal times, a parent is the last earlier event one level up, and the key-indexed (dense)
and sorting paths of the grouping helpers give the same answer."""

from __future__ import annotations

import numpy as np
import pytest

from traceviz.analyze.host_wait import (
    DENSE_SLACK,
    _boundaries,
    _dense,
    _group_sum,
    _levels,
    _nesting_order,
    _parents,
    _unique_pairs,
)


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


@pytest.mark.parametrize("seed", range(20))
def test_boundaries_close_before_open_at_equal_times_inner_close_first(seed: int) -> None:
    start, end, rank = random_events(seed, 25)
    o = np.lexsort((rank, -end, start))
    s, e = start[o], end[o]
    t, is_start, pos, at_open = _boundaries(s, e)
    # The definition: sort (time, close before open, closes inner-first = later position
    # first, opens outer-first = earlier position first).
    want = sorted([(int(e[i]), 0, -i) for i in range(len(s))]
                  + [(int(s[i]), 1, i) for i in range(len(s))])
    assert t.tolist() == [x[0] for x in want]
    assert is_start.tolist() == [x[1] == 1 for x in want]
    assert pos.tolist() == [abs(x[2]) for x in want]
    assert np.array_equal(at_open, np.flatnonzero(is_start))
    assert np.array_equal(pos[at_open], np.arange(len(s)))


def test_boundaries_of_no_events_are_empty() -> None:
    z = np.zeros(0, np.int64)
    assert all(len(x) == 0 for x in _boundaries(z, z))


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


def test_levels_list_indices_per_depth_ascending_including_wide_depths() -> None:
    d = np.array([2, 0, 1, 0, 2, 1, 40_000, 0], np.int64)  # 40 000: past int16
    levels = _levels(d)
    assert len(levels) == 40_001
    assert [lv.tolist() for lv in levels[:3]] == [[1, 3, 7], [2, 5], [0, 4]]
    assert levels[40_000].tolist() == [6]
    assert sum(len(lv) for lv in levels) == len(d)
    assert _levels(np.zeros(0, np.int64)) == []


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
