"""Step-time statistics: percentiles, spread and the noise flag."""

import pytest

from traceviz.collect.timing import (
    NOISY_SPREAD,
    StepClock,
    iterations_for,
    measure,
    percentile,
    summarize,
)


def test_percentile_interpolates_between_neighbours():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 10) == pytest.approx(1.4)
    assert percentile(values, 90) == pytest.approx(4.6)
    assert percentile([7.0], 90) == 7.0


def test_tight_repeats_are_not_noisy():
    summary = summarize([1.00, 1.01, 0.99, 1.00, 1.02], iters_per_repeat=50)
    assert summary.median_ms == 1.00
    assert summary.spread < NOISY_SPREAD
    assert not summary.noisy
    assert summary.to_dict()["iters_per_repeat"] == 50


def test_wide_repeats_are_flagged_noisy():
    summary = summarize([1.0, 1.5, 1.0, 2.0, 1.1], iters_per_repeat=10)
    assert summary.noisy
    assert summary.p10_ms <= summary.median_ms <= summary.p90_ms


def test_repeats_are_sized_to_last_at_least_the_minimum():
    assert iterations_for(0.01, min_repeat_ms=100, max_iters=2000) == 2000
    assert iterations_for(2.0, min_repeat_ms=100, max_iters=2000) == 50
    assert iterations_for(500.0, min_repeat_ms=100, max_iters=2000) == 3


def test_measure_calls_the_step_for_warmup_estimate_and_every_repeat():
    calls = []
    summary = measure(lambda: calls.append(1), StepClock(cuda=False), warmup=4, repeats=3,
                      min_repeat_ms=0.0, max_iters=10)
    assert summary.repeats == 3
    assert len(calls) == 4 + 3 + 3 * summary.iters_per_repeat
