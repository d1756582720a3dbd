"""The single-trace JSON document (``traceviz report T --format json``).

Times are microseconds (``*_us``: ``ns / 1000``, exact to the nanosecond). Keys are stable:
``trace``, ``steps``, ``gaps``, ``graph_replays``, ``kernel_families``, ``top_kernels``,
``triton_kernels``, ``compile``, ``host_wait_sources``, ``health``, ``totals``, ``per_step``,
``steps_total``, ``steps_shown``, ``max_step_rows``, ``step_summary``; and, only for a
trace with communication kernels, ``communication`` (:mod:`traceviz.report.comm_section`).

Per-step lists are bounded (:mod:`traceviz.report.step_rows`): ``steps``, the ``gap_stats``
rows of scope ``step``, ``compile.steps`` and ``host_wait_sources.steps`` list at most
``max_step_rows`` steps (default 1000; when the trace has more: its first ``ceil(N/2)`` and
last ``floor(N/2)`` steps), ``steps_shown`` of ``steps_total``; ``step_summary`` holds count,
min, p10, median, p90, max and mean of each per-step metric over all steps.

Strict JSON: a number that is not finite (NaN, ±Infinity) is written as ``null``, never as the
``NaN`` / ``Infinity`` tokens that JSON does not have (:func:`finite`, :func:`dumps`; the
report itself is encoded by msgspec, which writes them as ``null``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from traceviz._version import __version__
from traceviz.analyze.model import Analysis, EventRef, HealthWarning, StepMetrics
from traceviz.report.comm_section import comm_json
from traceviz.report.host_wait_section import host_wait_json
from traceviz.report.step_rows import resolve_cap, shown_steps, step_summary
from traceviz.report.units import share, us
from traceviz.trace import Trace

SCHEMA = "traceviz.report/1"


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, ±Infinity) replaced by ``None``, recursively
    through dicts, lists and tuples (tuples become lists)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(doc: Any) -> str:
    """Strict JSON text of ``doc`` (indent 2, UTF-8 kept, trailing newline): non-finite numbers
    become ``null``."""
    return json.dumps(finite(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _event(ref: EventRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {"table": ref.table, "name": ref.name, "ts_us": us(ref.ts_ns), "dur_us": us(ref.dur_ns)}


def health_to_dict(h: HealthWarning) -> dict[str, Any]:
    """``first_event``'s ``ts_us`` / ``dur_us`` are ``null`` where the file's value was no
    valid time (NaN, Infinity, text, out of range)."""
    return {"code": h.code, "message": h.message, "count": h.count, "strict": h.strict,
            "first_event": _event(h.first_event)}


def step_to_dict(s: StepMetrics) -> dict[str, Any]:
    return {
        "name": s.name,
        "cpu_us": us(s.cpu_ns),
        "kernels": s.kernels,
        "memcpys": s.memcpys,
        "memsets": s.memsets,
        "launches": s.launches,
        "graph_launches": s.graph_launches,
        "gpu_busy_us": us(s.gpu_busy_ns),
        "period_us": us(s.period_ns),
        "host_wait_us": us(s.host_wait_ns),
        "sync_wait_us": us(s.sync_wait_ns),
        "queued_us": us(s.queued_ns),
        "graph_internal_us": us(s.graph_internal_ns),
        "other_idle_us": us(s.other_idle_ns),
        "cpu_bound_share": share(s.cpu_bound_share),
        "gpu_start_us": us(s.gpu_start_ns),
        "gpu_end_us": us(s.gpu_end_ns),
        "cpu_start_us": us(s.cpu_start_ns),
    }


def _listed(names_column: np.ndarray, names: set[str] | None) -> np.ndarray:
    """Bool per row: its step name is one of ``names`` (``None``: every row)."""
    if names is None:
        return np.ones(len(names_column), bool)
    return np.fromiter((n in names for n in names_column.tolist()), bool,
                       count=len(names_column))


def trace_info(trace: Trace) -> dict[str, Any]:
    m = trace.meta
    md = m.metadata
    return {
        "path": m.path,
        "size_bytes": m.size_bytes,
        "json_bytes": m.json_bytes,
        "gzipped": m.gzipped,
        "form": m.form,
        "events": m.events,
        "timestamps": m.timestamps,
        "base_time_ns": m.base_time_ns,
        "devices": [
            {"id": d.id, "name": d.name, "sms": d.sms, "compute_capability": d.compute_capability}
            for d in m.devices
        ],
        "rank": m.rank,
        "torch_version": _first(md, "torch_version", "pytorch_version"),
        "cuda_runtime_version": md.get("cuda_runtime_version"),
        "cuda_driver_version": md.get("cuda_driver_version"),
        "cupti_version": md.get("cupti_version"),
        "traceviz": md.get("traceviz") if isinstance(md.get("traceviz"), dict) else None,
        "category_counts": dict(sorted(m.category_counts.items())),
    }


def _first(md: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in md:
            return md[k]
    tv = md.get("traceviz")
    if isinstance(tv, dict):
        for k in keys:
            if k in tv:
                return tv[k]
    return None


def analysis_to_dict(trace: Trace, a: Analysis, max_step_rows: int | None = None
                     ) -> dict[str, Any]:
    """Every metric of the analysis as plain JSON-able data (non-finite numbers: ``None``);
    per-step rows for at most ``max_step_rows`` steps (``None``: the default, 1000)."""
    return finite(analysis_document(trace, a, max_step_rows))


def analysis_document(trace: Trace, a: Analysis, max_step_rows: int | None = None
                      ) -> dict[str, Any]:
    """:func:`analysis_to_dict` before :func:`finite`: for ``msgspec.json.encode``, which
    writes a non-finite float as ``null`` itself (the walk over the document is skipped)."""
    t = a.totals
    p = a.per_step
    shown = shown_steps(len(a.steps), max_step_rows)
    all_shown = len(shown) == len(a.steps)
    names = None if all_shown else set(a.steps.names()[shown].tolist())
    gap_rows = a.gap_stats.take(_listed(a.gap_stats.column("key"), names)
                                | (a.gap_stats.column("scope") != "step"))
    compile_rows = a.compile.steps.take(_listed(a.compile.steps.column("step"), names))
    doc = {
        "schema": SCHEMA,
        "traceviz_version": __version__,
        "trace": trace_info(trace),
        "steps_total": len(a.steps),
        "steps_shown": len(shown),
        "max_step_rows": resolve_cap(max_step_rows),
        "steps": [step_to_dict(s) for s in a.steps.take(shown)],
        "step_summary": step_summary(a.steps),
        "gap_stats": [
            {
                "scope": g.scope,
                "key": g.key,
                "class": g.gap_class,
                "count": g.count,
                "p50_us": us(g.p50_ns),
                "p90_us": us(g.p90_ns),
                "max_us": us(g.max_ns),
                "sum_us": us(g.sum_ns),
            }
            for g in gap_rows
        ],
        "graph_replays": [
            {
                "correlation": r.correlation,
                "step": r.step,
                "launch": r.launch_name,
                "nodes": r.nodes,
                "kernels": r.kernels,
                "span_us": us(r.span_ns),
                "busy_us": us(r.busy_ns),
                "internal_gap_us": us(r.internal_gap_ns),
                "launch_us": us(r.launch_ns),
                "launch_to_first_us": us(r.launch_to_first_ns),
            }
            for r in a.graph_replays
        ],
        "kernel_families": [
            {
                "family": f.family,
                "count": f.count,
                "total_us": us(f.total_ns),
                "share": share(f.share),
            }
            for f in a.kernel_families
        ],
        "top_kernels": [
            {
                "name": k.name,
                "family": k.family,
                "count": k.count,
                "total_us": us(k.total_ns),
                "mean_us": us(k.mean_ns),
                "min_us": us(k.min_ns),
                "max_us": us(k.max_ns),
            }
            for k in a.top_kernels
        ],
        "triton_kernels": [
            {
                "name": k.name,
                "kind": k.kind,
                "fused_ops": list(k.fused_ops),
                "count": k.count,
                "total_us": us(k.total_ns),
            }
            for k in a.triton_kernels
        ],
        "compile": {
            "compiled": a.compile.compiled,
            "recompiled_regions": list(a.compile.recompiled_regions),
            "triton_kernels": a.compile.triton_kernels,
            "notes": list(a.compile.notes),
            "steps": [
                {
                    "step": c.step,
                    "regions": c.regions,
                    "frames": list(c.frames),
                    "compile_ids": list(c.compile_ids),
                    "graph_breaks": c.graph_breaks,
                    "cache_lookup_us": us(c.cache_lookup_ns),
                    "compiled_graph_calls": c.compiled_graph_calls,
                    "cudagraph_input_copies": c.input_copies,
                    "cudagraph_input_copy_us": us(c.input_copy_ns),
                    "in_window_compiles": c.in_window_compiles,
                }
                for c in compile_rows
            ],
        },
        "host_wait_sources": host_wait_json(a.host_wait_sources,
                                            None if all_shown else shown)
        if a.host_wait_sources is not None
        else None,
        "health": [health_to_dict(h) for h in a.health],
        "totals": {
            "steps": t.steps,
            "steps_with_gpu": t.steps_with_gpu,
            "activities": t.activities,
            "kernels": t.kernels,
            "memcpys": t.memcpys,
            "memsets": t.memsets,
            "attributed": t.attributed,
            "unattributed": t.unattributed,
            "unlinked": t.unlinked,
            "launches": t.launches,
            "kernel_launches": t.kernel_launches,
            "graph_launches": t.graph_launches,
            "memcpy_launches": t.memcpy_launches,
            "memset_launches": t.memset_launches,
            "triton_kernels": t.triton_kernels,
            "gpu_window_us": us(t.gpu_window_ns),
            "gpu_busy_all_us": us(t.gpu_busy_all_ns),
            "period_us": us(t.period_ns),
            "step_period_sum_us": us(t.step_period_sum_ns),
            "gpu_busy_us": us(t.gpu_busy_ns),
            "host_wait_us": us(t.host_wait_ns),
            "sync_wait_us": us(t.sync_wait_ns),
            "queued_us": us(t.queued_ns),
            "graph_internal_us": us(t.graph_internal_ns),
            "other_idle_us": us(t.other_idle_ns),
            "cpu_us": us(t.cpu_ns),
            "cpu_bound_share": share(t.cpu_bound_share),
            "excluded_events": t.excluded_events,
        },
        "per_step": {
            "statistic": "median over steps with GPU work",
            "kernels": p.kernels,
            "launches": p.launches,
            "graph_launches": p.graph_launches,
            "activities": p.activities,
            "kernels_per_launch": share(p.kernels_per_launch),
            "period_us": us(p.period_ns),
            "gpu_busy_us": us(p.gpu_busy_ns),
            "host_wait_us": us(p.host_wait_ns),
            "sync_wait_us": us(p.sync_wait_ns),
            "queued_us": us(p.queued_ns),
            "graph_internal_us": us(p.graph_internal_ns),
            "other_idle_us": us(p.other_idle_ns),
            "cpu_us": us(p.cpu_ns),
            "cpu_bound_share": share(p.cpu_bound_share),
        },
    }
    if a.comm is not None:  # only traces with communication kernels carry the key
        doc["communication"] = comm_json(a, shown)
    return doc
