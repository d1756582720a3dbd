"""Collective instances of one rank: NCCL kernels attributed to a step by their launch call,
and gloo (CPU) collectives (``gloo:<op>`` annotations) attributed by their start.

Each kernel's collective name, message size, process group and sequence number come from, in
order: the kernel's own arguments (torch >= 2.3 copies them onto the kernel), the
``record_param_comms`` CPU op with the kernel's ``External id``, and the kernel name (name
only: size and group unknown).
"""

from __future__ import annotations

import numpy as np

from traceviz.analyze.model import Analysis
from traceviz.analyze.trace.steps import StepWindows
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace
from traceviz.vocab import (
    COLLECTIVE_IN_KERNEL_NAME,
    COLLECTIVE_KERNEL,
    CPU_COLLECTIVE_PREFIX,
    DTYPE_BYTES,
    Category,
)

INSTANCE_COLUMNS = ("step", "group", "name", "nelems", "bytes", "seq", "start_ns", "end_ns")


def collective_kernel_rows(trace: Trace) -> np.ndarray:
    """Rows of ``trace.gpu`` that are collective-library kernels."""
    gpu = trace.gpu
    names = gpu["name"].cat.categories
    lut = np.fromiter((bool(COLLECTIVE_KERNEL.match(str(n))) for n in names), bool,
                      count=len(names))
    if not len(gpu):
        return np.zeros(0, np.int64)
    is_coll = lut[gpu["name"].cat.codes.to_numpy()] & (gpu["cat"].to_numpy() == Category.KERNEL)
    return np.flatnonzero(is_coll)


def _name_from_kernel(kernel: str) -> str:
    m = COLLECTIVE_IN_KERNEL_NAME.match(kernel)
    return m.group(1).lower() if m else kernel


def step_numbers(analysis: Analysis) -> np.ndarray:
    """int64 per step: its number N, -1 for a step without one; ``[-1]`` for no steps (so
    that indexing with clipped step indices always works)."""
    steps = analysis.steps
    if not len(steps):
        return np.full(1, -1, np.int64)
    return np.where(steps.missing("number"), -1, steps.column("number"))


def rank_instances(trace: Trace, analysis: Analysis) -> tuple[pd.DataFrame, int]:
    """The rank's collective instances in numbered steps (columns :data:`INSTANCE_COLUMNS`,
    absolute own-clock ns, sorted by start), and the count of collective kernels left out
    because their launch is outside every numbered step."""
    rows = collective_kernel_rows(trace)
    gpu = trace.gpu
    step_idx = analysis.activity_step[rows]
    numbers = step_numbers(analysis)
    step = np.where(step_idx >= 0, numbers[np.maximum(step_idx, 0)], -1)
    outside = int(np.count_nonzero(step < 0))
    rows, step = rows[step >= 0], step[step >= 0]
    base = trace.meta.base_time_ns or 0
    df = pd.DataFrame({
        "step": step,
        "start_ns": gpu["ts_ns"].to_numpy()[rows] + base,
        "end_ns": gpu["end_ns"].to_numpy()[rows] + base,
        "correlation": gpu["correlation"].to_numpy()[rows],
        "external_id": gpu["external_id"].to_numpy()[rows],
        "kernel": gpu["name"].to_numpy()[rows].astype(str) if len(rows) else np.zeros(0, str),
    })
    comms = trace.comms
    args = ["collective", "in_nelems", "group_name", "seq", "dtype"]
    on_kernel = comms[comms["cat"] == Category.KERNEL].drop_duplicates("correlation")
    on_op = comms[(comms["cat"] == Category.CPU_OP) & (comms["external_id"] >= 0)]
    on_op = on_op[on_op["collective"] != ""].drop_duplicates("external_id")
    k = df.merge(on_kernel[["correlation", *args]], on="correlation", how="left")
    o = df.merge(on_op[["external_id", *args]], on="external_id", how="left")
    use_k = k["collective"].notna().to_numpy()
    use_o = ~use_k & o["collective"].notna().to_numpy()
    out = pd.DataFrame({"step": df["step"].to_numpy()})
    for a in args:
        fill = "" if a in ("collective", "group_name", "dtype") else -1
        col = np.where(use_k, k[a].to_numpy(), np.where(use_o, o[a].to_numpy(), fill))
        out[a] = col if fill == "" else col.astype(np.int64)
    uniq, inv = np.unique(df["kernel"].to_numpy().astype(str), return_inverse=True)
    from_name = np.array([_name_from_kernel(n) for n in uniq], dtype=object)[inv]
    out["name"] = np.where(use_k | use_o, out["collective"].to_numpy(), from_name)
    out["group"] = out["group_name"].astype(str)
    out["nelems"] = out["in_nelems"]
    width = out["dtype"].astype(str).map(DTYPE_BYTES).fillna(-1).to_numpy(np.int64)
    out["bytes"] = np.where((width > 0) & (out["nelems"] >= 0), out["nelems"] * width, -1)
    out["start_ns"] = df["start_ns"].to_numpy()
    out["end_ns"] = df["end_ns"].to_numpy()
    gloo, gloo_outside = _cpu_collectives(trace, analysis)
    out = pd.concat([out[list(INSTANCE_COLUMNS)], gloo], ignore_index=True)
    out = out.sort_values("start_ns", kind="stable")
    return out.reset_index(drop=True), outside + gloo_outside


def _cpu_collectives(trace: Trace, analysis: Analysis) -> tuple[pd.DataFrame, int]:
    """gloo collectives: ``gloo:<op>`` user annotations, in the numbered step whose CPU window
    contains their start (the later step at a shared boundary). Size and group unknown."""
    cpu = trace.cpu
    names = cpu["name"].cat.categories
    lut = np.fromiter((str(n).startswith(CPU_COLLECTIVE_PREFIX) for n in names), bool,
                      count=len(names))
    rows = np.flatnonzero(lut[cpu["name"].cat.codes.to_numpy()]
                          & (cpu["cat"].to_numpy() == Category.USER_ANNOTATION)) \
        if len(cpu) else np.zeros(0, np.int64)
    steps = analysis.steps
    numbered = steps.take(~steps.missing("number"))
    start = numbered.column("cpu_start_ns")
    windows = StepWindows(
        tuple(numbered.names().tolist()), numbered.column("number"), start,
        start + numbered.column("cpu_ns"), False, 0)
    ts = cpu["ts_ns"].to_numpy()[rows]
    where = windows.locate(ts)
    numbers = numbered.column("number") if len(numbered) else np.full(1, -1, np.int64)
    step = np.where(where >= 0, numbers[np.maximum(where, 0)], -1)
    inside = step >= 0
    base = trace.meta.base_time_ns or 0
    n = int(np.count_nonzero(inside))
    label = cpu["name"].to_numpy()[rows][inside].astype(str) if n else np.zeros(0, str)
    return pd.DataFrame({
        "step": step[inside],
        "group": np.full(n, "", dtype=object),
        "name": pd.Series(label, dtype=object).str.slice(len(CPU_COLLECTIVE_PREFIX))
        .to_numpy(object),
        "nelems": np.full(n, -1, np.int64),
        "bytes": np.full(n, -1, np.int64),
        "seq": np.full(n, -1, np.int64),
        "start_ns": ts[inside] + base,
        "end_ns": cpu["end_ns"].to_numpy()[rows][inside] + base,
    }), int(np.count_nonzero(~inside))

