"""The communication part of the single-trace report: GPU busy split into compute and
communication (:mod:`traceviz.analyze.trace.comm`), as JSON, a report section and a text table.

Nothing here is shown for a trace without communication kernels (``Analysis.comm is None``).
Display units: µs (``ns / 1000``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.table import Table as RichTable

from traceviz.analyze.model import Analysis
from traceviz.analyze.trace.comm import CommSplit, CommStep
from traceviz.report.elements import Section, Table
from traceviz.report.inert import inert_text
from traceviz.report.units import pct, share, us

INTRO = (
    "GPU busy split into compute (every activity that is not a collective kernel) and "
    "communication (NCCL/RCCL collective and send/recv kernels), all unions over every "
    "stream: overlap = communication running while compute runs; exposed = communication "
    "alone on the GPU, so GPU busy = compute busy + exposed communication. On one rank's "
    "trace a collective's wait for its peers counts as communication (the multi-rank report "
    "splits it). HTA's get_comm_comp_overlap counts only compute kernels (not memcpy/memset) "
    "as compute; its figure is shown beside ours."
)

FIELDS = ("compute_busy_ns", "comm_ns", "overlap_ns", "exposed_comm_ns")


def _row(c: CommStep | CommSplit) -> dict[str, Any]:
    return {"compute_busy_us": us(c.compute_busy_ns), "comm_us": us(c.comm_ns),
            "overlap_us": us(c.overlap_ns), "exposed_comm_us": us(c.exposed_comm_ns),
            "overlap_share": share(c.overlap_share)}


def per_step_medians(a: Analysis) -> dict[str, float]:
    """Median of each of :data:`FIELDS` over the steps with GPU work (0 when none)."""
    assert a.comm is not None
    with_gpu = a.steps.column("period_ns") > 0
    if not with_gpu.any():
        return {f: 0.0 for f in FIELDS}
    return {f: float(np.median(a.comm.steps.values(f)[with_gpu])) for f in FIELDS}


def _median_comm_kernels(a: Analysis) -> float:
    """Median communication kernels per step over the steps with GPU work (0 when none)."""
    assert a.comm is not None
    with_gpu = a.steps.column("period_ns") > 0
    counts = a.comm.steps.column("comm_kernels")[with_gpu]
    return float(np.median(counts)) if len(counts) else 0.0


def comm_json(a: Analysis, shown: Sequence[int]) -> dict[str, Any]:
    """The ``communication`` key of the JSON report (``shown``: the step indexes listed)."""
    c = a.comm
    assert c is not None
    med = per_step_medians(a)
    return {
        "kernels": c.kernels,
        "overall": {**_row(c), "hta_overlap_share": share(c.hta_overlap_share)},
        "per_step": {"statistic": "median over steps with GPU work",
                     **{f.replace("_ns", "_us"): us(v) for f, v in med.items()},
                     "comm_kernels": _median_comm_kernels(a)},
        "steps": [{"name": a.steps[i].name, **_row(c.steps[i]),
                   "comm_kernels": c.steps[i].comm_kernels} for i in shown],
    }


def _overall_line(c: CommSplit) -> str:
    return (f"overall: communication {us(c.comm_ns):,} µs, {pct(c.overlap_share, 1)} "
            f"overlapped with compute (HTA's definition, compute kernels only: "
            f"{pct(c.hta_overlap_share, 1)}), {us(c.exposed_comm_ns):,} µs exposed; "
            f"{c.kernels:,} communication kernels")


def comm_section(a: Analysis, listed: Sequence[int]) -> Section | None:
    """The "Communication" section (``listed``: the step indexes in its table)."""
    c = a.comm
    if c is None:
        return None
    rows = [(a.steps[i].name, *(f"{getattr(c.steps[i], f) / 1000:,.1f}" for f in FIELDS),
             pct(c.steps[i].overlap_share)) for i in listed]
    med = per_step_medians(a)
    rows.append(("median (steps with GPU work)", *(f"{med[f] / 1000:,.1f}" for f in FIELDS),
                 "–"))
    cols = ("step", "compute busy µs", "communication µs", "overlapped µs", "exposed µs",
            "overlap share")
    return Section("communication", "Communication", INTRO + " " + _overall_line(c) + ".", (
        Table("tbl-comm", "Compute and communication per step", cols, tuple(rows),
              (False, True, True, True, True, True), ""),))


def comm_text(a: Analysis, listed: Sequence[int]) -> list[Any]:
    """Rich renderables for the terminal report (empty without communication)."""
    c = a.comm
    if c is None:
        return []
    t = RichTable(title="Communication per step (µs)", title_justify="left",
                  header_style="bold", caption=_overall_line(c), caption_justify="left")
    for name in ("step", "compute", "comm", "overlap", "exposed", "overlap %"):
        t.add_column(name, justify="left" if name == "step" else "right")
    for i in listed:
        s = c.steps[i]
        t.add_row(inert_text(a.steps[i].name), *(f"{getattr(s, f) / 1000:,.1f}" for f in FIELDS),
                  pct(s.overlap_share, 1))
    return [t]
