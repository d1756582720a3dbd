"""Kernel families and Inductor name parsing (docs/metrics.md, "Kernel families"), rule by rule.

The rule table is ordered and the first match wins; matching is case-insensitive; Inductor names
``triton_{kind}_fused_{ops}_{n}`` give a kind and the fused ops, with ``__softmax`` → ``_softmax``
and known multi-word aten ops regrouped; old names (``triton__0d1d2d``) give ``unknown``.
"""

from __future__ import annotations

import pytest

from traceviz.analyze.trace.families import family_of_name, parse_triton_name


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("triton_poi_fused_add_0", "triton"),
        ("triton_red_fused_gemm_like_nccl_1", "triton"),  # the first rule wins over the others
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "collective"),
        ("flash_fwd_kernel_gemm", "attention"),  # attention before gemm
        ("sm90_xmma_gemm_f16f16_f16f32", "gemm"),
        ("AMPERE_SGEMM_128x64_NN", "gemm"),  # case-insensitive
        ("void at::native::reduce_kernel<512, 1>", "aten-reduce"),  # reduce before aten-other
        ("void at::native::vectorized_elementwise_kernel<4>", "aten-elementwise"),
        ("void at::native::index_kernel", "aten-other"),
        ("my_handwritten_kernel", "other"),
        ("", "other"),
    ],
)
def test_the_first_matching_family_rule_wins(name: str, family: str) -> None:
    assert family_of_name(name) == family


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("triton_poi_fused_add_mul_0", ("pointwise", ("add", "mul"))),
        ("triton_red_fused__softmax_1", ("reduction", ("_softmax",))),
        ("triton_per_fused_native_layer_norm_relu_12", ("persistent_reduction",
                                                        ("native_layer_norm", "relu"))),
        ("triton_tem_fused_mm_3", ("template", ("mm",))),
        ("triton_for_fused_0", ("foreach", ())),
        ("triton_spl_fused_cumsum_4", ("split_scan", ("cumsum",))),
        ("triton_poi_fused_layer_norm_5", ("pointwise", ("layer_norm",))),  # a two-token op
        ("triton_poi_fused_max_pool2d_with_indices_relu_6",  # the longest op: four tokens
         ("pointwise", ("max_pool2d_with_indices", "relu"))),
        ("triton_poi_fused__native_layer_norm_add_7",  # a leading "_" is kept on a known op
         ("pointwise", ("_native_layer_norm", "add"))),
        ("triton_poi_fused_add__to_copy_8", ("pointwise", ("add", "_to_copy"))),
        ("triton_poi_fused_Xlayer_norm_9", ("pointwise", ("Xlayer", "norm"))),  # only "_" strips
        ("triton_poi_add_mul_9", ("pointwise", ("add", "mul"))),  # "fused_" is optional
        ("triton_xyz_fused_add_0", ("xyz", ("add",))),  # an unlisted kind passes through
        ("triton__0d1d2d", ("unknown", ())),  # old Inductor names
        ("triton_poi_fused_add", ("unknown", ())),  # no trailing number
    ],
)
def test_inductor_names_give_the_kind_and_the_fused_ops(
        name: str, parsed: tuple[str, tuple[str, ...]]) -> None:
    assert parse_triton_name(name) == parsed


@pytest.mark.parametrize("name", ["Triton_poi_fused_add_0", "my_triton_poi_fused_add_0", "k"])
def test_a_name_not_starting_with_triton_underscore_is_not_an_inductor_kernel(name: str) -> None:
    assert parse_triton_name(name) is None
