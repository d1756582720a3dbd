"""Calibration of the paired speed verdict (issue 9 item 6) on simulated block times.

Method and the measured rates: ``tests/calibration.py`` and ``docs/comparison.md``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.calibration import SCENARIOS, SIGMA_30, batched_ci, scenario, simulate_blocks
from traceviz.analyze.stats import paired_speedup


def test_simulated_noise_has_a_30_percent_p10_p90_spread() -> None:
    x = np.random.default_rng(0).lognormal(0.0, SIGMA_30, 200_000)
    p10, p50, p90 = np.percentile(x, [10, 50, 90])
    assert (p90 - p10) / p50 == pytest.approx(0.30, abs=0.005)


def test_batched_ci_is_exactly_paired_speedups_ci() -> None:
    base, mode = simulate_blocks(np.random.default_rng(9), 3, 1.1, 0.2)
    for n in (15, 37):
        got = batched_ci(base[:, :n] / mode[:, :n])
        for row, b, m in zip(got, base[:, :n], mode[:, :n], strict=True):
            est = paired_speedup(b, m)
            assert tuple(row) == (est.speedup, est.ci_low, est.ci_high)


def test_identical_modes_rarely_get_a_speed_verdict() -> None:
    o = scenario(**SCENARIOS["identical, 30 % spread"])  # type: ignore[arg-type]
    assert len(o.statuses) == 200
    assert o.rate("WIN", "REGRESSION") <= 0.05


def test_true_15_percent_speed_up_is_a_win_within_100_pairs() -> None:
    o = scenario(**SCENARIOS["true 1.15x speed-up"])  # type: ignore[arg-type]
    assert o.pairs.max() <= 100
    assert o.rate("WIN") >= 0.90


def test_slow_drift_is_cancelled_by_abba_pairing() -> None:
    o = scenario(**SCENARIOS["identical, 20 % drift, ABBA"])  # type: ignore[arg-type]
    assert o.rate("WIN") <= 0.05
    assert o.rate("WIN", "REGRESSION") <= 0.05
    # The same drift without pairing (mode timed first, then the baseline) is a false win in
    # most trials: the simulated drift is strong enough that pairing is what cancels it.
    unpaired = scenario(**SCENARIOS["identical, 20 % drift, unpaired (mode first)"])  # type: ignore[arg-type]
    assert unpaired.rate("WIN") >= 0.5
