"""``analyze(trace) -> Analysis``: the whole single-trace analysis, as pure functions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from traceviz.analyze.columnar import object_column
from traceviz.analyze.health.ambiguity import ambiguity_warnings
from traceviz.analyze.health.validity import (
    Screened,
    index_loaded_rows,
    ordering_warnings,
    screen_values,
)
from traceviz.analyze.host_wait import HostWaitSources, nesting_health, plan_host_wait
from traceviz.analyze.model import (
    CPU_ONLY,
    Analysis,
    GapTable,
    HealthWarning,
    KernelFamilyRow,
    KernelRow,
    PerStep,
    StepTable,
    Totals,
    TritonKernelRow,
)
from traceviz.analyze.trace.comm import comm_split
from traceviz.analyze.trace.compile_structure import compile_structure
from traceviz.analyze.trace.families import family_of_name, parse_triton_name
from traceviz.analyze.trace.gaps import StepTimeline, gap_stats, step_timeline
from traceviz.analyze.trace.graphs import graph_replays
from traceviz.analyze.trace.intervals import union_length
from traceviz.analyze.trace.links import Links, link_launches
from traceviz.analyze.trace.queued import launch_latency_warning
from traceviz.analyze.trace.steps import StepWindows, find_steps
from traceviz.analyze.trace.union_totals import union_totals
from traceviz.freed_memory import reused_heap
from traceviz.int_sets import distinct
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace
from traceviz.trace.parallel import process_map, worker_count
from traceviz.vocab import GAP_CLASS_NAMES, Category, GapClass, LaunchKind

TOP_KERNELS = 25
#: At most this many analysis workers, whatever ``workers`` says. On the 16-core benchmark VM
#: (1 GB trace, ~2 s of work after the step timeline, this process taking items too), the
#: forked map took 0.29 s with 8 workers, 0.21 s with 12 and 0.22 s with 16 (medians of 5
#: interleaved runs: each fork copies the parent's page tables). Where processes cannot fork
#: the map runs on threads, where the blocks ran slower on 10–16 threads than on 8 (the GIL).
ANALYSIS_WORKERS_MAX = 12
_DRIVER_LAUNCH = ("cuLaunchKernel", "cuLaunchKernelEx")


def analyze(trace: Trace, *, workers: int | None = None) -> Analysis:
    """Compute every metric of ``docs/metrics.md`` for one trace.

    Events with invalid values are excluded first (:func:`screen_values`); the per-row arrays
    of the result (``activity_step``, ``activity_family``, ``gaps.activity``) still index the
    rows of ``trace.gpu``, excluded rows included. ``workers``: on a trace large enough to cut
    into host-wait blocks, the blocks and the other metrics are computed by this many forked
    processes (threads where processes cannot fork;
    :func:`~traceviz.trace.parallel.process_map`; default:
    :func:`~traceviz.trace.parallel.worker_count`; at most :data:`ANALYSIS_WORKERS_MAX`); the
    result does not depend on it.
    """
    screened = screen_values(trace)
    threads = min(worker_count(workers), ANALYSIS_WORKERS_MAX)
    return index_loaded_rows(_analyze_screened(screened, threads), screened)


@dataclass(frozen=True)
class _Computed:
    """Every metric but the host-wait merge, and what the merge needs: the analysis's state
    before its peak, without the jobs' inputs (events, links, plan), freed on return."""

    step_rows: StepTable
    gaps: GapTable
    activity_step: np.ndarray
    families: np.ndarray
    got: dict[str, Any]
    block_sums: list[Any]
    merge: Callable[[list[Any]], HostWaitSources]


def _analyze_screened(screened: Screened, threads: int) -> Analysis:
    c = _compute(screened, threads)
    sources = c.merge(c.block_sums)  # the analysis's peak: one row per (step, call path)
    got = c.got
    return Analysis(
        steps=c.step_rows,
        gaps=c.gaps,
        gap_stats=got["stats"],
        graph_replays=got["replays"],
        kernel_families=got["kernel_families"],
        top_kernels=got["top_kernels"],
        triton_kernels=got["triton_kernels"],
        compile=got["compile"],
        health=got["health"] + nesting_health(sources),
        totals=replace(got["totals"], excluded_events=screened.excluded_events),
        per_step=_per_step(c.step_rows),
        activity_step=c.activity_step,
        activity_family=c.families,
        host_wait_sources=sources,
        comm=got["comm"],
    )


def _compute(screened: Screened, threads: int) -> _Computed:
    """The step timeline and rows, the families, the gap statistics and compile structure,
    then one (parallel) map over the remaining metrics and the host-wait blocks."""
    trace = screened.trace
    gpu, rt = trace.gpu, trace.runtime
    links = link_launches(trace)
    steps = find_steps(trace)
    launch_step = steps.locate(rt["ts_ns"].to_numpy())
    activity_step = np.where(
        links.launch_row >= 0, launch_step[np.maximum(links.launch_row, 0)] if len(rt) else -1, -1
    ).astype(np.int32)
    timeline = step_timeline(trace, links, activity_step, len(steps))
    step_rows = _step_metrics(trace, links, steps, launch_step, activity_step, timeline)
    families = _activity_families(trace, links)
    triton_count = int(np.count_nonzero(families == "triton"))
    # The metrics whose results hold a step name a row (references to the trace's strings) are
    # computed in this process: from a forked worker they would come back pickled, one new
    # string a step (10⁶ steps: ≈ 70 MiB a table, arriving at the map's peak).
    here = {"stats": gap_stats(timeline.gaps, steps.names),
            "compile": compile_structure(trace, links, steps, launch_step, triton_count)}
    plan = plan_host_wait(trace, links, timeline.gaps, steps.names, threads)
    # The remaining metrics, then the host-wait blocks: one parallel map over all of them when
    # the trace is large enough to be cut into blocks.
    metrics: dict[str, Callable[[], Any]] = {
        "top_kernels": lambda: _top_kernels(gpu, families),
        "health": lambda: _health(screened, links, steps, step_rows, activity_step),
        "totals": lambda: _totals(trace, links, timeline, step_rows, activity_step,
                                  triton_count),
        "kernel_families": lambda: _family_rows(gpu, families),
        "triton_kernels": lambda: _triton_rows(gpu, families),
        "replays": lambda: graph_replays(trace, links, steps, launch_step),
        "comm": lambda: comm_split(trace, activity_step, len(steps)),
    }
    jobs = [*metrics.values(), *(partial(plan.attribute, i) for i in range(len(plan.blocks)))]
    done = process_map(lambda i: _on_reused_heap(jobs[i]), len(jobs),
                       threads if len(plan.blocks) > 1 else 1)
    return _Computed(step_rows, timeline.gaps, activity_step, families,
                     {**here, **dict(zip(metrics, done[:len(metrics)], strict=True))},
                     done[len(metrics):], plan.merger())


def _on_reused_heap(job: Callable[[], Any]) -> Any:
    """``job()`` with its temporaries served from the heap and given back when it ends
    (:func:`~traceviz.freed_memory.reused_heap`): a map job's arrays of 0.1–4 MiB, each mapped
    and faulted in afresh under the CLI's fixed mmap threshold, were most of the analysis's
    system time."""
    with reused_heap():
        return job()


def _step_metrics(
    trace: Trace,
    links: Links,
    steps: StepWindows,
    launch_step: np.ndarray,
    activity_step: np.ndarray,
    tl: StepTimeline,
) -> StepTable:
    n = len(steps)
    cat = trace.gpu["cat"].to_numpy()

    def count(mask: np.ndarray, where: np.ndarray) -> np.ndarray:
        sel = where[mask & (where >= 0)]
        return np.bincount(sel, minlength=n)[:n] if n else np.zeros(0, np.int64)

    kind = trace.runtime["kind"].to_numpy()
    no_gpu = tl.gpu_start_ns < 0
    idle = tl.idle_ns_by_class
    return StepTable(
        {
            "index": np.arange(n, dtype=np.int64),
            "name": object_column(steps.names, n),
            "number": steps.numbers,
            "cpu_start_ns": steps.start_ns,
            "cpu_ns": steps.end_ns - steps.start_ns,
            "kernels": count(cat == Category.KERNEL, activity_step),
            "memcpys": count(cat == Category.GPU_MEMCPY, activity_step),
            "memsets": count(cat == Category.GPU_MEMSET, activity_step),
            "launches": count(links.is_launch, launch_step),
            "graph_launches": count(links.is_launch & (kind == LaunchKind.GRAPH), launch_step),
            "gpu_start_ns": np.where(no_gpu, 0, tl.gpu_start_ns),
            "gpu_end_ns": np.where(no_gpu, 0, tl.gpu_end_ns),
            "period_ns": tl.period_ns,
            "gpu_busy_ns": tl.busy_ns,
            **{f"{name}_ns": idle[:, cls] for cls, name in enumerate(GAP_CLASS_NAMES)},
        },
        missing={"number": steps.numbers < 0, "gpu_start_ns": no_gpu, "gpu_end_ns": no_gpu},
    )


def _activity_families(trace: Trace, links: Links) -> np.ndarray:
    gpu, rt = trace.gpu, trace.runtime
    names = gpu["name"].cat.categories
    codes = gpu["name"].cat.codes.to_numpy()
    used = distinct(codes)
    lut = np.empty(len(names), dtype=object)
    for c in used:
        lut[c] = family_of_name(names[c])
    fam = lut[codes] if len(codes) else np.empty(0, dtype=object)
    cat = gpu["cat"].to_numpy()
    fam[cat == Category.GPU_MEMCPY] = "memcpy"
    fam[cat == Category.GPU_MEMSET] = "memset"
    if len(rt):
        # Per name, not per call: whether it is a driver launch (code -1, no name: the slot
        # appended last, False).
        by_name = np.array([str(n).startswith(_DRIVER_LAUNCH[0])
                            for n in rt["name"].cat.categories] + [False], bool)
        rt_driver = by_name[rt["name"].cat.codes.to_numpy()]
        lr = links.launch_row
        driver = np.zeros(len(codes), bool)
        has = lr >= 0
        driver[has] = rt_driver[lr[has]]
        fam[(fam == "other") & driver & (cat == Category.KERNEL)] = "triton"
    return fam


def _family_rows(gpu: pd.DataFrame, fam: np.ndarray) -> tuple[KernelFamilyRow, ...]:
    if len(gpu) == 0:
        return ()
    df = pd.DataFrame({"family": fam, "dur": gpu["dur_ns"].to_numpy()})
    g = df.groupby("family", sort=True)["dur"].agg(["count", "sum"])
    total = int(g["sum"].sum())
    rows = [
        KernelFamilyRow(
            str(f), int(r["count"]), int(r["sum"]), (int(r["sum"]) / total) if total else 0.0
        )
        for f, r in g.iterrows()
    ]
    rows.sort(key=lambda r: (-r.total_ns, r.family))
    return tuple(rows)


def _top_kernels(gpu: pd.DataFrame, fam: np.ndarray) -> tuple[KernelRow, ...]:
    if len(gpu) == 0:
        return ()
    codes = gpu["name"].cat.codes.to_numpy()
    df = pd.DataFrame({"code": codes, "dur": gpu["dur_ns"].to_numpy()})
    g = df.groupby("code", sort=False)["dur"].agg(["count", "sum", "min", "max"])
    g = g.sort_values(["sum", "count"], ascending=False, kind="stable").head(TOP_KERNELS)
    first_family = pd.Series(fam).groupby(codes).first()
    names = gpu["name"].cat.categories
    return tuple(
        KernelRow(
            name=str(names[c]),
            family=str(first_family[c]),
            count=int(r["count"]),
            total_ns=int(r["sum"]),
            mean_ns=int(r["sum"]) // int(r["count"]),
            min_ns=int(r["min"]),
            max_ns=int(r["max"]),
        )
        for c, r in g.iterrows()
    )


def _triton_rows(gpu: pd.DataFrame, fam: np.ndarray) -> tuple[TritonKernelRow, ...]:
    sel = fam == "triton"
    if not sel.any():
        return ()
    codes = gpu["name"].cat.codes.to_numpy()[sel]
    durs = gpu["dur_ns"].to_numpy()[sel]
    g = pd.DataFrame({"code": codes, "dur": durs}).groupby("code")["dur"].agg(["count", "sum"])
    names = gpu["name"].cat.categories
    rows = []
    for c, r in g.iterrows():
        name = str(names[c])
        parsed = parse_triton_name(name)
        kind, ops = parsed if parsed is not None else ("user", ())
        rows.append(TritonKernelRow(name, kind, ops, int(r["count"]), int(r["sum"])))
    rows.sort(key=lambda r: (-r.total_ns, r.name))
    return tuple(rows)


def _totals(
    trace: Trace,
    links: Links,
    timeline: StepTimeline,
    rows: StepTable,
    activity_step: np.ndarray,
    triton_count: int,
) -> Totals:
    gpu = trace.gpu
    cat = gpu["cat"].to_numpy()
    kind = trace.runtime["kind"].to_numpy()
    is_launch = links.is_launch
    ts, end = gpu["ts_ns"].to_numpy(), gpu["end_ns"].to_numpy()
    attributed = int(np.count_nonzero(activity_step >= 0))
    att = activity_step >= 0
    union = union_totals(timeline.gpu_start_ns, timeline.period_ns, timeline.gaps,
                         timeline.busy_ns, ts[att], end[att])
    idle = union.idle_ns_by_class
    return Totals(
        steps=len(rows),
        steps_with_gpu=int(np.count_nonzero(rows.has_gpu())),
        activities=len(gpu),
        kernels=int(np.count_nonzero(cat == Category.KERNEL)),
        memcpys=int(np.count_nonzero(cat == Category.GPU_MEMCPY)),
        memsets=int(np.count_nonzero(cat == Category.GPU_MEMSET)),
        attributed=attributed,
        unattributed=len(gpu) - attributed,
        unlinked=int(np.count_nonzero(links.launch_row < 0)),
        launches=int(np.count_nonzero(is_launch)),
        kernel_launches=int(np.count_nonzero(is_launch & (kind == LaunchKind.KERNEL))),
        graph_launches=int(np.count_nonzero(is_launch & (kind == LaunchKind.GRAPH))),
        memcpy_launches=int(np.count_nonzero(is_launch & (kind == LaunchKind.MEMCPY))),
        memset_launches=int(np.count_nonzero(is_launch & (kind == LaunchKind.MEMSET))),
        triton_kernels=triton_count,
        gpu_window_ns=int(end.max() - ts.min()) if len(gpu) else 0,
        gpu_busy_all_ns=union_length(ts, end),
        period_ns=union.period_ns,
        gpu_busy_ns=union.busy_ns,
        host_wait_ns=idle[GapClass.HOST_WAIT],
        sync_wait_ns=idle[GapClass.SYNC_WAIT],
        graph_internal_ns=idle[GapClass.GRAPH_INTERNAL],
        other_idle_ns=idle[GapClass.OTHER_IDLE],
        cpu_ns=int(rows.column("cpu_ns").sum()),
        queued_ns=idle[GapClass.QUEUED],
        step_period_sum_ns=union.step_period_sum_ns,
    )


def _per_step(rows: StepTable) -> PerStep:
    """Medians over the steps with GPU work, one column at a time."""
    has = rows.has_gpu()

    def med(values: np.ndarray) -> float:
        return float(np.median(values)) if len(values) else 0.0

    def col(name: str) -> float:
        return med(rows.column(name)[has])

    shares = rows.cpu_bound_share()[has]
    shares = shares[~np.isnan(shares)]
    return PerStep(
        kernels=col("kernels"),
        launches=col("launches"),
        graph_launches=col("graph_launches"),
        activities=med(rows.activities()[has]),
        period_ns=col("period_ns"),
        gpu_busy_ns=col("gpu_busy_ns"),
        host_wait_ns=col("host_wait_ns"),
        sync_wait_ns=col("sync_wait_ns"),
        graph_internal_ns=col("graph_internal_ns"),
        other_idle_ns=col("other_idle_ns"),
        cpu_ns=col("cpu_ns"),
        cpu_bound_share=med(shares) if len(shares) else None,
        queued_ns=col("queued_ns"),
    )


def _health(
    screened: Screened,
    links: Links,
    steps: StepWindows,
    rows: StepTable,
    activity_step: np.ndarray,
) -> tuple[HealthWarning, ...]:
    """Data-validity warnings (``validity.py``: excluded values, ordering contradictions), the
    ambiguity ones (``ambiguity.py``), then the informational ones about what the trace
    holds."""
    trace = screened.trace
    gpu, rt = trace.gpu, trace.runtime
    out: list[HealthWarning] = [*screened.warnings, *ordering_warnings(trace, links),
                                *ambiguity_warnings(trace, links)]

    def warn(code: str, count: int, message: str) -> None:
        if count:
            out.append(HealthWarning(code, message, int(count)))

    if len(gpu) == 0:
        calls = int(np.count_nonzero(rt["kind"].to_numpy() != LaunchKind.OTHER))
        out.append(
            HealthWarning(
                "no_gpu_activity",
                f"the trace holds no GPU activity (kernel/memcpy/memset) although it has {calls} "
                f"launch call{'s' if calls != 1 else ''}: CUPTI did not record (CUDA-graph "
                "replays: start the profiler before the first replay)",
                calls,
            )
            if calls else HealthWarning(
                CPU_ONLY,
                "the trace holds no GPU activity and no launch call: a CPU-only run, to which "
                "kernel, launch and GPU-time metrics do not apply",
                0,
            )
        )
    unlinked = int(np.count_nonzero(links.launch_row < 0))
    warn(
        "unlinked_activities",
        unlinked,
        f"{unlinked} GPU activities have no launch call in the trace (they count as unattributed)",
    )
    unattributed = int(np.count_nonzero((activity_step < 0) & (links.launch_row >= 0)))
    warn(
        "unattributed_activities",
        unattributed,
        f"{unattributed} GPU activities were launched outside every ProfilerStep window",
    )
    kind = rt["kind"].to_numpy()
    empty_graphs = int(np.count_nonzero((kind == LaunchKind.GRAPH) & ~links.is_launch))
    warn(
        "graph_launch_without_nodes",
        empty_graphs,
        f"{empty_graphs} graph launch calls have no GPU activity: their replays were not "
        "traced (CUPTI started late?)",
    )
    no_work = np.flatnonzero(~rows.has_gpu())
    if len(no_work) and len(gpu):
        first = rows.names()[no_work[:5]].tolist()
        warn(
            "steps_without_gpu_work",
            len(no_work),
            f"{len(no_work)} steps have no GPU work: {', '.join(first)}"
            + (" …" if len(no_work) > 5 else ""),
        )
    warn(
        "overlapping_steps",
        steps.overlapping,
        f"{steps.overlapping} ProfilerStep windows start before the previous one ends",
    )
    if len(gpu):
        has = rows.has_gpu()
        start, end = rows.column("gpu_start_ns"), rows.column("gpu_end_ns")
        overlap_periods = int(np.count_nonzero(has[:-1] & has[1:] & (start[1:] < end[:-1])))
        warn(
            "overlapping_step_gpu_work",
            overlap_periods,
            f"{overlap_periods} steps' GPU work starts before the previous step's work ends "
            "(their periods overlap)",
        )
    devices = int(gpu["device"].nunique()) if len(gpu) else 0
    if devices > 1:
        out.append(
            HealthWarning(
                "multiple_devices",
                f"GPU activity on {devices} devices: busy time is their union",
                devices,
            )
        )
    latency = launch_latency_warning(trace, links)
    if latency is not None:
        out.append(latency)
    for note in trace.meta.notes:
        out.append(HealthWarning("format", note, 0))
    return tuple(out)
