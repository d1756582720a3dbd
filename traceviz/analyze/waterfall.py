"""Waterfalls: the change in step time per step, mode minus baseline, split into parts (ns).

Two kinds (``Waterfall.units``; ``docs/comparison.md``):

``profiled``    the traces' own periods: per-step **means** of the five components of the
                period over the steps with GPU work
                (``busy + host_wait + sync_wait + graph_internal + other_idle == period`` holds
                for every step, so the parts add up exactly to the change in mean period). The
                profiler's own cost is inside these numbers. Used when no unprofiled timing
                exists (trace files, manifests without host issue times).
``unprofiled``  the paired blocks' step time: baseline = the median baseline block of the pairs
                (ms per step), mode = baseline / speed-up (so the total's sign is the speed
                verdict's), split as

                * ``gpu_busy_ns``: Δ mean GPU busy per step of the lean traces (kernels run as
                  fast under the profiler as without it);
                * ``other_idle_ns``: Δ mean (graph_internal + other_idle) of the lean traces:
                  idle the host did not cause (gaps inside graph replays, work already queued);
                * ``host_overhead_ns``: the rest, total − the two above: the GPU waiting for the
                  host (launch calls, Python, framework time, synchronisation), measured
                  without the profiler. ``cross_check["issue_delta_ns"]`` is the change in the
                  host's unprofiled issue time per step beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from traceviz.analyze.model import Analysis

#: Profiled waterfall components, in display order, with their labels.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("gpu_busy_ns", "Δbusy"),
    ("host_wait_ns", "Δhost_wait"),
    ("sync_wait_ns", "Δsync_wait"),
    ("graph_internal_ns", "Δgraph_internal"),
    ("other_idle_ns", "Δother"),
)
#: Unprofiled waterfall components, in display order, with their labels.
UNPROFILED_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("gpu_busy_ns", "ΔGPU busy (lean trace)"),
    ("host_overhead_ns", "Δhost overhead (unprofiled)"),
    ("other_idle_ns", "Δother idle (lean trace)"),
)
PROFILED = "profiled"
UNPROFILED = "unprofiled"


@dataclass(frozen=True)
class Waterfall:
    """Change in step time per step, mode minus baseline, split into parts (ns).

    ``sum(parts.values()) == delta_ns`` (exactly for ``profiled``, computed as fractions; to
    the float rounding for ``unprofiled``, whose host part is the rest).
    """

    mode: str
    baseline: str
    baseline_period_ns: float
    period_ns: float
    parts: dict[str, float] = field(default_factory=dict)  # component -> Δ ns (display order)
    units: str = PROFILED
    cross_check: dict[str, float] = field(default_factory=dict)  # unprofiled: issue_delta_ns

    @property
    def delta_ns(self) -> float:
        return self.period_ns - self.baseline_period_ns

    @property
    def components(self) -> tuple[tuple[str, str], ...]:
        """The parts' names and labels, in display order."""
        return UNPROFILED_COMPONENTS if self.units == UNPROFILED else COMPONENTS


def _component_means(analysis: Analysis) -> tuple[dict[str, Fraction], Fraction]:
    """Exact per-step means of the five components and of the period (steps with GPU work)."""
    steps = analysis.steps
    with_gpu = steps.column("period_ns") > 0
    n = int(np.count_nonzero(with_gpu))

    def total(name: str) -> int:
        return int(steps.column(name)[with_gpu].sum())

    means = {name: Fraction(total(name), n) for name, _ in COMPONENTS}
    return means, Fraction(total("period_ns"), n)


def build_waterfall(mode: str, analysis: Analysis, baseline: str, base: Analysis) -> Waterfall:
    """The profiled waterfall: the change in mean period per step, in five component deltas."""
    m_parts, m_period = _component_means(analysis)
    b_parts, b_period = _component_means(base)
    deltas = {name: m_parts[name] - b_parts[name] for name, _ in COMPONENTS}
    if sum(deltas.values()) != m_period - b_period:  # holds when each step's parts sum up
        raise ValueError(f"{mode}: step components do not add up to the period")
    return Waterfall(
        mode=mode,
        baseline=baseline,
        baseline_period_ns=float(b_period),
        period_ns=float(m_period),
        parts={name: float(d) for name, d in deltas.items()},
    )


def build_unprofiled_waterfall(
    mode: str, analysis: Analysis, baseline: str, base: Analysis, *,
    baseline_ms: float, speedup: float, issue_saved_ms: float,
) -> Waterfall:
    """The unprofiled waterfall (module doc): ``baseline_ms`` is the pair-level median of the
    baseline's blocks, ``speedup`` the paired speed-up, ``issue_saved_ms`` the median saving
    of host issue time per step (baseline − mode)."""
    if speedup <= 0 or baseline_ms <= 0:
        raise ValueError(f"{mode}: speed-up and baseline step time must be positive")
    m_parts, _ = _component_means(analysis)
    b_parts, _ = _component_means(base)
    busy = float(m_parts["gpu_busy_ns"] - b_parts["gpu_busy_ns"])
    other = float(m_parts["graph_internal_ns"] + m_parts["other_idle_ns"]
                  - b_parts["graph_internal_ns"] - b_parts["other_idle_ns"])
    base_ns = baseline_ms * 1e6
    period_ns = base_ns / speedup
    host = (period_ns - base_ns) - busy - other
    return Waterfall(
        mode=mode, baseline=baseline, baseline_period_ns=base_ns, period_ns=period_ns,
        parts={"gpu_busy_ns": busy, "host_overhead_ns": host, "other_idle_ns": other},
        units=UNPROFILED, cross_check={"issue_delta_ns": -issue_saved_ms * 1e6},
    )
