"""Interval unions per group (``traceviz/analyze/trace/intervals.py``): the busy time and the
holes that ``gpu_busy`` and the idle gaps are made of (docs/metrics.md, "Idle gaps"), edge by edge.

Touching intervals (``ts == previous max end``) merge without a hole; a hole opens only inside a
group; an interval nested in an earlier one adds nothing; spans too wide for the shifted running
max take the per-group loop and give the same answer.
"""

from __future__ import annotations

import numpy as np

from traceviz.analyze.trace.intervals import group_union, union_length


def _arr(*v: int) -> np.ndarray:
    return np.array(v, np.int64)


def test_holes_busy_time_and_extents_per_group_are_exact() -> None:
    # group 0: [0,10] [10,20] touch, [5,8] nested, [25,30] after a 5 ns hole
    # group 3: [100,110] alone; group 7: [0,4] [6,9] (a 2 ns hole) [7,12] overlapping
    group = _arr(0, 0, 0, 0, 3, 7, 7, 7)
    ts = _arr(0, 5, 10, 25, 100, 0, 6, 7)
    end = _arr(10, 8, 20, 30, 110, 4, 9, 12)
    u = group_union(group, ts, end)
    assert u.group_first_row.tolist() == [0, 4, 5]
    assert u.group_last_row.tolist() == [3, 4, 7]
    assert u.first_start_ns.tolist() == [0, 100, 0]
    assert u.last_end_ns.tolist() == [30, 110, 12]
    assert u.busy_ns.tolist() == [25, 10, 10]
    assert u.gap_rows.tolist() == [3, 6]
    assert u.gap_start_ns.tolist() == [20, 4]
    assert u.gap_group.tolist() == [0, 2]


def test_an_interval_touching_the_running_end_leaves_no_hole_and_one_ns_later_does() -> None:
    u = group_union(_arr(0, 0, 0), _arr(0, 10, 21), _arr(10, 20, 22))
    assert (u.gap_rows.tolist(), u.gap_start_ns.tolist()) == ([2], [20])
    assert u.busy_ns.tolist() == [21]


def test_a_later_groups_start_is_never_a_hole() -> None:
    u = group_union(_arr(0, 1), _arr(0, 50), _arr(10, 60))
    assert u.gap_rows.tolist() == [] and u.busy_ns.tolist() == [10, 10]
    assert u.gap_start_ns.dtype == np.int64 and u.gap_group.dtype == np.int64


def test_no_intervals_give_empty_int_columns() -> None:
    u = group_union(_arr(), _arr(), _arr())
    for col in (u.group_first_row, u.group_last_row, u.first_start_ns, u.last_end_ns,
                u.busy_ns, u.gap_rows, u.gap_start_ns, u.gap_group):
        assert col.tolist() == [] and col.dtype == np.int64
    assert union_length(_arr(), _arr()) == 0


def test_spans_too_wide_for_the_shifted_running_max_give_the_same_union() -> None:
    big = 1 << 62  # span x groups beyond 2**63: the shifted running max would overflow
    group = _arr(0, 0, 1, 1)
    ts = _arr(0, 5, 0, big - 10)
    end = _arr(3, 9, big - 20, big)
    u = group_union(group, ts, end)
    assert u.last_end_ns.tolist() == [9, big]
    assert u.busy_ns.tolist() == [7, big - 10]
    assert (u.gap_rows.tolist(), u.gap_start_ns.tolist()) == ([1, 3], [3, big - 20])


def test_wide_spans_on_the_shifted_path_stay_exact_to_the_ns() -> None:
    big = (1 << 59) + 1  # span x groups below 2**62, far beyond float64's 2**53
    group = _arr(0, 0, 1, 1)
    ts = _arr(0, 7, 1, 4)
    end = _arr(big, big + 2, 3, 5)
    u = group_union(group, ts, end)
    assert u.last_end_ns.tolist() == [big + 2, 5]
    assert (u.gap_rows.tolist(), u.gap_start_ns.tolist()) == ([3], [3])
    assert u.busy_ns.tolist() == [big + 2, 3]


def test_a_zero_length_first_interval_of_a_group_ends_where_it_starts() -> None:
    # group 1 opens with [100, 100]: the hole before [105, 110] starts at 100, whatever the
    # longest interval of group 0
    u = group_union(_arr(0, 1, 1), _arr(0, 100, 105), _arr(10, 100, 110))
    assert (u.gap_rows.tolist(), u.gap_start_ns.tolist(), u.gap_group.tolist()) == (
        [2], [100], [1])
    assert u.busy_ns.tolist() == [10, 5]


def test_union_length_takes_intervals_in_any_order() -> None:
    assert union_length(_arr(30, 0, 5), _arr(40, 10, 12)) == 22
    assert isinstance(union_length(_arr(1), _arr(3)), int)


def test_on_the_per_group_path_a_later_groups_holes_are_its_own() -> None:
    big = 1 << 62  # group 0 ends far beyond group 1: the running max restarts per group
    u = group_union(_arr(0, 1, 1), _arr(0, 0, 5), _arr(big, 3, 9))
    assert (u.gap_rows.tolist(), u.gap_start_ns.tolist(), u.gap_group.tolist()) == (
        [2], [3], [1])
    assert u.busy_ns.tolist() == [big, 7]
