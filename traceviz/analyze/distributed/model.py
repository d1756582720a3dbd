"""Frozen results of the multi-rank analysis. Times are integer nanoseconds (``*_ns``).

Definitions: ``docs/metrics.md``, section "Rank traces".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from traceviz.analyze.model import HealthWarning


@dataclass(frozen=True)
class RankInfo:
    """One rank trace: where its rank number came from, and what it says about the run."""

    rank: int
    path: str
    rank_source: str  # "distributedInfo" or "file name"
    world_size: int | None  # distributedInfo.world_size
    hostname: str | None  # traceviz stamp (profile --nproc), else None
    groups: dict[str, tuple[int, ...]]  # pg_config: process group name -> its global ranks
    gpu: str | None = None  # deviceProperties name of the GPU its activities ran on, else None


@dataclass(frozen=True)
class FailedRank:
    """A rank trace that could not be analysed (missing, corrupt, or its worker died)."""

    path: str
    reason: str  # one line


@dataclass(frozen=True)
class Instances:
    """Collective instances of all ranks, as columns (one row per NCCL kernel in a step).

    ``start_ns``/``end_ns`` are the rank's own clock (absolute: baseTimeNanoseconds + ts);
    ``*_aligned_ns`` are on the reference rank's clock (own − offset). ``match`` is the id of
    the cross-rank instance the row belongs to, -1 when it was not matched; the wait columns
    are 0 for unmatched rows.
    """

    rank: np.ndarray  # int64
    step: np.ndarray  # int64 step number (ProfilerStep#N)
    group: np.ndarray  # object: process group name ("" when unknown)
    name: np.ndarray  # object: collective name
    nelems: np.ndarray  # int64, -1 unknown
    bytes: np.ndarray  # int64, -1 unknown
    seq: np.ndarray  # int64, -1 unknown
    start_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64
    match: np.ndarray  # int64
    wait_ns: np.ndarray  # int64: last arrival - own arrival
    transfer_ns: np.ndarray  # int64: end - max(own arrival, last arrival), >= 0
    lateness_ns: np.ndarray  # int64: own arrival - first arrival

    def __len__(self) -> int:
        return len(self.rank)


@dataclass(frozen=True)
class ClockAlignment:
    """How rank clocks were put on one time axis."""

    aligned_by: str  # "same_host" | "collective_end" | "none"
    reference_rank: int
    offsets_ns: dict[int, int]  # rank -> offset (own clock - reference clock)
    spread_ns: dict[int, int]  # rank -> median absolute deviation of the per-instance offsets
    median_instance_ns: int | None  # median duration of the matched instances


@dataclass(frozen=True)
class RankStep:
    """One rank in one step (step number common to all ranks)."""

    rank: int
    step: int
    period_ns: int
    gpu_busy_ns: int
    compute_busy_ns: int
    host_wait_ns: int
    sync_wait_ns: int
    cpu_bound_share: float | None
    collectives: int  # collective instances of this rank in the step
    matched: bool  # the step's collectives were paired across ranks
    comm_wait_ns: int | None  # None when not matched
    comm_transfer_ns: int | None
    exposed_comm_ns: int | None  # None also when the step has no GPU period
    lateness_ns: int | None

    @property
    def effective_busy_ns(self) -> int | None:
        """``max(0, gpu_busy - comm_wait)``; None when not matched or the step has no GPU
        period (a CPU collective's wait is not GPU busy time). Never negative: a comm wait
        larger than the GPU busy time (clocks aligned badly, or concurrent collectives whose
        waits add up) gives 0, and the step is counted by the ``effective_busy_clamped``
        health warning (:attr:`effective_busy_clamped`)."""
        if self.comm_wait_ns is None or self.period_ns <= 0:
            return None
        return max(0, self.gpu_busy_ns - self.comm_wait_ns)

    @property
    def effective_busy_clamped(self) -> bool:
        """``comm_wait > gpu_busy`` in a step with a GPU period: effective busy was cut to 0."""
        return (self.comm_wait_ns is not None and self.period_ns > 0
                and self.comm_wait_ns > self.gpu_busy_ns)


@dataclass(frozen=True)
class StepStraggler:
    """The rank with the largest total lateness in one step (None: all arrived together)."""

    step: int
    rank: int | None
    lateness_ns: int
    cause: str | None  # "host" | "gpu" | "unknown" (no GPU period)


@dataclass(frozen=True)
class RunStraggler:
    """The rank that is straggler in most matched steps."""

    rank: int
    steps: int  # steps where it is the straggler
    matched_steps: int
    mean_lateness_ns: int  # its total lateness per step, mean over matched steps
    cause: str  # "host" | "gpu" | "unknown", from its median step metrics
    host_wait_ns_median: int  # host_wait + sync_wait, median over steps
    compute_busy_ns_median: int
    late_instances_per_step: float  # median count of instances where it arrived last (> first)
    instances_per_step: float
    lateness_ns_per_instance: int  # median lateness over the instances where it arrived last
    collective_name: str  # most frequent collective name of those instances
    # Where its lateness concentrates: (collective name, index of the instance in its step
    # (start order, from 0), share of its lateness summed over the matched steps) when one
    # index holds at least CONCENTRATION_SHARE of it, else None; and that index's lateness
    # per step (mean over the matched steps, ns; 0 when None).
    concentrated_at: tuple[str, int, float] | None = None
    concentrated_lateness_ns: int = 0

    @property
    def share_of_steps(self) -> float:
        return self.steps / self.matched_steps if self.matched_steps else 0.0


@dataclass(frozen=True)
class RankSummary:
    """Per-rank medians over the rank's steps (matched steps for the comm metrics)."""

    rank: int
    steps: int
    period_ns_median: float
    gpu_busy_ns_median: float
    compute_busy_ns_median: float
    effective_busy_ns_median: float | None
    comm_wait_ns_median: float | None
    comm_transfer_ns_median: float | None
    exposed_comm_ns_median: float | None
    host_wait_ns_median: float
    sync_wait_ns_median: float
    cpu_bound_share_median: float | None


@dataclass(frozen=True)
class CollectiveSummary:
    """Matched instances of one (group, collective, size), over all ranks."""

    group: str
    name: str
    bytes: int  # -1 unknown
    count: int  # matched instances (cross-rank), not rows
    wait_p50_ns: int  # nearest-rank median over (rank, instance) rows
    transfer_p50_ns: int


@dataclass(frozen=True)
class RanksAnalysis:
    """Everything traceviz computes from the traces of the ranks of one run."""

    ranks: tuple[RankInfo, ...]
    world_size: int | None
    clock: ClockAlignment
    instances: Instances = field(repr=False)
    steps: tuple[int, ...]  # step numbers common to all ranks
    rank_steps: tuple[RankStep, ...]
    per_rank: tuple[RankSummary, ...]
    collectives: tuple[CollectiveSummary, ...]
    step_stragglers: tuple[StepStraggler, ...]
    straggler: RunStraggler | None
    step_skew_ns_median: float | None  # max - min per-rank period, median over steps
    slowest_period_ns_median: float | None  # max over ranks of the period, median over steps
    health: tuple[HealthWarning, ...]
    rank_health: tuple[tuple[HealthWarning, ...], ...] = field(repr=False)  # each kept rank's
    # single-trace health warnings, in the order of ``ranks``
    # Are the traces one run (world sizes, GPU models, clocks; docs/metrics.md "Consistency")?
    # When not, and not ``forced``, nothing cross-rank is computed: no waits, no stragglers.
    consistent: bool = True
    inconsistency: tuple[str, ...] = ()  # one line per failed check (its health message)
    forced: bool = False  # inconsistent, but analysed as one run anyway (force=True)

    @property
    def cross_rank(self) -> bool:
        """Whether the cross-rank results (waits, lateness, stragglers) were computed."""
        return self.consistent or self.forced
