"""Long names shortened for display: head and tail kept, distinct names stay distinct."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from traceviz.report.shorten import ELLIPSIS, middle_ellipsis, shorten_names

#: Six real eager kernel names (tiny_transformer / gemm_mlp traces) that a 60-character prefix
#: shows as one and the same row.
FUNCTORS = ("CUDAFunctor_add<float>", "CUDAFunctorOnSelf_add<float>", "MulFunctor<float>",
            "GeluCUDAKernelImpl", "AUnaryFunctor<float, float, float, MulFunctor<float> >",
            "BUnaryFunctor<float, float, float, MulFunctor<float> >")
SIX = [f"void at::native::vectorized_elementwise_kernel<4, at::native::{f}, "
       "std::array<char*, 3ul> >(int, at::native::" + f + ", std::array<char*, 3ul>)"
       for f in FUNCTORS]


def test_a_short_name_is_left_whole_and_a_long_one_keeps_head_and_tail():
    assert middle_ellipsis("triton_poi_fused_add_0", 40) == "triton_poi_fused_add_0"
    s = middle_ellipsis("a" * 30 + "MIDDLE" + "z" * 30, 21)
    assert s == "a" * 10 + ELLIPSIS + "z" * 10 and len(s) == 21


def test_a_name_exactly_the_width_is_not_shortened():
    name = "x" * 40
    assert middle_ellipsis(name, 40) == name and middle_ellipsis(name + "y", 40) != name


def test_six_kernels_that_a_prefix_cut_merges_stay_six_distinct_rows():
    assert len({n[:60] for n in SIX}) == 1  # what a prefix cut showed
    shown = shorten_names(SIX, 60)
    assert len(set(shown)) == 6
    assert all(len(s) <= 60 for s in shown)
    for name, s in zip(SIX, shown, strict=True):
        assert s.startswith("void at::nativ") and name.endswith(s.rsplit(ELLIPSIS, 1)[-1])


def test_names_differing_only_in_the_middle_show_where_they_differ():
    a = "k_" + "p" * 50 + "ALPHA" + "s" * 50
    b = "k_" + "p" * 50 + "BRAVO" + "s" * 50
    sa, sb = shorten_names([a, b], 30)
    assert sa != sb and "ALPHA"[0] in sa and "BRAVO"[0] in sb
    assert len(sa) <= 30 and len(sb) <= 30


def test_equal_names_stay_equal():
    assert shorten_names(["n" * 100, "n" * 100], 20) == [middle_ellipsis("n" * 100, 20)] * 2


@pytest.mark.parametrize("width", [12, 20, 47])
def test_differences_in_the_last_characters_survive(width: int):
    names = [f"{'q' * 120}_{i:03d}" for i in range(30)]
    shown = shorten_names(names, width)
    assert len(set(shown)) == 30 and all(len(s) <= width for s in shown)


@given(st.lists(st.text(alphabet="ab<>:_ ", min_size=0, max_size=80), min_size=1, max_size=12),
       st.integers(min_value=1, max_value=60))
def test_distinct_names_always_stay_distinct(names: list[str], width: int):
    shown = shorten_names(names, width)
    assert len(set(shown)) == len(set(names))
    for name, s in zip(names, shown, strict=True):
        assert s == name or len(s) <= max(width, 12)
