"""Short, factual notes on where HTA's definitions differ from traceviz's, phrased with the
numbers of the trace at hand (HTA's own figures, and traceviz's totals when given).

HTA times are µs; traceviz totals are integer ns (shown here as µs, ``ns / 1000``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from traceviz.vocab import NS_PER_US, LaunchKind, launch_kind

if TYPE_CHECKING:
    from traceviz.holistic.result import HtaResult


class Totals(Protocol):
    """The part of traceviz's ``Analysis.totals`` the notes use (counts; times in ns)."""

    activities: int
    unlinked: int
    launches: int
    kernel_launches: int
    graph_launches: int
    gpu_window_ns: int
    gpu_busy_all_ns: int


#: Threshold of HTA's "kernel wait" idle class (``consecutive_kernel_delay`` default): HTA
#: documents it as ns but compares it with its µs timestamps.
KERNEL_WAIT_THRESHOLD = 30
#: Why rows of a non-GPU category carry a stream in HTA's dataframe.
_WHY_STREAM = {
    "cuda_sync": " (CUDA synchronization events)",
    "cpu_op": " (CPU ops with an args.stream, as Triton launch ops have)",
}
#: Who issues the launch APIs HTA's launch statistics skip (driver API: not matched by name).
_WHO_LAUNCHES = {
    "cuLaunchKernel": " (Triton kernels, and cuBLAS kernels in eager mode)",
    "cuLaunchKernelEx": " (NCCL collectives, among others)",
    "cudaGraphLaunch": " (CUDA-graph replays)",
}
#: Lower-cased categories of GPU operations (current and torch 1.x spellings).
GPU_OP_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"})


def definition_notes(result: HtaResult, totals: Totals | None = None) -> tuple[str, ...]:
    """The notes for one :class:`HtaResult`, most consequential first."""
    notes = [
        *_launch_notes(result, totals),
        _rounding_note(result),
        *_filter_notes(result, totals),
        *_temporal_notes(result, totals),
        *_idle_notes(result),
        *_overlap_notes(result),
    ]
    if result.rank_source.startswith("none"):
        notes.append("The trace has no distributedInfo; HTA indexes it as rank 0.")
    return tuple(n for n in notes if n)


def _us(ns: int) -> str:
    return f"{ns / NS_PER_US:,.3f}"


def _launch_notes(result: HtaResult, totals: Totals | None) -> list[str]:
    if result.launch_stats is None:
        return []
    missed = {
        api: c["calls"] - c["in_launch_stats"]
        for api, c in result.launch_calls.items()
        if c["calls"] > c["in_launch_stats"]
    }
    covered = result.launch_stats["launches"]
    seen = sum(c["calls"] for c in result.launch_calls.values())
    out = []
    if missed:
        skipped = ", ".join(f"{api} ×{n:,}{_WHO_LAUNCHES.get(api, '')}"
                            for api, n in missed.items())
        matched = ", ".join(a for a, c in result.launch_calls.items() if c["in_launch_stats"])
        out.append(
            f"HTA's kernel launch statistics cover {covered:,} of the {seen:,} launch call(s) "
            f"in its dataframe ({matched or 'none'}); they skip {skipped}, so those launches "
            "get no launch delay or launch-call duration there — eager-mode library launches "
            "as well as the ones torch.compile and CUDA graphs change."
        )
    if totals is not None:
        out.append(
            f"traceviz counts {totals.launches:,} launch call(s) ({totals.kernel_launches:,} "
            f"kernel, {totals.graph_launches:,} graph launches); HTA's launch statistics "
            f"cover {covered:,}."
        )
    graph_calls = sum(
        c["calls"] for api, c in result.launch_calls.items() if launch_kind(api) is LaunchKind.GRAPH
    )
    if graph_calls:
        out.append(
            f"HTA's critical path has no CPU→GPU launch edge for the {graph_calls:,} "
            "cudaGraphLaunch calls (its launch-event list omits graph launches); graph "
            "kernels join the path through stream order only."
        )
    return out


def _rounding_note(result: HtaResult) -> str:
    if result.ns_rounding_disabled:
        return (
            "HTA ran with its ns rounding disabled (HTA_DISABLE_NS_ROUNDING): its µs figures "
            "keep the trace's fractional µs, like traceviz's integer ns."
        )
    ops = sum(result.gpu_ops.values())
    return (
        "This HTA rounds every event's start up and end down to whole µs, so its busy "
        f"times can be short by up to 2 µs per GPU op ({2 * ops:,} µs over {ops:,} ops)."
    )


def _filter_notes(result: HtaResult, totals: Totals | None) -> list[str]:
    out = [
        "HTA drops the last ProfilerStep by default; traceviz runs it with "
        "include_last_profiler_step=True. With two or more ProfilerSteps HTA still keeps only "
        "GPU ops whose launch call is in the trace and starts before the last step ends."
    ]
    kept = sum(result.gpu_ops.values())
    if totals is not None and "load" not in result.errors:
        if totals.activities > kept:
            out.append(
                f"HTA analysed {kept:,} GPU ops; traceviz counts {totals.activities:,}, "
                f"{totals.unlinked:,} of them with no launch call in the trace: HTA left out "
                f"{totals.activities - kept:,}."
            )
        else:
            out.append(f"HTA and traceviz both analysed all {kept:,} GPU ops.")
    return out


def _temporal_notes(result: HtaResult, totals: Totals | None) -> list[str]:
    tb = result.temporal_breakdown
    if tb is None:
        return []
    text = (
        "HTA's temporal breakdown measures kernel_time from the first GPU op's start to the "
        "last one's end over all streams, and idle as kernel_time minus the union of busy "
        "time: over the same events, the same definitions as traceviz's GPU window and "
        "window − busy"
    )
    if totals is None:
        out = [text + "."]
    else:
        idle_ns = totals.gpu_window_ns - totals.gpu_busy_all_ns
        out = [
            f"{text} (traceviz: window {_us(totals.gpu_window_ns)} µs, idle {_us(idle_ns)} µs; "
            f"HTA: {tb['kernel_time_us']:,.3f} µs, {tb['idle_time_us']:,.3f} µs)."
        ]
    extra = {c: n for c, n in result.temporal_events.items() if c.lower() not in GPU_OP_CATS}
    if extra:
        listed = ", ".join(f"{c} ×{n:,}{_WHY_STREAM.get(c.lower(), '')}" for c, n in extra.items())
        out.append(
            "HTA's temporal breakdown spans every event that has a stream, not only GPU ops: "
            f"here also {listed}, which can stretch its kernel_time and change its idle time."
        )
    return out


def _idle_notes(result: HtaResult) -> list[str]:
    if not result.idle_time_breakdown:
        return []
    per_stream = sum(r["idle_time_us"] for r in result.idle_time_breakdown)
    streams = len({r["stream"] for r in result.idle_time_breakdown})
    text = (
        "HTA's idle time breakdown is per stream (gaps between consecutive ops on one "
        f"stream, {streams} stream(s) here, {per_stream:,.2f} µs in all), so it also counts "
        "time when another stream was busy; its kernel-wait class is a gap under "
        f"{KERNEL_WAIT_THRESHOLD} µs (documented as ns, applied to µs timestamps) and "
        "host wait means the launch call started after the previous op ended."
    )
    return [text]


def _overlap_notes(result: HtaResult) -> list[str]:
    hta = result.comm_comp_overlap_pct
    if hta is None:
        return []
    text = (f"HTA's communication/computation overlap, {hta:.2f} % for rank {result.rank}, "
            "divides the compute-covered time of the whole NCCL kernels — including the time "
            "they spin waiting for the other ranks — by their length; traceviz counts only "
            "each collective's transfer, from the last rank's arrival to its end")
    tv = result.traceviz_overlap_pct
    if tv is None:
        return [text + " (it needs all ranks: traceviz report rank0 rank1 … --hta)."]
    return [text + f": {tv:.2f} % of this rank's transfer time overlapped compute."]
