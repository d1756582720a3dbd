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
                verdict's). Each side's step ``P`` is split into parts from its lean trace
                (per-step means over the steps with GPU work, :class:`LeanParts`; a
                distributed mode's from the rank that bounds its step), **fitted into the
                unprofiled step** (:func:`fit_to_step`):

                * compute busy ``C' = min(C, P)`` (kernels run as fast under the profiler as
                  without it);
                * exposed communication and other idle (queued + graph_internal +
                  other_idle: idle the host did not cause) scaled by
                  ``min(1, (P − C') / (E + O))``: under the profiler a collective's wait and
                  the queue grow with the profiled step, and cannot hold more than the
                  unprofiled step leaves;
                * host overhead ``H' = P − C' − E' − O'``: the GPU waiting for the host
                  (launch calls, Python, framework time, synchronisation; on several GPUs,
                  for the bounding rank's host), measured without the profiler.

                Every part of a side lies in ``[0, P]``, so each part of the waterfall (mode −
                baseline) is at most the longer of the two steps, and the parts add up to
                the total. ``gpu_busy_ns`` is Δ(C' + E'), ``other_idle_ns`` ΔO',
                ``host_overhead_ns`` ΔH'; ``cross_check["issue_delta_ns"]`` is the change in
                the host's unprofiled issue time per step beside it, ``lean_scale`` each
                side's scale (baseline, mode; 1: the lean parts fitted as measured).

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
    #: unprofiled: the scale of (baseline, mode) exposed communication and other idle
    lean_scale: tuple[float, float] = (1.0, 1.0)

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


@dataclass(frozen=True)
class LeanParts:
    """A lean trace's per-step means over its steps with GPU work (ns): compute busy, exposed
    communication (0 without communication kernels) and other idle (queued + graph_internal
    + other_idle); ``comm``: the trace has communication kernels."""

    compute_busy_ns: float
    exposed_comm_ns: float
    other_idle_ns: float
    comm: bool


def lean_parts(analysis: Analysis) -> LeanParts:
    """The :class:`LeanParts` of one analysed trace."""
    means, _ = _component_means(analysis)
    other = sum(means[k] for k in ("queued_ns", "graph_internal_ns", "other_idle_ns"))
    if analysis.comm is None:
        return LeanParts(float(means["gpu_busy_ns"]), 0.0, float(other), False)
    split = _busy_split_means(analysis)
    return LeanParts(float(split["compute_busy_ns"]), float(split["exposed_comm_ns"]),
                     float(other), True)


def fit_to_step(lean: LeanParts, step_ns: float) -> tuple[dict[str, float], float]:
    """One side's parts fitted into its unprofiled step (module doc): ``compute_busy_ns``,
    ``exposed_comm_ns``, ``other_idle_ns`` and ``host_overhead_ns``, each in ``[0, step_ns]``
    and adding up to it, and the scale applied to exposed communication and other idle."""
    compute = min(lean.compute_busy_ns, step_ns)
    idle = lean.exposed_comm_ns + lean.other_idle_ns
    room = step_ns - compute
    scale = 1.0 if idle <= room else room / idle
    comm, other = lean.exposed_comm_ns * scale, lean.other_idle_ns * scale
    return ({"compute_busy_ns": compute, "exposed_comm_ns": comm, "other_idle_ns": other,
             "host_overhead_ns": max(0.0, step_ns - compute - comm - other)}, scale)


def build_unprofiled_waterfall(
    mode: str, analysis: Analysis, baseline: str, base: Analysis, *,
    baseline_ms: float, speedup: float, issue_saved_ms: float,
    lean: tuple[LeanParts, LeanParts] | None = None,
) -> Waterfall:
    """The unprofiled waterfall (module doc): ``baseline_ms`` is the pair-level median of the
    baseline's blocks, ``speedup`` the paired speed-up, ``issue_saved_ms`` the median saving
    of host issue time per step (baseline − mode). ``lean``: the (baseline, mode) lean parts
    to split by (a distributed mode's bounding ranks'), else the two analyses'."""
    if speedup <= 0 or baseline_ms <= 0:
        raise ValueError(f"{mode}: speed-up and baseline step time must be positive")
    base_lean, mode_lean = lean if lean is not None else (lean_parts(base), lean_parts(analysis))
    base_ns = baseline_ms * 1e6
    period_ns = base_ns / speedup
    b, b_scale = fit_to_step(base_lean, base_ns)
    m, m_scale = fit_to_step(mode_lean, period_ns)
    delta = {k: m[k] - b[k] for k in m}
    comm = base_lean.comm or mode_lean.comm
    busy = ({"compute_busy_ns": delta["compute_busy_ns"],
             "exposed_comm_ns": delta["exposed_comm_ns"]} if comm else
            {"gpu_busy_ns": delta["compute_busy_ns"] + delta["exposed_comm_ns"]})
    parts = {**busy, "host_overhead_ns": delta["host_overhead_ns"],
             "other_idle_ns": delta["other_idle_ns"]}
    return Waterfall(
        mode=mode, baseline=baseline, baseline_period_ns=base_ns, period_ns=period_ns,
        parts=parts, units=UNPROFILED,
        cross_check={"issue_delta_ns": -issue_saved_ms * 1e6}, comm=comm,
        lean_scale=(b_scale, m_scale),
    )
