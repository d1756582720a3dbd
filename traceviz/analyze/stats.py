"""Paired A/B timing statistics: the speed-up of a mode over its baseline, with a bootstrap CI.

A **pair** is one timed block of the baseline and one timed block of the mode, run back to back
in one process (their order alternates, ABBA, so slow drift of clocks, temperature or the host
lands on both sides equally). Each block's value is its mean time per step in milliseconds.

* pair ratio = baseline block ms / mode block ms (``> 1``: the mode is faster);
* ``speedup`` = the median of the pair ratios;
* its confidence interval is a percentile bootstrap of that median: ``resamples`` resamples of
  the pairs with replacement (numpy ``default_rng(seed)``, so the same data give the same CI),
  the interval between the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
  resampled medians.

The method and its measured error rates are in ``docs/comparison.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

#: Defaults of the paired estimate (``docs/comparison.md``).
DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class SpeedupEstimate:
    """Median paired speed-up (baseline time / mode time) and its bootstrap CI."""

    speedup: float
    ci_low: float
    ci_high: float
    level: float
    pairs: int
    resamples: int
    seed: int

    @property
    def half_width(self) -> float:
        """Half the CI's width relative to the speed-up (0.05 = "± 5 %")."""
        if self.speedup <= 0:
            return float("inf")
        return (self.ci_high - self.ci_low) / 2.0 / self.speedup

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the manifest's ``paired`` keys), ``half_width`` included."""
        return {**asdict(self), "half_width": self.half_width}


def pair_ratios(baseline_ms: Sequence[float], mode_ms: Sequence[float]) -> np.ndarray:
    """Per-pair ``baseline / mode`` ratios; both sequences hold one value per pair (> 0)."""
    base = np.asarray(baseline_ms, dtype=np.float64)
    mode = np.asarray(mode_ms, dtype=np.float64)
    if base.shape != mode.shape or base.ndim != 1:
        raise ValueError("baseline and mode need one block time per pair, in equal numbers")
    if base.size == 0:
        raise ValueError("no pairs")
    if not (np.isfinite(base).all() and np.isfinite(mode).all()) or (base <= 0).any() or (
        mode <= 0
    ).any():
        raise ValueError("block times must be finite and positive")
    return base / mode


def resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap's resamples of ``n`` pairs: a ``(resamples, n)`` array of pair indices
    drawn with replacement by ``default_rng(seed)``. Every statistic bootstrapped from the same
    ``(n, resamples, seed)`` uses the same resamples (the speed-up and the unprofiled split:
    :mod:`traceviz.analyze.compare.unprofiled`)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(estimates: np.ndarray, level: float) -> tuple[float, float]:
    """The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of resampled estimates."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(estimates, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_median_ci(
    values: np.ndarray, *, level: float, resamples: int, seed: int
) -> tuple[float, float]:
    """Percentile-bootstrap CI of the median of ``values`` (see module doc)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    idx = resample_indices(len(values), resamples, seed)
    return percentile_interval(np.median(values[idx], axis=1), level)


def paired_speedup(
    baseline_ms: Sequence[float],
    mode_ms: Sequence[float],
    *,
    level: float = DEFAULT_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> SpeedupEstimate:
    """The median paired speed-up of ``mode`` over ``baseline`` with its bootstrap CI."""
    ratios = pair_ratios(baseline_ms, mode_ms)
    low, high = bootstrap_median_ci(ratios, level=level, resamples=resamples, seed=seed)
    return SpeedupEstimate(
        speedup=float(np.median(ratios)),
        ci_low=low,
        ci_high=high,
        level=level,
        pairs=len(ratios),
        resamples=resamples,
        seed=seed,
    )
