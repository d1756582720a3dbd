"""What one Holistic Trace Analysis (HTA) run on one trace produced, as plain data.

Every time here is in **microseconds**, as HTA reports it (HTA works on the trace's µs
timestamps; with its ns rounding disabled they keep their fractional part). Keys end in ``_us``.
Nothing in this module imports ``hta``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HtaResult:
    """HTA's figures for one rank of one trace, plus how it was run and what went wrong.

    Attributes:
        trace_path: the trace file given to :func:`~traceviz.holistic.run_hta`.
        hta_version: version of the installed ``hta`` package (``None``: not installed).
        rank: the rank HTA was told the trace belongs to.
        rank_source: where ``rank`` came from (``"argument"``, ``"distributedInfo.rank"``, or
            ``"none in trace: HTA's default 0"``).
        ns_rounding_disabled: True when HTA was run with its ns rounding off
            (``HTA_DISABLE_NS_ROUNDING``); False means HTA rounded each event's start up and
            end down to whole µs.
        include_last_profiler_step: the value passed to HTA's ``TraceAnalysis``.
        seconds: wall time of loading plus all analyses, in seconds.
        gpu_ops: GPU operations left in HTA's dataframe after its own filtering, per
            category (``kernel``, ``gpu_memcpy``, ``gpu_memset``).
        launch_calls: per runtime/driver API name, ``{"calls": n, "in_launch_stats": m}``:
            calls correlated with ≥1 GPU op in HTA's dataframe, and how many of them HTA's
            kernel launch statistics cover.
        temporal_events: events HTA's temporal breakdown spans, per raw category: every
            row with a stream (``stream != -1``), which can include more than GPU ops (e.g.
            ``cuda_sync`` rows, or a Triton launch ``cpu_op`` carrying ``args.stream``).
        temporal_breakdown: HTA's temporal breakdown row for ``rank`` (µs and %), or None.
        idle_time_breakdown: HTA's idle time breakdown rows (stream, category, µs, ratio).
        launch_stats: a summary of HTA's kernel launch statistics dataframe, or None.
        critical_path: a summary of HTA's critical path for one step, or None.
        comm_comp_overlap_pct: HTA's ``get_comm_comp_overlap`` for ``rank`` (percent of the
            communication kernels' union overlapped by compute kernels), or None when the
            trace has no communication kernel (HTA divides by zero then).
        notes: short factual notes on where HTA's definitions differ from traceviz's.
        errors: analysis name (``load``, ``temporal_breakdown``, ``idle_time_breakdown``,
            ``kernel_launch_stats``, ``critical_path``) → ``"ExceptionType: message"``.
    """

    trace_path: str
    hta_version: str | None
    rank: int
    rank_source: str
    ns_rounding_disabled: bool
    include_last_profiler_step: bool
    seconds: float
    gpu_ops: dict[str, int] = field(default_factory=dict)
    launch_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    temporal_events: dict[str, int] = field(default_factory=dict)
    temporal_breakdown: dict[str, float] | None = None
    idle_time_breakdown: tuple[dict[str, Any], ...] = ()
    launch_stats: dict[str, Any] | None = None
    critical_path: dict[str, Any] | None = None
    comm_comp_overlap_pct: float | None = None
    notes: tuple[str, ...] = ()
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready copy (tuples become lists, NaN/inf become ``None``)."""
        return {
            "trace_path": self.trace_path,
            "hta_version": self.hta_version,
            "rank": self.rank,
            "rank_source": self.rank_source,
            "ns_rounding_disabled": self.ns_rounding_disabled,
            "include_last_profiler_step": self.include_last_profiler_step,
            "seconds": round(self.seconds, 3),
            "gpu_ops": dict(self.gpu_ops),
            "launch_calls": {k: dict(v) for k, v in self.launch_calls.items()},
            "temporal_events": dict(self.temporal_events),
            "temporal_breakdown": _plain(self.temporal_breakdown),
            "idle_time_breakdown": _plain(list(self.idle_time_breakdown)),
            "launch_stats": _plain(self.launch_stats),
            "critical_path": _plain(self.critical_path),
            "notes": list(self.notes),
            "errors": dict(self.errors),
            **({} if self.comm_comp_overlap_pct is None
               else {"comm_comp_overlap_pct": self.comm_comp_overlap_pct}),
        }


def _plain(value: Any) -> Any:
    """Recursively turn tuples into lists and non-finite floats into ``None``."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
