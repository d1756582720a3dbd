"""Bounded per-step rows: which steps a report lists, and statistics over all of them.

A trace can hold millions of short ``ProfilerStep`` windows; a report that lists every one of
them grows with the step count (a 35 MB trace of 300 000 steps gave a 260 MB JSON report). So
the reports list at most ``max_step_rows`` steps (default :data:`DEFAULT_MAX_STEP_ROWS`;
``traceviz report --max-step-rows N``; ``0``: none) and carry :func:`step_summary`, statistics
over *all* steps, beside them.

When a trace has more steps than the cap, the rows shown are chosen deterministically by
:func:`shown_steps`: the first ``ceil(N / 2)`` and the last ``floor(N / 2)`` steps in trace
order (the warm-up and the end of the run). Every per-step list of the JSON report (``steps``,
``gap_stats`` rows of scope ``step``, ``compile.steps``, ``host_wait_sources.steps``) lists the
same steps. The API's DataFrames (``Analysis.steps``, ``.gaps``, …) stay complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from traceviz.report.units import pct

if TYPE_CHECKING:
    from traceviz.analyze.model import StepTable

#: Per-step rows a report lists by default; the rest are summarised by :func:`step_summary`.
DEFAULT_MAX_STEP_ROWS = 1000

#: (JSON key, StepTable column, scale): the per-step metrics :func:`step_summary` covers
#: (the numeric columns of the JSON ``steps`` rows, positions in time left out).
SUMMARY_METRICS: tuple[tuple[str, str, float], ...] = (
    ("cpu_us", "cpu_ns", 1000.0),
    ("kernels", "kernels", 1.0),
    ("memcpys", "memcpys", 1.0),
    ("memsets", "memsets", 1.0),
    ("launches", "launches", 1.0),
    ("graph_launches", "graph_launches", 1.0),
    ("gpu_busy_us", "gpu_busy_ns", 1000.0),
    ("period_us", "period_ns", 1000.0),
    ("host_wait_us", "host_wait_ns", 1000.0),
    ("sync_wait_us", "sync_wait_ns", 1000.0),
    ("queued_us", "queued_ns", 1000.0),
    ("graph_internal_us", "graph_internal_ns", 1000.0),
    ("other_idle_us", "other_idle_ns", 1000.0),
)

#: The statistics of each metric, in order.
STATISTICS = ("count", "min", "p10", "median", "p90", "max", "mean")


def resolve_cap(max_step_rows: int | None) -> int:
    """``max_step_rows``, or the default for ``None``; negative values are refused."""
    if max_step_rows is None:
        return DEFAULT_MAX_STEP_ROWS
    if max_step_rows < 0:
        raise ValueError(f"max_step_rows must be >= 0, not {max_step_rows}")
    return max_step_rows


def shown_steps(total: int, max_step_rows: int | None) -> list[int]:
    """Indices (ascending) of the steps a report lists: all of them when ``total`` is at most
    the cap, else the first ``ceil(cap / 2)`` and the last ``floor(cap / 2)``."""
    cap = resolve_cap(max_step_rows)
    if total <= cap:
        return list(range(total))
    head = (cap + 1) // 2
    return [*range(head), *range(total - (cap - head), total)]


def capped(total: int, max_step_rows: int | None) -> bool:
    """Whether a trace of ``total`` steps has more steps than the report lists."""
    return total > resolve_cap(max_step_rows)


def _stats(values: np.ndarray, scale: float, digits: int = 3) -> dict[str, Any]:
    """Count, min, nearest-rank p10 / median / p90 (an actual step's value), max and mean of
    ``values`` divided by ``scale``; ``None`` statistics for no values."""
    n = len(values)
    if n == 0:
        return {"count": 0, **dict.fromkeys(STATISTICS[1:])}
    v = np.sort(values)

    def rank(q: float) -> float:
        return float(v[max(int(np.ceil(q * n)), 1) - 1]) / scale

    def fmt(x: float) -> float | int:
        return int(x) if values.dtype.kind == "i" and scale == 1.0 else round(x, digits)

    return {"count": n, "min": fmt(float(v[0]) / scale), "p10": fmt(rank(0.1)),
            "median": fmt(rank(0.5)), "p90": fmt(rank(0.9)), "max": fmt(float(v[-1]) / scale),
            "mean": round(float(v.sum(dtype=np.float64)) / n / scale, digits)}


def step_summary(steps: StepTable) -> dict[str, Any]:
    """Statistics over all ``steps`` of each per-step metric (:data:`SUMMARY_METRICS`, µs for
    times) and of ``cpu_bound_share`` (over the steps that have a GPU period): ``count``,
    ``min``, ``p10``, ``median``, ``p90`` (nearest rank: an actual step's value), ``max``,
    ``mean`` (rounded to 3 decimals; ``None`` when no step has a value). Computed on the
    table's columns: one sorted copy of one column at a time."""
    out: dict[str, Any] = {}
    for key, column, scale in SUMMARY_METRICS:
        out[key] = _stats(steps.column(column), scale)
    share = steps.cpu_bound_share()
    out["cpu_bound_share"] = _stats(share[steps.column("period_ns") > 0], 1.0, 6)
    return out


def capped_note(shown: int, total: int, cap: int) -> str:
    """The line saying the per-step rows are capped (shared by every format)."""
    head = (shown + 1) // 2
    which = f": the first {head:,} and the last {shown - head:,}" if shown else ""
    return (f"Showing {shown:,} of {total:,} steps{which} (--max-step-rows {cap}); "
            "statistics over all steps follow.")


def stats_rows(summary: dict[str, Any]) -> list[tuple[str, ...]]:
    """:func:`~traceviz.report.step_rows.step_summary` as display rows (µs to 1 decimal,
    cpu_bound_share as a percentage)."""
    rows = []
    for key, st in summary.items():
        def f(v: float | int | None, key: str = key) -> str:
            if v is None:
                return "–"
            if key == "cpu_bound_share":
                return pct(v, 1)
            return f"{v:,}" if isinstance(v, int) else f"{v:,.1f}"
        rows.append((key, f"{st['count']:,}", *(f(st[k]) for k in
                                                ("min", "p10", "median", "p90", "max", "mean"))))
    return rows


