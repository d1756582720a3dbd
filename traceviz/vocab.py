"""The Kineto trace vocabulary, named once.

Every category, API name and marker traceviz recognises lives here, so the loader, the
analyzer and the docs agree. Units: names ending in ``_ns`` are integer nanoseconds,
``_us`` microseconds. Kineto writes ``ts``/``dur`` in microseconds; traceviz converts them to
integer nanoseconds at load time (see :mod:`traceviz.trace.decode`).
"""

from __future__ import annotations

import re
from enum import IntEnum

NS_PER_US = 1_000


class Category(IntEnum):
    """Event categories traceviz keeps (lower-cased ``cat``); everything else is ``OTHER``."""

    OTHER = 0
    KERNEL = 1
    GPU_MEMCPY = 2
    GPU_MEMSET = 3
    CUDA_RUNTIME = 4
    CUDA_DRIVER = 5
    CPU_OP = 6
    USER_ANNOTATION = 7
    GPU_USER_ANNOTATION = 8
    PYTHON_FUNCTION = 9
    CUDA_SYNC = 10
    TRACE_SPAN = 11
    # Flow events (``ph`` ``s`` / ``f``, whatever their ``cat``: ``ac2g``, ``fwdbwd``, legacy
    # ``async_cpu_to_gpu``): not categories of ``X`` events; the ``cat`` of the ``flows`` table.
    FLOW_START = 12
    FLOW_END = 13


#: Category of the overlay events ``traceviz export`` appends to a trace (gap, step and graph
#: replay slices in a ``traceviz`` process, and that process's name metadata). They describe
#: traceviz's own analysis, not the profiled program: the decoder drops every event of this
#: category before counting or keeping anything, so an exported file analyzes like its original.
OVERLAY_CATEGORY = "traceviz_overlay"

CATEGORY_BY_NAME: dict[str, Category] = {
    "kernel": Category.KERNEL,
    "gpu_memcpy": Category.GPU_MEMCPY,
    "memcpy": Category.GPU_MEMCPY,  # torch 1.x capitalised "Memcpy", lower-cased on load
    "gpu_memset": Category.GPU_MEMSET,
    "memset": Category.GPU_MEMSET,
    "cuda_runtime": Category.CUDA_RUNTIME,
    "runtime": Category.CUDA_RUNTIME,  # torch 1.x "Runtime"
    "cuda_driver": Category.CUDA_DRIVER,
    "cpu_op": Category.CPU_OP,
    "operator": Category.CPU_OP,  # torch 1.x "Operator"
    "user_annotation": Category.USER_ANNOTATION,
    "gpu_user_annotation": Category.GPU_USER_ANNOTATION,
    "python_function": Category.PYTHON_FUNCTION,
    "cuda_sync": Category.CUDA_SYNC,
    "trace": Category.TRACE_SPAN,
}

#: GPU activities: ``ph == "X"`` events of these categories.
GPU_ACTIVITY_CATEGORIES = frozenset({Category.KERNEL, Category.GPU_MEMCPY, Category.GPU_MEMSET})
#: Host API calls that may launch GPU work (linked by ``args.correlation``).
RUNTIME_CATEGORIES = frozenset({Category.CUDA_RUNTIME, Category.CUDA_DRIVER})
#: CPU-side events kept for step windows, torch.compile structure and host-wait sources
#: (``python_function``: only in traces recorded ``with_stack=True``).
CPU_CATEGORIES = frozenset(
    {Category.CPU_OP, Category.USER_ANNOTATION, Category.PYTHON_FUNCTION}
)


class LaunchKind(IntEnum):
    """What a runtime/driver call is, by name."""

    OTHER = 0
    KERNEL = 1
    GRAPH = 2
    MEMCPY = 3
    MEMSET = 4


# Exact names; ROCm ``hip*`` names map the same way. Runtime names may carry a ``_vNNNNN``
# suffix (``cudaLaunchKernel_v7000``) or ``_ptsz`` / ``_ptds``; they are stripped before lookup.
_KERNEL_LAUNCH = (
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchKernelEx",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuLaunchCooperativeKernel",
    "cuLaunchCooperativeKernelMultiDevice",
    "cuLaunchGrid",
    "cuLaunchGridAsync",
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipHccModuleLaunchKernel",
    "hipLaunchCooperativeKernel",
)
_GRAPH_LAUNCH = ("cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch")
#: Kernel launches that start one kernel on each of several devices.
MULTI_DEVICE_LAUNCH = frozenset({
    "cudaLaunchCooperativeKernelMultiDevice", "cuLaunchCooperativeKernelMultiDevice",
})
_MEMCPY_PREFIXES = ("cudaMemcpy", "cuMemcpy", "hipMemcpy")
_MEMSET_PREFIXES = ("cudaMemset", "cuMemset", "hipMemset")

#: Blocking host calls: the CPU waits here for the GPU.
SYNC_CALLS = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cudaMemcpy",  # synchronous copy
        "cuMemcpy",
        "cuMemcpyDtoH",
        "cuMemcpyHtoD",
        "cuMemcpyDtoD",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
    }
)

_SUFFIX = re.compile(r"(_v\d+|_ptsz|_ptds)+$")


def base_api_name(name: str) -> str:
    """Strip version / per-thread suffixes (``cudaLaunchKernel_v7000`` → ``cudaLaunchKernel``)."""
    return _SUFFIX.sub("", name)


def launch_kind(name: str) -> LaunchKind:
    """Classify a runtime/driver API call by its name."""
    base = base_api_name(name)
    if base in _KERNEL_LAUNCH:
        return LaunchKind.KERNEL
    if base in _GRAPH_LAUNCH:
        return LaunchKind.GRAPH
    if base.startswith(_MEMCPY_PREFIXES):
        return LaunchKind.MEMCPY
    if base.startswith(_MEMSET_PREFIXES):
        return LaunchKind.MEMSET
    return LaunchKind.OTHER


def launches_one_activity(name: str) -> bool:
    """Whether a call of this API starts exactly one GPU activity: a kernel launch (not a
    :data:`MULTI_DEVICE_LAUNCH`), a memcpy or a memset (not a ``*Batch*`` call, which copies
    a batch). A graph launch starts every node of its graph; other calls start none."""
    base = base_api_name(name)
    kind = launch_kind(base)
    if kind == LaunchKind.KERNEL:
        return base not in MULTI_DEVICE_LAUNCH
    return kind in (LaunchKind.MEMCPY, LaunchKind.MEMSET) and "Batch" not in base


def is_sync_call(name: str) -> bool:
    """True for the blocking synchronisation calls listed in :data:`SYNC_CALLS`."""
    return base_api_name(name) in SYNC_CALLS


#: CPU step marker written by ``torch.profiler.profile.step()``.
STEP_MARKER = re.compile(r"^ProfilerStep#(\d+)$")
#: Name of the single synthetic step of a trace with no step markers.
WHOLE_TRACE_STEP = "trace"

# torch.compile markers (cpu_op or user_annotation, matched by name).
COMPILED_REGION = re.compile(r"^Torch-Compiled Region: (!?\d+)/(\d+)")
CACHE_LOOKUP = "TorchDynamo Cache Lookup"
COMPILED_FX_GRAPH_PREFIX = "## Call CompiledFxGraph"
IN_WINDOW_COMPILE_SUFFIX = "(dynamo_timed)"


class GapClass(IntEnum):
    """Why the GPU was idle; see ``docs/metrics.md``. The first four are checked in this order;
    ``QUEUED`` is the part of a gap after the ending activity's launch call returned, split off
    afterwards (:mod:`traceviz.analyze.trace.queued`)."""

    GRAPH_INTERNAL = 0
    SYNC_WAIT = 1
    HOST_WAIT = 2
    OTHER_IDLE = 3
    QUEUED = 4


GAP_CLASS_NAMES: tuple[str, ...] = (
    "graph_internal", "sync_wait", "host_wait", "other_idle", "queued",
)

# --- distributed runs (collectives) ---------------------------------------------------------
#: GPU kernels of a collective library (NCCL / RCCL): ``ncclDevKernel_*``, ``ncclKernel_*``,
#: and ROCm's ``rccl*`` / ``hip``-prefixed NCCL names.
COLLECTIVE_KERNEL = re.compile(r"^(nccl(Dev)?Kernel_|rccl|hipnccl|nccl_)", re.IGNORECASE)
#: The collective in an NCCL kernel name (``ncclDevKernel_AllReduce_Sum_f32_RING_LL`` →
#: ``AllReduce``); used when the trace carries no ``Collective name`` argument.
COLLECTIVE_IN_KERNEL_NAME = re.compile(r"^(?:nccl(?:Dev)?Kernel|rccl\w*?)_([A-Za-z]+)")
#: CPU-side collectives of the gloo backend: ``user_annotation`` spans named ``gloo:<op>`` on
#: the gloo worker thread (their start is the rank's arrival, as an NCCL kernel's start is).
CPU_COLLECTIVE_PREFIX = "gloo:"
#: Bytes per element of the ``dtype`` names ``record_param_comms`` writes.
DTYPE_BYTES: dict[str, int] = {
    "Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2,
    "Char": 1, "Byte": 1, "Bool": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1,
}
#: Rank in a trace file name, when the trace has no ``distributedInfo.rank``.
RANK_IN_FILE_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
#: A step timing whose spread ``(p90 − p10) / median`` is above this is marked noisy (the
#: runner's :func:`traceviz.collect.timing.summarize`; the reports' legend explains it).
NOISY_SPREAD = 0.10
