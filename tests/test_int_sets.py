"""``traceviz.int_sets`` gives ``np.unique`` / ``np.union1d``'s results exactly, for every
integer dtype, ties, empties and 2-D input; it refuses floats (NaN would not collapse)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from traceviz.int_sets import distinct, distinct_with, run_starts, stable_order, union

#: Derandomized and without a deadline: CI runs the suite on 2 busy cores.
EXAMPLES = settings(max_examples=200, derandomize=True, deadline=None, database=None)
INT_DTYPES = st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_])


def _arrays(dims: int = 1) -> st.SearchStrategy[np.ndarray]:
    return INT_DTYPES.flatmap(lambda dt: hnp.arrays(
        dt, hnp.array_shapes(min_dims=dims, max_dims=dims, min_side=0, max_side=60)))


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@EXAMPLES
@given(_arrays())
def test_distinct_is_np_unique(a: np.ndarray) -> None:
    _same(distinct(a), np.unique(a))


@EXAMPLES
@given(_arrays())
def test_first_positions_and_inverse_are_np_uniques(a: np.ndarray) -> None:
    uniq, first, inv = distinct_with(a, index=True, inverse=True)
    want_uniq, want_first, want_inv = np.unique(a, return_index=True, return_inverse=True)
    _same(uniq, want_uniq)
    _same(first, want_first)
    _same(inv, want_inv.reshape(-1))
    _same(distinct_with(a, index=True)[1], want_first)
    _same(distinct_with(a, inverse=True)[1], want_inv.reshape(-1))


@EXAMPLES
@given(_arrays(2))
def test_two_dimensional_input_is_flattened_as_np_unique_does(a: np.ndarray) -> None:
    _same(distinct(a), np.unique(a))


@EXAMPLES
@given(_arrays(), _arrays())
def test_union_is_np_union1d(a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        b = b.astype(a.dtype)
    _same(union(a, b), np.union1d(a, b))


@EXAMPLES
@given(_arrays(), st.sampled_from([1, 1 << 14, 1 << 40]))
def test_stable_order_is_numpys_stable_argsort_for_small_and_wide_values(
        a: np.ndarray, scale: int) -> None:
    wide = a.astype(np.int64) * scale - scale // 2  # past 16 bits for the larger scales
    for values in (a, wide):
        _same(stable_order(values), np.argsort(values, kind="stable"))


@EXAMPLES
@given(_arrays())
def test_run_starts_of_sorted_keys_are_np_uniques_first_positions(a: np.ndarray) -> None:
    k = np.sort(a)
    np.testing.assert_array_equal(run_starts(k), np.unique(k, return_index=True)[1])


def test_first_position_is_the_first_occurrence_among_ties() -> None:
    a = np.array([5, 3, 5, 3, 3, 9, 5], np.int64)
    uniq, first, inv = distinct_with(a, index=True, inverse=True)
    assert uniq.tolist() == [3, 5, 9]
    assert first.tolist() == [1, 0, 5]
    assert inv.tolist() == [1, 0, 1, 0, 0, 2, 1]


@pytest.mark.parametrize("values", [np.array([1.0, np.nan, np.nan]), np.array(["a", "b"])])
def test_non_integer_values_are_refused(values: np.ndarray) -> None:
    with pytest.raises(TypeError, match="integer or bool values expected"):
        distinct(values)
