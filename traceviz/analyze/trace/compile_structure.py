"""torch.compile structure read from the trace alone (no Dynamo logs needed).

Per step: ``Torch-Compiled Region: F/C`` events (F = frame id, C = compile id of that frame),
graph breaks (more than one distinct frame in a step; independently compiled functions look the
same, so this is an upper bound), ``TorchDynamo Cache Lookup`` time, ``## Call CompiledFxGraph``
calls, compiles inside the profiled window (``_compile.compile_inner (dynamo_timed)``), and
CUDA-graph-tree input copies: copy activities whose launch call sits inside a CompiledFxGraph
call on the same thread, before that call's ``cudaGraphLaunch`` (their count and summed GPU
duration per step).
"""

from __future__ import annotations

import numpy as np

from traceviz.analyze.columnar import object_column
from traceviz.analyze.model import CompileStepTable, CompileStructure
from traceviz.analyze.trace.links import Links
from traceviz.analyze.trace.steps import StepWindows
from traceviz.trace import Trace
from traceviz.vocab import (
    CACHE_LOOKUP,
    COMPILED_FX_GRAPH_PREFIX,
    COMPILED_REGION,
    IN_WINDOW_COMPILE_SUFFIX,
    Category,
    LaunchKind,
)

_COMPILE_INNER = "compile_inner " + IN_WINDOW_COMPILE_SUFFIX


def _codes(names, predicate) -> np.ndarray:
    return np.fromiter((i for i, n in enumerate(names) if predicate(n)), dtype=np.int64)


def compile_structure(
    trace: Trace, links: Links, steps: StepWindows, launch_step: np.ndarray, triton_kernels: int
) -> CompileStructure:
    cpu = trace.cpu
    names = cpu["name"].cat.categories
    codes = cpu["name"].cat.codes.to_numpy()
    cpu_step = steps.locate(cpu["ts_ns"].to_numpy())
    n = len(steps)

    region_codes = _codes(names, lambda s: COMPILED_REGION.match(s) is not None)
    region_rows = np.flatnonzero(np.isin(codes, region_codes))
    # Only the steps with compiled regions get a set (a dict, not one set per step).
    frames: dict[int, set[str]] = {}
    cids: dict[int, set[str]] = {}
    regions = np.zeros(n, np.int64)
    recompiled: set[str] = set()
    for r in region_rows:
        m = COMPILED_REGION.match(names[codes[r]])
        assert m is not None
        frame, cid = m.group(1), m.group(2)
        if int(cid) >= 1:
            recompiled.add(f"{frame}/{cid}")
        s = int(cpu_step[r])
        if s >= 0:
            regions[s] += 1
            frames.setdefault(s, set()).add(frame)
            cids.setdefault(s, set()).add(f"{frame}/{cid}")

    def per_step_count(code_set: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        rows = np.flatnonzero(np.isin(codes, code_set) & (cpu_step >= 0))
        out = np.zeros(n, np.int64)
        np.add.at(out, cpu_step[rows], 1 if weights is None else weights[rows])
        return out

    lookup = per_step_count(_codes(names, lambda s: s == CACHE_LOOKUP), cpu["dur_ns"].to_numpy())
    fx_codes = _codes(names, lambda s: s.startswith(COMPILED_FX_GRAPH_PREFIX))
    fx_calls = per_step_count(fx_codes)
    in_window = per_step_count(_codes(names, lambda s: s.endswith(_COMPILE_INNER)))
    copies, copy_ns = _input_copies(trace, links, fx_codes, launch_step, n)

    compiled = bool(len(region_rows)) or bool(np.isin(codes, fx_codes).any())
    frame_col, n_frames = _interned(frames, n)
    step_rows = CompileStepTable({
        "step": object_column(steps.names, n),
        "regions": regions,
        "frames": frame_col,
        "compile_ids": _interned(cids, n)[0],
        "graph_breaks": np.maximum(n_frames - 1, 0),
        "cache_lookup_ns": lookup,
        "compiled_graph_calls": fx_calls,
        "input_copies": copies,
        "in_window_compiles": in_window,
        "input_copy_ns": copy_ns,
    })
    notes = []
    if compiled and triton_kernels == 0 and len(trace.gpu):
        notes.append("compiled regions ran but no Triton kernel was seen on the GPU")
    if in_window.any():
        notes.append(
            "compilation happened inside the profiled window: those steps include compile time"
        )
    return CompileStructure(
        compiled=compiled,
        steps=step_rows,
        recompiled_regions=tuple(sorted(recompiled)),
        triton_kernels=triton_kernels,
        notes=tuple(notes),
    )


def _interned(sets: dict[int, set[str]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step: its set as a sorted tuple (equal sets share one tuple; ``()`` for steps
    without one), and the set's size (int64)."""
    out = np.empty(n, dtype=object)
    out.fill(())
    sizes = np.zeros(n, np.int64)
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    for i, items in sets.items():
        t = tuple(sorted(items))
        out[i] = shared.setdefault(t, t)
        sizes[i] = len(t)
    return out, sizes


def _input_copies(
    trace: Trace, links: Links, fx_codes: np.ndarray, launch_step: np.ndarray, n_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per step: the number of copy activities launched inside a CompiledFxGraph call before
    its graph launch, and the sum of their GPU durations (ns)."""
    out = np.zeros(n_steps, np.int64)
    out_ns = np.zeros(n_steps, np.int64)
    rt, cpu, gpu = trace.runtime, trace.cpu, trace.gpu
    graph_rows = np.flatnonzero(links.is_launch & (rt["kind"].to_numpy() == LaunchKind.GRAPH))
    if len(graph_rows) == 0 or len(fx_codes) == 0:
        return out, out_ns
    fx = cpu.loc[
        np.isin(cpu["name"].cat.codes.to_numpy(), fx_codes)
        & (cpu["cat"].isin([Category.CPU_OP, Category.USER_ANNOTATION]).to_numpy()),
        ["pid", "tid", "ts_ns", "end_ns"],
    ]
    # Copy activities and the launch call of each.
    gnames = gpu["name"].cat.categories
    copy_codes = _codes(gnames, lambda s: "copy" in s.lower() or s.startswith("Memcpy DtoD"))
    is_copy = np.isin(gpu["name"].cat.codes.to_numpy(), copy_codes) & (links.launch_row >= 0)
    copy_launch = links.launch_row[is_copy]
    copy_dur = gpu["dur_ns"].to_numpy()[is_copy]
    rt_pid, rt_tid, rt_ts = (rt[c].to_numpy() for c in ("pid", "tid", "ts_ns"))
    for (pid, tid), f in fx.groupby(["pid", "tid"], sort=False):
        f_ts, f_end = f["ts_ns"].to_numpy(), f["end_ns"].to_numpy()
        order = np.argsort(f_ts, kind="stable")
        f_ts, f_end = f_ts[order], f_end[order]
        on_thread = graph_rows[(rt_pid[graph_rows] == pid) & (rt_tid[graph_rows] == tid)]
        on = (rt_pid[copy_launch] == pid) & (rt_tid[copy_launch] == tid)
        c_ts = rt_ts[copy_launch[on]]
        c_order = np.argsort(c_ts, kind="stable")
        c_ts = c_ts[c_order]
        c_cum = np.concatenate(([0], np.cumsum(copy_dur[on][c_order])))
        for g in on_thread:
            k = np.searchsorted(f_ts, rt_ts[g], side="right") - 1
            if k < 0 or f_end[k] < rt_ts[g]:
                continue
            lo = np.searchsorted(c_ts, f_ts[k], side="left")
            hi = np.searchsorted(c_ts, rt_ts[g], side="left")
            if launch_step[g] >= 0:
                out[launch_step[g]] += hi - lo
                out_ns[launch_step[g]] += c_cum[hi] - c_cum[lo]
    return out, out_ns
