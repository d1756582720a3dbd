"""The unprofiled host/GPU split: where the time went, from the paired blocks alone.

No profiler runs while the paired blocks are timed (:mod:`traceviz.collect.paired`), so their
numbers are the step as the user runs it. Each block of ``n`` steps records, per step in ms:

* ``period``: the device's time per step (CUDA events around the block);
* ``issue``: the host's issue time per step (``perf_counter_ns`` from just before the first
  call to the return of the last, before the block's synchronize).

Definitions (``docs/comparison.md``, "The unprofiled split"):

* **lag** of a block = ``n × (1 − issue / period)``, in steps: how far the GPU was still behind
  the host when the block's last call returned (the period is the issue time plus the work
  still queued then). Kept as evidence; the bound call reads the lag beyond the block's tail.
* the **tail** of a block: what the period holds after the host's last call even when the host
  set the pace: the last launch's latency, the last step's kernels, the event record. It is
  allowed for as one step's GPU work (``compute_busy_ms``: the lean trace's mean compute busy
  per step, communication kernels excluded) plus ``block_tail_allowance_us`` (the machine's
  launch latency and event record; 150 µs).
* **lag beyond the tail** of a block = ``(n × (period − issue) − tail) / period``, in steps.
* **compute share** of a side = ``compute_busy_ms / period``: how much of the unprofiled step
  the GPU's own compute fills (kernel durations are barely inflated by the profiler).
* a side is **host-bound** or **GPU-bound** by :func:`bound_call`, on the median over its
  blocks of the lag beyond the tail and its compute share (rules there).
  ``host_bound_max_lag_steps`` (half a step) is the lag beyond the tail a host-bound side may
  show. A GPU-bound side's issue time is an upper bound of what the host needed: once
  about a thousand launches are queued (:data:`LAUNCH_QUEUE_DEPTH`), the host waits for the
  queue, and that wait is in the issue time.
* per pair ``i``: ``saved_i = B_i − M_i`` (baseline minus mode period) and
  ``issue_saved_i = BI_i − MI_i`` (the same of the issue times);
  ``saved_ms`` and ``issue_saved_ms`` are their medians over the pairs, and
  ``issue_share = issue_saved_ms / saved_ms``: the share of the period saved that the host's
  issue time explains (above 1 when the mode's GPU became the limit; the same ratio for a
  slower mode, read as a share of the period added); defined when the CI of ``saved_ms``
  excludes zero (each resample's share is its issue saving over its saving);
* confidence intervals: percentile bootstrap over **the same resamples as the speed-up**
  (:func:`traceviz.analyze.stats.resample_indices` with the paired block's ``resamples`` and
  ``seed``), every statistic recomputed on each resample;
* pair-level medians: ``period_ms`` and ``issue_ms`` of each side are the medians over the
  pairs of its blocks.

On the CPU device the host is the device: issue and period are one measurement, the lag is 0
and every side is host-bound (``host_is_device``); the split then says nothing about launches.

Without lean-trace figures for a side (``GpuWork``: the split built from a paired block alone)
its tail is the allowance alone and only the lag decides.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from traceviz.analyze.model import Analysis
from traceviz.analyze.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    resample_indices,
)
from traceviz.analyze.verdicts import Thresholds

#: Launches the CUDA driver queues before a launch call blocks the host. NVIDIA does not
#: document it; ``python -m benchmarks.launch_queue`` measured 1,022 (three runs alike) on an
#: H100 with torch 2.11 / CUDA 13.0 (``benchmarks/results/launch_queue_h100.json``).
LAUNCH_QUEUE_DEPTH = 1022


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap CI (same units as the value)."""

    value: float
    low: float
    high: float


#: :attr:`Side.bound_reason` values (:func:`bound_call`).
COMPUTE_SHORT = "compute short"  # host-bound: the GPU's compute fills too little of the step
LAG_BEYOND_TAIL = "lag beyond tail"  # GPU-bound: work still queued beyond the block's tail
COMPUTE_FILLS = "compute fills"  # GPU-bound: the GPU's compute fills the step
WITHIN_TAIL = "within tail"  # host-bound: the GPU ended at most the threshold behind


@dataclass(frozen=True)
class GpuWork:
    """What a side's lean trace says about its GPU, per step: ``compute_busy_ms``, the mean
    compute busy over the steps with GPU work (communication kernels excluded; ms), and
    ``launches``, the median launch calls."""

    compute_busy_ms: float
    launches: float


def gpu_work(analysis: Analysis) -> GpuWork | None:
    """A lean trace's :class:`GpuWork` (module doc); ``None`` without a step with GPU work."""
    with_gpu = analysis.steps.column("period_ns") > 0
    if not with_gpu.any():
        return None
    busy = analysis.compute_busy()[with_gpu]
    return GpuWork(float(busy.sum()) / int(with_gpu.sum()) / 1e6, analysis.per_step.launches)


def bound_call(lag_beyond_tail_steps: float, compute_share: float | None,
               t: Thresholds) -> tuple[bool, str]:
    """``(host_bound, reason)``: who set the pace of a side's blocks, without the profiler.

    In order (definitions in the module doc):

    1. compute share below ``gpu_bound_min_compute_share`` (0.5) → **host-bound**
       (:data:`COMPUTE_SHORT`): the GPU computed for less than half the step, so it cannot
       have set the pace; it waited, for the host or (on several GPUs) in a collective for
       another rank's host;
    2. lag beyond the tail above ``host_bound_max_lag_steps`` (0.5 step) → **GPU-bound**
       (:data:`LAG_BEYOND_TAIL`): work was still queued when the host returned, beyond what
       the last step's kernels and the launch latency explain;
    3. compute share at or above ``gpu_bound_busy_share`` (0.9) → **GPU-bound**
       (:data:`COMPUTE_FILLS`): removing every host cost could save at most a tenth of the
       step. This covers what the lag cannot show: a step of more than about 500 launches
       (the ~1,022-launch queue then holds about two steps, one of them the tail);
    4. else **host-bound** (:data:`WITHIN_TAIL`).

    ``compute_share`` ``None`` (no lean trace): rules 1 and 3 are skipped.

    Calibration cells (``tests/test_bound_call.py``: paired blocks sized as
    :mod:`traceviz.collect.paired` sizes them, a tail of 40–130 µs of launch latency plus the
    last step's kernels): host-bound steps of 20 µs, 44 µs (5 launches, 15 % compute: the
    manual CUDA graph of issue 36), 200 µs, 2 ms and 20 ms, with compute up to 85 % of the
    step; GPU-bound at the same sizes with the host at 30–70 % of the GPU's time and 1–1,500
    launches per step (compute 83 % of the step where the queue holds more than two steps,
    95 % where it does not); a rank whose GPU waits in a collective for its peer's host (5 %
    compute, 1.4–4.7 steps of lag). Half a step of lag beyond the tail: at one step, blocks of
    five 20 ms steps with the host at 70 % of the GPU (0.7 step beyond the tail) read
    host-bound. On the committed H100/H200 runs the largest tail beyond one step's compute
    busy is 106 µs (``reports/inplace_update``, cudagraph); the host-bound side with the
    highest compute share 0.81 (``reports/rmsnorm_residual``, compile), the GPU-bound side
    with the lowest 0.83 (``reports/kv_cache_static``, cudagraph: 240 steps of lag).

    Not told apart: a GPU-bound step of more than about 500 launches whose compute fills
    less than 90 % of it (gaps between many small kernels) reads host-bound; from 1,022
    launches the launch verdict says its host time may be a wait on the full queue.
    """
    if compute_share is not None and compute_share < t.gpu_bound_min_compute_share:
        return True, COMPUTE_SHORT
    if lag_beyond_tail_steps > t.host_bound_max_lag_steps:
        return False, LAG_BEYOND_TAIL
    if compute_share is not None and compute_share >= t.gpu_bound_busy_share:
        return False, COMPUTE_FILLS
    return True, WITHIN_TAIL


@dataclass(frozen=True)
class Side:
    """One side of the pairs (baseline or mode), per step in ms (medians over the pairs), and
    its bound call (:func:`bound_call`) with what it was decided from."""

    period_ms: float
    issue_ms: float
    iters: int  # steps per block
    lag_steps: Estimate  # median lag of the side's blocks (module doc)
    host_bound: bool
    lag_beyond_tail_steps: Estimate | None = None  # median over the blocks (module doc)
    tail_ms: float = 0.0  # the tail allowed for: compute busy per step + the allowance
    compute_busy_ms: float | None = None  # lean trace, mean per step; None without one
    compute_share: float | None = None  # compute_busy_ms / period_ms
    launches: float | None = None  # lean trace, median per step
    bound_reason: str = ""  # bound_call's reason


@dataclass(frozen=True)
class UnprofiledSplit:
    """The host/GPU split of one mode's paired timing (module doc)."""

    baseline: Side
    mode: Side
    saved_ms: Estimate  # median over the pairs of baseline − mode period (ms per step)
    issue_saved_ms: Estimate  # the same of the issue times
    issue_share: Estimate | None  # issue_saved / saved; None when saved's CI reaches zero
    pairs: int
    level: float
    resamples: int
    seed: int
    max_lag_steps: float
    host_is_device: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (ms, steps, shares as fractions)."""
        return asdict(self)


def _floats(value: Any) -> np.ndarray | None:
    if not isinstance(value, list) or not value:
        return None
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return out if out.ndim == 1 and np.isfinite(out).all() else None


def _estimate(values: np.ndarray, idx: np.ndarray, level: float
              ) -> tuple[Estimate, np.ndarray]:
    """The median of ``values`` with its CI, and the resampled medians it came from."""
    resampled = np.median(values[idx], axis=1)
    return (Estimate(float(np.median(values)), *percentile_interval(resampled, level)),
            resampled)


def _side(period: np.ndarray, issue: np.ndarray, iters: int, idx: np.ndarray, level: float,
          t: Thresholds, gpu: GpuWork | None) -> Side:
    lag = iters * (1.0 - issue / period)
    lag_est, _ = _estimate(lag, idx, level)
    busy_ms = None if gpu is None else gpu.compute_busy_ms
    tail_ms = (busy_ms or 0.0) + t.block_tail_allowance_us / 1000
    beyond_est, _ = _estimate((iters * (period - issue) - tail_ms) / period, idx, level)
    period_ms = float(np.median(period))
    share = None if busy_ms is None else busy_ms / period_ms
    host_bound, reason = bound_call(beyond_est.value, share, t)
    return Side(period_ms, float(np.median(issue)), iters, lag_est, host_bound, beyond_est,
                tail_ms, busy_ms, share, None if gpu is None else gpu.launches, reason)


def _iters(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def split_from_paired(paired: dict[str, Any], thresholds: Thresholds | float,
                      baseline_gpu: GpuWork | None = None, mode_gpu: GpuWork | None = None
                      ) -> UnprofiledSplit | None:
    """The split of a manifest's ``paired`` block; ``None`` when it has no host issue times
    (schema 1-2 manifests) or its lists are unusable (unequal lengths, non-positive periods).

    ``thresholds``: the bound call's (:func:`bound_call`); a number is
    ``host_bound_max_lag_steps`` with the other thresholds at their defaults.
    ``baseline_gpu`` / ``mode_gpu``: each side's lean-trace GPU work, ``None`` without one."""
    t = (thresholds if isinstance(thresholds, Thresholds)
         else Thresholds(host_bound_max_lag_steps=float(thresholds)))
    base, mode = _floats(paired.get("baseline_block_ms")), _floats(paired.get("mode_block_ms"))
    base_issue = _floats(paired.get("baseline_issue_ms"))
    mode_issue = _floats(paired.get("mode_issue_ms"))
    iters_b, iters_m = _iters(paired.get("iters_baseline")), _iters(paired.get("iters_mode"))
    if (base is None or mode is None or base_issue is None or mode_issue is None
            or iters_b is None or iters_m is None):
        return None
    n = len(base)
    if any(len(a) != n for a in (mode, base_issue, mode_issue)):
        return None
    if (base <= 0).any() or (mode <= 0).any() or (base_issue < 0).any() or (mode_issue < 0).any():
        return None
    level = float(paired.get("level") or DEFAULT_LEVEL)
    resamples = _iters(paired.get("resamples")) or DEFAULT_RESAMPLES
    seed = paired.get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else DEFAULT_SEED
    idx = resample_indices(n, resamples, seed)
    saved, issue_saved = base - mode, base_issue - mode_issue
    saved_est, saved_r = _estimate(saved, idx, level)
    issue_est, issue_r = _estimate(issue_saved, idx, level)
    share = None
    if saved_est.low > 0 or saved_est.high < 0:  # the saving's CI excludes zero
        # A resample whose median saving is 0 divides by the smallest float of the estimate's
        # sign: its share is huge, as it should be, and the CI says so.
        denom = np.where(saved_r == 0, np.copysign(np.finfo(np.float64).tiny, saved_est.value),
                         saved_r)
        share = Estimate(issue_est.value / saved_est.value,
                         *percentile_interval(issue_r / denom, level))
    return UnprofiledSplit(
        baseline=_side(base, base_issue, iters_b, idx, level, t, baseline_gpu),
        mode=_side(mode, mode_issue, iters_m, idx, level, t, mode_gpu),
        saved_ms=saved_est,
        issue_saved_ms=issue_est,
        issue_share=share,
        pairs=n,
        level=level,
        resamples=resamples,
        seed=seed,
        max_lag_steps=t.host_bound_max_lag_steps,
        host_is_device=bool(np.array_equal(base, base_issue) and np.array_equal(mode, mode_issue)),
    )
