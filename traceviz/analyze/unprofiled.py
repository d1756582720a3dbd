"""The unprofiled host/GPU split: where the time went, from the paired blocks alone.

No profiler runs while the paired blocks are timed (:mod:`traceviz.collect.paired`), so their
numbers are the step as the user runs it. Each block of ``n`` steps records, per step in ms:

* ``period``: the device's time per step (CUDA events around the block);
* ``issue``: the host's issue time per step (``perf_counter_ns`` from just before the first
  call to the return of the last, before the block's synchronize).

Definitions (``docs/comparison.md``, "The unprofiled split"):

* **lag** of a block = ``n × (1 − issue / period)``, in steps: how far the GPU was still behind
  the host when the block's last call returned (the period is the issue time plus the work
  still queued then).
* a side (the baseline's blocks, or the mode's) is **host-bound** when the median lag of its
  blocks is at most ``max_lag_steps`` (the threshold ``host_bound_max_lag_steps``, 1 step): the
  GPU finished within one step of the host, so the host's issue set the pace. Equivalently,
  issue per step ≥ period per step × (1 − max_lag_steps / n). Otherwise it is **GPU-bound**,
  and its issue time is an upper bound of what the host needed: once about a thousand launches
  are queued (:data:`LAUNCH_QUEUE_DEPTH`), the host waits for the queue, and that wait is in
  the issue time.
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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from traceviz.analyze.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    resample_indices,
)

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


@dataclass(frozen=True)
class Side:
    """One side of the pairs (baseline or mode), per step in ms (medians over the pairs)."""

    period_ms: float
    issue_ms: float
    iters: int  # steps per block
    lag_steps: Estimate  # median lag of the side's blocks (module doc)
    host_bound: bool


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
          max_lag_steps: float) -> Side:
    lag = iters * (1.0 - issue / period)
    lag_est, _ = _estimate(lag, idx, level)
    return Side(float(np.median(period)), float(np.median(issue)), iters, lag_est,
                lag_est.value <= max_lag_steps)


def _iters(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def split_from_paired(paired: dict[str, Any], max_lag_steps: float) -> UnprofiledSplit | None:
    """The split of a manifest's ``paired`` block; ``None`` when it has no host issue times
    (schema 1-2 manifests) or its lists are unusable (unequal lengths, non-positive periods)."""
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
        baseline=_side(base, base_issue, iters_b, idx, level, max_lag_steps),
        mode=_side(mode, mode_issue, iters_m, idx, level, max_lag_steps),
        saved_ms=saved_est,
        issue_saved_ms=issue_est,
        issue_share=share,
        pairs=n,
        level=level,
        resamples=resamples,
        seed=seed,
        max_lag_steps=max_lag_steps,
        host_is_device=bool(np.array_equal(base, base_issue) and np.array_equal(mode, mode_issue)),
    )
