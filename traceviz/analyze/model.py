"""Frozen, typed results of the analysis. All times are integer nanoseconds (``*_ns``).

Definitions are in ``docs/metrics.md``; this module only names and shapes them. Renderers turn
``*_ns`` into ``*_us`` for display (``ns / 1000``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from traceviz.analyze.columnar import RowTable
from traceviz.vocab import GAP_CLASS_NAMES

if TYPE_CHECKING:
    from traceviz.analyze.host_wait import HostWaitSources
    from traceviz.analyze.trace.comm import CommSplit


def cpu_bound_share(host_wait_ns: int, sync_wait_ns: int, period_ns: int) -> float | None:
    """``(host_wait + sync_wait) / period``; ``None`` when there is no GPU period."""
    if period_ns <= 0:
        return None
    return (host_wait_ns + sync_wait_ns) / period_ns


@dataclass(frozen=True)
class StepMetrics:
    """One step (a ``ProfilerStep#N`` CPU window, or the whole trace when there are none)."""

    index: int  # position in the trace, 0-based
    name: str  # "ProfilerStep#N" or "trace"
    number: int | None  # N (None: no marker, or N beyond int64)
    cpu_start_ns: int
    cpu_ns: int  # ProfilerStep duration on the CPU
    kernels: int
    memcpys: int
    memsets: int
    launches: int  # launch calls starting in the CPU window
    graph_launches: int
    gpu_start_ns: int | None  # first attributed activity start (None: no GPU work)
    gpu_end_ns: int | None  # last attributed activity end
    period_ns: int
    gpu_busy_ns: int
    host_wait_ns: int
    sync_wait_ns: int
    graph_internal_ns: int
    other_idle_ns: int
    queued_ns: int = 0  # launched (the call returned), not yet started: docs/metrics.md

    @property
    def activities(self) -> int:
        return self.kernels + self.memcpys + self.memsets

    @property
    def idle_ns(self) -> int:
        return (self.host_wait_ns + self.sync_wait_ns + self.graph_internal_ns
                + self.other_idle_ns + self.queued_ns)

    @property
    def cpu_bound_share(self) -> float | None:
        """``(host_wait + sync_wait) / period``; ``None`` for a step with no GPU activity."""
        return cpu_bound_share(self.host_wait_ns, self.sync_wait_ns, self.period_ns)


class StepTable(RowTable[StepMetrics], row=StepMetrics):
    """Every step, in trace order, as columns (one per :class:`StepMetrics` field; ``number``,
    ``gpu_start_ns`` and ``gpu_end_ns`` have missing masks). ``table[i]`` is the
    :class:`StepMetrics` of step ``i``; the methods below are its properties as columns."""

    def has_gpu(self) -> np.ndarray:
        """Bool per step: it has GPU work (``gpu_start_ns`` is not ``None``)."""
        return ~self.missing("gpu_start_ns")

    def activities(self) -> np.ndarray:
        """int64 per step: kernels + memcpys + memsets."""
        return self.column("kernels") + self.column("memcpys") + self.column("memsets")

    def cpu_bound_share(self) -> np.ndarray:
        """float64 per step: ``(host_wait + sync_wait) / period``; NaN where the period is 0
        (the division of :func:`cpu_bound_share`, to the last bit)."""
        period = self.column("period_ns")
        wait = self.column("host_wait_ns") + self.column("sync_wait_ns")
        out = np.full(len(self), np.nan)
        pos = period > 0
        out[pos] = wait[pos] / period[pos]
        return out

    def names(self) -> np.ndarray:
        """object per step: its name."""
        return self.column("name")


@dataclass(frozen=True)
class GapTable:
    """Every idle gap of every step, as columns (one row per gap, sorted by step then start).

    ``activity`` is the row (in ``Trace.gpu``) of the activity that ends the gap; ``cls`` is a
    :class:`~traceviz.vocab.GapClass`; ``tail`` marks the hole from a step's last activity end
    to its period end.
    """

    step: np.ndarray  # int32 step index
    start_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64
    cls: np.ndarray  # int8 GapClass
    stream: np.ndarray  # int64, stream of the ending activity
    activity: np.ndarray  # int64 row in Trace.gpu
    tail: np.ndarray  # bool

    @property
    def duration_ns(self) -> np.ndarray:
        return self.end_ns - self.start_ns

    def __len__(self) -> int:
        return len(self.start_ns)


@dataclass(frozen=True)
class GapStats:
    """Distribution of one class of gaps in one scope (``scope`` is "step", "stream" or "all")."""

    scope: str
    key: str  # step name, "stream N", or "all"
    gap_class: str  # one of GAP_CLASS_NAMES
    count: int
    p50_ns: int  # nearest-rank percentiles: an actual gap length
    p90_ns: int
    max_ns: int
    sum_ns: int


class GapStatsTable(RowTable[GapStats], row=GapStats):
    """Gap statistics as columns, one row per (scope, key, class) with gaps: scope "step" in
    step order, then "stream", then "all"; ``table[i]`` is a :class:`GapStats`."""


@dataclass(frozen=True)
class GraphReplay:
    """One CUDA-graph launch call and the GPU activities it replayed."""

    correlation: int
    step: str | None  # step name, None when the launch is outside every step
    launch_name: str
    nodes: int
    kernels: int
    launch_start_ns: int
    launch_ns: int  # CPU duration of the launch call
    first_start_ns: int
    last_end_ns: int
    busy_ns: int  # union of the node intervals

    @property
    def span_ns(self) -> int:
        return self.last_end_ns - self.first_start_ns

    @property
    def internal_gap_ns(self) -> int:
        return self.span_ns - self.busy_ns

    @property
    def launch_to_first_ns(self) -> int:
        return self.first_start_ns - self.launch_start_ns


@dataclass(frozen=True)
class KernelFamilyRow:
    """Attributed + unattributed GPU activities of one family."""

    family: str
    count: int
    total_ns: int
    share: float  # of all activity time


@dataclass(frozen=True)
class KernelRow:
    """One distinct GPU activity name."""

    name: str
    family: str
    count: int
    total_ns: int
    mean_ns: int
    min_ns: int
    max_ns: int


@dataclass(frozen=True)
class TritonKernelRow:
    """A Triton kernel with what Inductor fused into it (parsed from its name)."""

    name: str
    kind: str  # pointwise, reduction, persistent_reduction, template, foreach, ...
    fused_ops: tuple[str, ...]
    count: int
    total_ns: int


@dataclass(frozen=True)
class CompileStep:
    """torch.compile structure seen in one step."""

    step: str
    regions: int  # Torch-Compiled Region events
    frames: tuple[str, ...]  # distinct frame ids F
    compile_ids: tuple[str, ...]  # distinct "F/C"
    graph_breaks: int  # distinct frames - 1 (0 when one or none)
    cache_lookup_ns: int  # total TorchDynamo Cache Lookup time
    compiled_graph_calls: int  # "## Call CompiledFxGraph" events
    input_copies: int  # copy activities launched inside a CompiledFxGraph before a graph launch
    in_window_compiles: int  # "(dynamo_timed)" events: compilation inside the profiled window
    input_copy_ns: int = 0  # summed GPU duration of this step's input copies


class CompileStepTable(RowTable[CompileStep], row=CompileStep):
    """Per-step torch.compile structure as columns, one row per step in step order;
    ``table[i]`` is a :class:`CompileStep` (steps with equal frame sets share one tuple)."""


@dataclass(frozen=True)
class CompileStructure:
    """torch.compile facts derived from the trace alone."""

    compiled: bool  # any compiled region or CompiledFxGraph call seen
    steps: CompileStepTable
    recompiled_regions: tuple[str, ...]  # "F/C" with C >= 1
    triton_kernels: int  # GPU activities whose family is triton
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class EventRef:
    """One event of a loaded trace, to point at (the first offending event of a warning)."""

    table: str  # "gpu", "runtime", "cpu" or "flow" (the Trace table it is a row of)
    name: str
    ts_ns: int | None  # None: the file's value is no valid time (NaN, Infinity, text, huge)
    dur_ns: int | None


#: The health code of a trace with neither GPU activity nor a launch call: a CPU-only run.
CPU_ONLY = "cpu_only"


@dataclass(frozen=True)
class HealthWarning:
    """Something in the trace that limits what its numbers can say.

    ``count`` is how many events (or steps, devices) the warning is about; ``first_event`` the
    earliest of them in the trace when the warning is about events. ``strict`` marks a
    data-validity or ambiguity warning: ``--strict`` makes the command exit 1 when one is
    present.
    """

    code: str
    message: str
    count: int = 0
    first_event: EventRef | None = None
    strict: bool = False


@dataclass(frozen=True)
class Totals:
    """Whole-trace counts and sums (over all steps unless said otherwise)."""

    steps: int
    steps_with_gpu: int
    activities: int
    kernels: int
    memcpys: int
    memsets: int
    attributed: int
    unattributed: int  # activities whose launch call is in no step (or unknown)
    unlinked: int  # activities with no launch call at all (subset of unattributed)
    launches: int  # launch calls (correlated with >= 1 activity), all of the trace
    kernel_launches: int
    graph_launches: int
    memcpy_launches: int
    memset_launches: int
    triton_kernels: int
    gpu_window_ns: int  # first activity start -> last activity end, all activities
    gpu_busy_all_ns: int  # union of all activity intervals, all streams
    # Over the union of the step periods (the sums over steps when no periods overlap):
    # docs/metrics.md, "Totals and per-step medians".
    period_ns: int
    gpu_busy_ns: int  # union of the attributed activities
    host_wait_ns: int
    sync_wait_ns: int
    graph_internal_ns: int
    other_idle_ns: int
    cpu_ns: int
    excluded_events: int = 0  # events of any table excluded for invalid values (validity.py)
    queued_ns: int = 0
    #: sum over steps of the step periods; more than ``period_ns`` when periods overlap
    step_period_sum_ns: int = 0

    @property
    def cpu_bound_share(self) -> float | None:
        return cpu_bound_share(self.host_wait_ns, self.sync_wait_ns, self.period_ns)


@dataclass(frozen=True)
class PerStep:
    """Medians over the steps that have GPU work: what comparisons use."""

    kernels: float
    launches: float
    graph_launches: float
    activities: float
    period_ns: float
    gpu_busy_ns: float
    host_wait_ns: float
    sync_wait_ns: float
    graph_internal_ns: float
    other_idle_ns: float
    cpu_ns: float
    cpu_bound_share: float | None
    queued_ns: float = 0.0

    @property
    def kernels_per_launch(self) -> float | None:
        return self.activities / self.launches if self.launches else None


@dataclass(frozen=True)
class Analysis:
    """Everything traceviz computes from one trace."""

    steps: StepTable
    gaps: GapTable
    gap_stats: GapStatsTable
    graph_replays: tuple[GraphReplay, ...]
    kernel_families: tuple[KernelFamilyRow, ...]
    top_kernels: tuple[KernelRow, ...]
    triton_kernels: tuple[TritonKernelRow, ...]
    compile: CompileStructure
    health: tuple[HealthWarning, ...]
    totals: Totals
    per_step: PerStep
    #: int32 per Trace.gpu row: step index; -1 unattributed or excluded (invalid values)
    activity_step: np.ndarray = field(repr=False)
    #: object per Trace.gpu row: family name; "excluded" for rows excluded for invalid values
    activity_family: np.ndarray = field(repr=False)
    host_wait_sources: HostWaitSources | None = field(default=None, repr=False)
    #: GPU busy split into compute and communication (:mod:`traceviz.analyze.trace.comm`); None
    #: when the trace has no communication kernel
    comm: CommSplit | None = field(default=None, repr=False)

    @property
    def cpu_only(self) -> bool:
        """Whether the trace holds neither GPU activity nor a launch call (health
        :data:`CPU_ONLY`): its steps ran on the CPU, and GPU metrics do not apply."""
        return any(h.code == CPU_ONLY for h in self.health)

    @property
    def median_step_cpu_ns(self) -> float | None:
        """The median over every step of its ``ProfilerStep``'s duration on the CPU
        (``cpu_ns``, ns), the step time of a :attr:`cpu_only` trace; None without steps."""
        cpu = self.steps.column("cpu_ns")
        return float(np.median(cpu)) if len(cpu) else None

    def compute_busy_ns(self, index: int) -> int:
        """Step ``index``'s compute busy time: its GPU busy time less exposed communication
        (equal to GPU busy in a trace without communication kernels)."""
        return int(self.compute_busy()[index])

    def compute_busy(self) -> np.ndarray:
        """int64 per step: :meth:`compute_busy_ns` of every step, as a column."""
        return (self.steps.column("gpu_busy_ns") if self.comm is None
                else self.comm.steps.column("compute_busy_ns"))

    def compute_kernels(self) -> np.ndarray:
        """int64 per step: its kernels that are not communication kernels (``docs/metrics.md``,
        "Communication, one trace"); the step's ``kernels`` in a trace without them."""
        kernels = self.steps.column("kernels")
        return kernels if self.comm is None else kernels - self.comm.steps.column("comm_kernels")

    def representative_step(self) -> StepMetrics | None:
        """The step with GPU work whose period is the median (lower median for even counts;
        among equal periods, the earlier step)."""
        period = self.steps.column("period_ns")
        with_gpu = np.flatnonzero(period > 0)
        if not len(with_gpu):
            return None
        by_period = with_gpu[np.argsort(period[with_gpu], kind="stable")]
        return self.steps[int(by_period[(len(by_period) - 1) // 2])]


__all__ = [
    "GAP_CLASS_NAMES",
    "Analysis",
    "CompileStep",
    "CompileStepTable",
    "CompileStructure",
    "EventRef",
    "GapStats",
    "GapStatsTable",
    "GapTable",
    "GraphReplay",
    "HealthWarning",
    "KernelFamilyRow",
    "KernelRow",
    "PerStep",
    "StepMetrics",
    "StepTable",
    "Totals",
    "TritonKernelRow",
]
