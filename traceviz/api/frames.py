"""pandas DataFrames of one trace's analysis, built from the frozen results (no new metrics).

Every function takes the loaded :class:`~traceviz.trace.Trace` and its
:class:`~traceviz.analyze.model.Analysis` and returns a fresh DataFrame whose columns and
dtypes are listed in ``docs/api.md`` (and in each docstring). Times are integer nanoseconds
(``*_ns``, int64); "not defined" is ``<NA>`` in nullable ``Int64`` columns and ``NaN`` in float
columns. Built with numpy column operations: one row per gap or activity name, never a Python
object per GPU event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from traceviz.lazy import pandas as pd
from traceviz.vocab import GAP_CLASS_NAMES, Category

if TYPE_CHECKING:
    from traceviz.analyze.model import Analysis
    from traceviz.trace import Trace

_ACTIVITY_CATEGORY = {Category.KERNEL: "kernel", Category.GPU_MEMCPY: "memcpy",
                      Category.GPU_MEMSET: "memset"}


def comm_frame(a: Analysis) -> pd.DataFrame:
    """One row per step: GPU busy split into compute and communication
    (:mod:`traceviz.analyze.trace.comm`); no rows when the trace has no communication kernel.

    Columns: ``step`` (int64, 0-based position), ``name`` (str), ``gpu_busy_ns``,
    ``compute_busy_ns``, ``comm_ns``, ``overlap_ns``, ``exposed_comm_ns`` (int64;
    ``gpu_busy_ns == compute_busy_ns + exposed_comm_ns``) and ``overlap_share`` (float64,
    ``overlap / comm``, NaN without communication).
    """
    c = a.comm
    if c is None:
        empty = np.zeros(0, np.int64)
        data: dict[str, object] = {"step": empty, "name": pd.Series([], dtype=object),
                                   "gpu_busy_ns": empty}
        data.update({col: empty for col in ("compute_busy_ns", "comm_ns", "overlap_ns",
                                            "exposed_comm_ns")})
        data["overlap_share"] = np.zeros(0, np.float64)
        return pd.DataFrame(data)
    index = c.steps.column("index")
    data = {
        "step": index.copy(),
        "name": pd.Series(a.steps.names()[index], dtype=object),
        "gpu_busy_ns": a.steps.column("gpu_busy_ns")[index].copy(),
    }
    for col in ("compute_busy_ns", "comm_ns", "overlap_ns", "exposed_comm_ns"):
        data[col] = np.array(c.steps.values(col), dtype=np.int64)
    comm, overlap = c.steps.column("comm_ns"), c.steps.column("overlap_ns")
    share = np.full(len(comm), np.nan)
    has = comm > 0
    share[has] = overlap[has] / comm[has]
    data["overlap_share"] = share
    return pd.DataFrame(data)


def steps_frame(a: Analysis) -> pd.DataFrame:
    """One row per step, in trace order.

    Columns: ``step`` (int64, 0-based position), ``name`` (str, ``ProfilerStep#N`` or
    ``trace``), ``number`` (Int64, N), ``cpu_start_ns``, ``cpu_ns``, ``kernels``, ``memcpys``,
    ``memsets``, ``launches``, ``graph_launches`` (int64), ``gpu_start_ns``, ``gpu_end_ns``
    (Int64, ``<NA>`` without GPU work), ``period_ns``, ``gpu_busy_ns``, ``host_wait_ns``,
    ``sync_wait_ns``, ``graph_internal_ns``, ``other_idle_ns``, ``queued_ns`` (int64) and
    ``cpu_bound_share``
    (float64, NaN without GPU work).
    """
    s = a.steps
    data: dict[str, object] = {}
    for spec in s.specs:  # the StepMetrics fields, in order, straight from the columns
        name = "step" if spec.name == "index" else spec.name
        col = s.column(spec.name)
        if spec.optional:
            data[name] = pd.arrays.IntegerArray(col.copy(), s.missing(spec.name).copy())
        elif col.dtype == object:
            data[name] = pd.Series(col, dtype=object, copy=True)
        else:
            data[name] = col.copy()
    data["cpu_bound_share"] = s.cpu_bound_share()
    return pd.DataFrame(data)


def gaps_frame(trace: Trace, a: Analysis) -> pd.DataFrame:
    """One row per idle gap (sorted by step, then start).

    Columns: ``step`` (int64), ``step_name`` (str), ``device`` and ``stream`` (int64, of the
    activity that ends the gap), ``start_ns``, ``end_ns``, ``duration_ns`` (int64), ``class``
    (categorical: graph_internal, sync_wait, host_wait, other_idle, queued; a gap split at its
    launch's return is two rows, the second ``queued``), ``tail`` (bool: the hole
    from the step's last activity to its period end), ``ending_activity`` (categorical: name of
    the activity that ends the gap) and ``activity_row`` (int64, its row in ``Trace.gpu``).
    """
    g = a.gaps
    names = a.steps.names()
    act = g.activity.astype(np.int64)
    gpu = trace.gpu
    name_col = gpu["name"]
    ending = pd.Categorical.from_codes(name_col.cat.codes.to_numpy()[act],
                                       categories=name_col.cat.categories)
    return pd.DataFrame({
        "step": g.step.astype(np.int64),
        "step_name": names[g.step] if len(g) else np.empty(0, dtype=object),
        "device": gpu["device"].to_numpy()[act].astype(np.int64),
        "stream": g.stream.astype(np.int64),
        "start_ns": g.start_ns.astype(np.int64),
        "end_ns": g.end_ns.astype(np.int64),
        "duration_ns": g.duration_ns.astype(np.int64),
        "class": pd.Categorical.from_codes(  # categories in ``GapClass`` order
            g.cls.astype(np.int8), dtype=pd.CategoricalDtype(list(GAP_CLASS_NAMES))),
        "tail": g.tail.astype(bool),
        "ending_activity": ending,
        "activity_row": act,
    })


def kernels_frame(trace: Trace, a: Analysis) -> pd.DataFrame:
    """One row per distinct GPU activity name (kernels, memcpys, memsets), all of the trace,
    sorted by total time then count, descending (the first rows are ``Analysis.top_kernels``).

    Columns: ``name`` (str), ``category`` (str: kernel, memcpy, memset), ``family`` (str),
    ``count``, ``total_ns``, ``mean_ns`` (floor of total / count), ``min_ns``, ``max_ns``
    (int64), ``share`` (float64: of all activity time).
    """
    gpu = trace.gpu
    cols = ["name", "category", "family", "count", "total_ns", "mean_ns", "min_ns", "max_ns",
            "share"]
    if len(gpu) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object if c in cols[:3] else
                                          (np.float64 if c == "share" else np.int64))
                             for c in cols})
    codes = gpu["name"].cat.codes.to_numpy()
    df = pd.DataFrame({"code": codes, "dur": gpu["dur_ns"].to_numpy(),
                       "cat": gpu["cat"].to_numpy(), "family": a.activity_family})
    g = df.groupby("code", sort=False).agg(
        count=("dur", "count"), total_ns=("dur", "sum"), min_ns=("dur", "min"),
        max_ns=("dur", "max"), cat=("cat", "first"), family=("family", "first"))
    g = g.sort_values(["total_ns", "count"], ascending=False, kind="stable")
    total = int(g["total_ns"].sum())
    names = gpu["name"].cat.categories
    return pd.DataFrame({
        "name": names[g.index.to_numpy()].astype(str).to_numpy(dtype=object),
        "category": [_ACTIVITY_CATEGORY.get(Category(int(c)), "other") for c in g["cat"]],
        "family": g["family"].astype(str).to_numpy(dtype=object),
        "count": g["count"].to_numpy(np.int64),
        "total_ns": g["total_ns"].to_numpy(np.int64),
        "mean_ns": (g["total_ns"] // g["count"]).to_numpy(np.int64),
        "min_ns": g["min_ns"].to_numpy(np.int64),
        "max_ns": g["max_ns"].to_numpy(np.int64),
        "share": (g["total_ns"] / total if total else g["total_ns"] * 0.0).to_numpy(np.float64),
    })


def kernel_families_frame(a: Analysis) -> pd.DataFrame:
    """One row per kernel family, by total time descending.

    Columns: ``family`` (str), ``count``, ``total_ns`` (int64), ``share`` (float64).
    """
    f = a.kernel_families
    return pd.DataFrame({
        "family": pd.Series([r.family for r in f], dtype=object),
        "count": np.array([r.count for r in f], dtype=np.int64),
        "total_ns": np.array([r.total_ns for r in f], dtype=np.int64),
        "share": np.array([r.share for r in f], dtype=np.float64),
    })


def graph_replays_frame(a: Analysis) -> pd.DataFrame:
    """One row per CUDA-graph launch call with the activities it replayed.

    Columns: ``correlation`` (int64), ``step`` (str or None outside every step),
    ``launch_name`` (str), ``nodes``, ``kernels``, ``launch_start_ns``, ``launch_ns``,
    ``first_start_ns``, ``last_end_ns``, ``span_ns``, ``busy_ns``, ``internal_gap_ns``,
    ``launch_to_first_ns`` (int64).
    """
    r = a.graph_replays
    ints = ("correlation", "nodes", "kernels", "launch_start_ns", "launch_ns",
            "first_start_ns", "last_end_ns", "span_ns", "busy_ns", "internal_gap_ns",
            "launch_to_first_ns")
    data: dict[str, object] = {c: np.array([getattr(x, c) for x in r], dtype=np.int64)
                               for c in ints}
    data["step"] = pd.Series([x.step for x in r], dtype=object)
    data["launch_name"] = pd.Series([x.launch_name for x in r], dtype=object)
    order = ["correlation", "step", "launch_name", *ints[1:]]
    return pd.DataFrame(data)[order]


def health_frame(a: Analysis) -> pd.DataFrame:
    """One row per trace-health warning: ``code``, ``message`` (str), ``count`` (int64)."""
    h = a.health
    return pd.DataFrame({
        "code": pd.Series([w.code for w in h], dtype=object),
        "message": pd.Series([w.message for w in h], dtype=object),
        "count": np.array([w.count for w in h], dtype=np.int64),
    })
