"""Kernel families by name, and what Inductor fused into a Triton kernel.

The rules live in one ordered table (:data:`FAMILY_RULES`): the first matching rule wins.
Copies and fills recorded as ``gpu_memcpy`` / ``gpu_memset`` activities are families
``memcpy`` / ``memset`` by category. A kernel that matches no rule but was launched through
the driver API (``cuLaunchKernel*``, how Triton launches) is counted as ``triton``.
"""

from __future__ import annotations

import re

FAMILIES = (
    "triton",
    "gemm",
    "attention",
    "collective",
    "aten-elementwise",
    "aten-reduce",
    "aten-other",
    "memcpy",
    "memset",
    "other",
)

#: (family, pattern) in priority order; patterns are searched case-insensitively.
FAMILY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern, re.IGNORECASE))
    for family, pattern in (
        ("triton", r"^triton_"),
        ("collective", r"nccl|rccl|msccl"),
        ("attention", r"flash|fmha|sdpa|attention|_attn|mha_"),
        (
            "gemm",
            r"gemm|gemv|cutlass|cublas|xmma|nvjet|^sm\d+_|(ampere|volta|turing|hopper|maxwell)_"
            r"|kernel2\b|splitkreduce|cudnn|wgmma",
        ),
        (
            "aten-reduce",
            r"reduce_kernel|softmax|layer_norm|batch_norm|group_norm|rms_norm|norm_kernel"
            r"|gammabeta|welford|cub::device(reduce|scan|radixsort|segmented)|_pool|pool_",
        ),
        (
            "aten-elementwise",
            r"elementwise|functor|catarraybatchedcopy|copy_kernel|fused_dropout|multi_tensor_apply",
        ),
        ("aten-other", r"at::|c10::|cub::|thrust::"),
    )
)


def family_of_name(name: str) -> str:
    """Family of a kernel name by :data:`FAMILY_RULES` (``other`` when none matches)."""
    for family, pattern in FAMILY_RULES:
        if pattern.search(name):
            return family
    return "other"


_TRITON = re.compile(r"^triton_(?P<kind>[a-z]+)_(?:fused_)?(?P<ops>.*?)_?(?P<n>\d+)$")
_TRITON_KINDS = {
    "poi": "pointwise",
    "red": "reduction",
    "per": "persistent_reduction",
    "tem": "template",
    "for": "foreach",
    "spl": "split_scan",
    "unk": "unknown",
}
#: aten op names that contain underscores, so a kernel name's tokens can be regrouped.
_MULTI_TOKEN_OPS = frozenset(
    {
        "native_layer_norm",
        "native_batch_norm",
        "native_group_norm",
        "layer_norm",
        "batch_norm",
        "group_norm",
        "rms_norm",
        "log_softmax",
        "clamp_min",
        "clamp_max",
        "index_put",
        "index_select",
        "index_add",
        "scatter_add",
        "masked_fill",
        "native_dropout",
        "convolution_backward",
        "threshold_backward",
        "sigmoid_backward",
        "tanh_backward",
        "gelu_backward",
        "silu_backward",
        "embedding_dense_backward",
        "slice_scatter",
        "select_scatter",
        "constant_pad_nd",
        "full_like",
        "zeros_like",
        "ones_like",
        "new_zeros",
        "new_ones",
        "new_empty",
        "max_pool2d_with_indices",
        "avg_pool2d",
        "scaled_dot_product",
        "to_copy",
        "unsafe_view",
        "bitwise_and",
        "bitwise_or",
        "bitwise_not",
        "logical_and",
        "logical_or",
        "logical_not",
        "where_self",
        "addcmul",
        "addcdiv",
        "lerp",
        "_foreach_add",
        "_foreach_mul",
        "nll_loss",
        "nll_loss_forward",
        "nll_loss_backward",
        "cross_entropy",
        "var_mean",
        "amax",
    }
)


def parse_triton_name(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``triton_{kind}_fused_{ops}_{n}`` → (kind, fused ops); ``None`` if not an Inductor name.

    Op names are recovered greedily: ``__softmax`` is ``_softmax``; known multi-word aten ops
    (``native_layer_norm``) are regrouped; other tokens are single ops. Old Inductor names
    (``triton__0d1d2d``) give kind ``unknown`` and no ops.
    """
    if not name.startswith("triton_"):
        return None
    m = _TRITON.match(name)
    if m is None:
        return "unknown", ()
    kind = _TRITON_KINDS.get(m.group("kind"), m.group("kind"))
    tokens: list[str] = []
    pending_underscore = False
    for tok in m.group("ops").split("_"):
        if tok == "":
            pending_underscore = True
            continue
        tokens.append("_" + tok if pending_underscore else tok)
        pending_underscore = False
    ops: list[str] = []
    i = 0
    while i < len(tokens):
        for j in range(min(len(tokens), i + 5), i + 1, -1):
            joined = "_".join(tokens[i:j])
            if joined in _MULTI_TOKEN_OPS or joined.lstrip("_") in _MULTI_TOKEN_OPS:
                ops.append(joined)
                i = j
                break
        else:
            ops.append(tokens[i])
            i += 1
    return kind, tuple(ops)
