"""The profiling modes ``traceviz profile`` knows, and parsing of ``--modes``. No torch here."""

from __future__ import annotations

#: Every mode, in the order runs and reports list them.
ALL_MODES: tuple[str, ...] = (
    "eager",
    "compile",
    "reduce-overhead",
    "max-autotune-no-cudagraphs",
    "max-autotune",
    "cudagraph",
    "triton",
)

#: One line per mode, for ``--help`` and the manifest.
MODE_HELP: dict[str, str] = {
    "eager": "the workload's step function as written",
    "compile": 'torch.compile, default Inductor mode',
    "reduce-overhead": 'torch.compile(mode="reduce-overhead"): Inductor + CUDA-graph trees',
    "max-autotune-no-cudagraphs": 'torch.compile(mode="max-autotune-no-cudagraphs")',
    "max-autotune": 'torch.compile(mode="max-autotune"): autotuned kernels + CUDA graphs',
    "cudagraph": "manual torch.cuda.CUDAGraph capture: static inputs, copy-in, replay()",
    "triton": "the workload's hand-written Triton implementation (triton_step)",
}

#: Modes that need a CUDA device.
CUDA_ONLY_MODES = frozenset({"reduce-overhead", "max-autotune", "cudagraph", "triton"})

#: Modes that call torch.compile.
COMPILE_MODES = frozenset(
    {"compile", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"}
)

#: Compile modes whose compiled function replays CUDA-graph trees.
CUDAGRAPH_TREE_MODES = frozenset({"reduce-overhead", "max-autotune"})


def first_call_phase(mode: str) -> str:
    """The phase name of a mode's first step call, where its one-off work happens: ``compiling``
    (torch.compile), ``capturing`` (the manual CUDA graph) or ``first call``."""
    if mode in COMPILE_MODES:
        return "compiling"
    return "capturing" if mode == "cudagraph" else "first call"


class ModeListError(ValueError):
    """``--modes`` named a mode that does not exist."""


def parse_modes(text: str) -> list[str]:
    """Parse ``--modes``: ``all`` or a comma-separated list, returned in :data:`ALL_MODES` order.

    Raises :class:`ModeListError` for an unknown or empty list.
    """
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ModeListError("--modes is empty; use 'all' or e.g. 'eager,compile'")
    if "all" in names:
        return list(ALL_MODES)
    unknown = [n for n in names if n not in ALL_MODES]
    if unknown:
        raise ModeListError(
            f"unknown mode(s) {', '.join(unknown)}; known: all, {', '.join(ALL_MODES)}"
        )
    return [m for m in ALL_MODES if m in names]


def skip_reason(mode: str, *, cuda: bool, triton: bool, has_triton_step: bool) -> str | None:
    """Why ``mode`` cannot run in this environment, or None when it can."""
    if mode in CUDA_ONLY_MODES and not cuda:
        return f"{mode} needs a CUDA device; none is available here"
    if mode == "triton":
        if not has_triton_step:
            return "the workload has no hand-written Triton implementation (triton_step)"
        if not triton:
            return "the triton package is not importable here"
    return None
