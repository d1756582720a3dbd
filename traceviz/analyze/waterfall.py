"""Waterfalls: the change in step time per step, mode minus baseline, split into parts (ns).

Two kinds (``Waterfall.units``; ``docs/comparison.md``):

``profiled``    the traces' own periods: per-step **means** of the six components of the
                period over the steps with GPU work
                (``busy + host_wait + sync_wait + queued + graph_internal + other_idle ==
                period`` holds
                for every step, so the parts add up exactly to the change in mean period). The
                profiler's own cost is inside these numbers. Used when no unprofiled timing
                exists (trace files, manifests without host issue times).
``unprofiled``  the paired blocks' step time: baseline = the median baseline block of the pairs
                (ms per step), mode = baseline / speed-up (so the total's sign is the speed
                verdict's), split as

                * ``gpu_busy_ns``: Δ mean GPU busy per step of the lean traces (kernels run as
                  fast under the profiler as without it);
                * ``other_idle_ns``: Δ mean (queued + graph_internal + other_idle) of the lean
                  traces: idle the host did not cause (work launched but not yet started, gaps
                  inside graph replays);
                * ``host_overhead_ns``: the rest, total − the two above: the GPU waiting for the
                  host (launch calls, Python, framework time, synchronisation), measured
                  without the profiler. ``cross_check["issue_delta_ns"]`` is the change in the
                  host's unprofiled issue time per step beside it.

When either trace has communication kernels (``docs/metrics.md``, "Communication, one
trace"), both kinds split the GPU busy part in two: ``compute_busy_ns`` (Δ compute busy) and
``exposed_comm_ns`` (Δ exposed communication), which add up to Δ GPU busy
(``gpu_busy = compute_busy + exposed_comm`` per step; ``Waterfall.comm`` is true).
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
    ("queued_ns", "Δqueued"),
    ("graph_internal_ns", "Δgraph_internal"),
    ("other_idle_ns", "Δother"),
)
#: Unprofiled waterfall components, in display order, with their labels.
UNPROFILED_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("gpu_busy_ns", "ΔGPU busy (lean trace)"),
    ("host_overhead_ns", "Δhost overhead (unprofiled)"),
    ("other_idle_ns", "Δother idle (lean trace)"),
)
#: The GPU busy part, split when a trace has communication kernels.
COMM_BUSY: tuple[tuple[str, str], ...] = (
    ("compute_busy_ns", "Δcompute busy"),
    ("exposed_comm_ns", "Δexposed comm"),
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
    comm: bool = False  # GPU busy split into compute busy and exposed communication

    @property
    def delta_ns(self) -> float:
        return self.period_ns - self.baseline_period_ns

    @property
    def components(self) -> tuple[tuple[str, str], ...]:
        """The parts' names and labels, in display order."""
        parts = UNPROFILED_COMPONENTS if self.units == UNPROFILED else COMPONENTS
        return _split_busy(parts) if self.comm else parts

    def part(self, name: str) -> float:
        """One part by name, across the busy split: ``gpu_busy_ns`` of a split waterfall is
        the two halves' sum; ``compute_busy_ns`` / ``exposed_comm_ns`` of an unsplit one are
        Δ GPU busy / 0 (a table of waterfalls of both kinds shows one set of columns)."""
        if name in self.parts:
            return self.parts[name]
        if name == "gpu_busy_ns":
            return self.busy_delta_ns
        return self.parts["gpu_busy_ns"] if name == "compute_busy_ns" else 0.0

    @property
    def busy_delta_ns(self) -> float:
        """Δ GPU busy, whole (compute busy + exposed communication when split)."""
        if self.comm:
            return self.parts["compute_busy_ns"] + self.parts["exposed_comm_ns"]
        return self.parts["gpu_busy_ns"]

    @property
    def compute_busy_delta_ns(self) -> float:
        """Δ compute busy (Δ GPU busy for traces without communication kernels)."""
        return self.parts["compute_busy_ns"] if self.comm else self.parts["gpu_busy_ns"]


def _split_busy(parts: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for name, label in parts:
        out.extend(COMM_BUSY if name == "gpu_busy_ns" else ((name, label),))
    return tuple(out)


def has_comm(*analyses: Analysis) -> bool:
    """Whether any of the analyses has communication kernels."""
    return any(a.comm is not None for a in analyses)


def _busy_split_means(analysis: Analysis) -> dict[str, Fraction]:
    """Exact per-step means of compute busy and exposed communication (steps with GPU work)."""
    with_gpu = analysis.steps.column("period_ns") > 0
    n = int(np.count_nonzero(with_gpu))
    compute = int(analysis.compute_busy()[with_gpu].sum())
    busy = int(analysis.steps.column("gpu_busy_ns")[with_gpu].sum())
    return {"compute_busy_ns": Fraction(compute, n),
            "exposed_comm_ns": Fraction(busy - compute, n)}


def _with_split(deltas: dict[str, Fraction], a: Analysis, b: Analysis) -> dict[str, Fraction]:
    """``deltas`` with ``gpu_busy_ns`` replaced (in place of order) by the compute / exposed
    communication deltas."""
    m, base = _busy_split_means(a), _busy_split_means(b)
    out: dict[str, Fraction] = {}
    for name, d in deltas.items():
        if name == "gpu_busy_ns":
            out.update({k: m[k] - base[k] for k, _ in COMM_BUSY})
        else:
            out[name] = d
    return out


def _component_means(analysis: Analysis) -> tuple[dict[str, Fraction], Fraction]:
    """Exact per-step means of the six components and of the period (steps with GPU work)."""
    steps = analysis.steps
    with_gpu = steps.column("period_ns") > 0
    n = int(np.count_nonzero(with_gpu))

    def total(name: str) -> int:
        return int(steps.column(name)[with_gpu].sum())

    means = {name: Fraction(total(name), n) for name, _ in COMPONENTS}
    return means, Fraction(total("period_ns"), n)


def build_waterfall(mode: str, analysis: Analysis, baseline: str, base: Analysis) -> Waterfall:
    """The profiled waterfall: the change in mean period per step, in six component deltas."""
    m_parts, m_period = _component_means(analysis)
    b_parts, b_period = _component_means(base)
    deltas = {name: m_parts[name] - b_parts[name] for name, _ in COMPONENTS}
    comm = has_comm(analysis, base)
    if comm:
        deltas = _with_split(deltas, analysis, base)
    if sum(deltas.values()) != m_period - b_period:  # holds when each step's parts sum up
        raise ValueError(f"{mode}: step components do not add up to the period")
    return Waterfall(
        mode=mode,
        baseline=baseline,
        baseline_period_ns=float(b_period),
        period_ns=float(m_period),
        parts={name: float(d) for name, d in deltas.items()},
        comm=comm,
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
    not_host = ("queued_ns", "graph_internal_ns", "other_idle_ns")
    other = float(sum(m_parts[k] - b_parts[k] for k in not_host))
    base_ns = baseline_ms * 1e6
    period_ns = base_ns / speedup
    host = (period_ns - base_ns) - busy - other
    parts: dict[str, Fraction | float] = {"gpu_busy_ns": busy, "host_overhead_ns": host,
                                          "other_idle_ns": other}
    comm = has_comm(analysis, base)
    if comm:
        parts = _with_split({k: Fraction(v) for k, v in parts.items()}, analysis, base)
    return Waterfall(
        mode=mode, baseline=baseline, baseline_period_ns=base_ns, period_ns=period_ns,
        parts={k: float(v) for k, v in parts.items()},
        units=UNPROFILED, cross_check={"issue_delta_ns": -issue_saved_ms * 1e6}, comm=comm,
    )
