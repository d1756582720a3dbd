"""Step-time statistics: percentiles, spread and the noise flag."""

import pytest

from traceviz.collect import timing
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


def test_measure_calls_the_step_for_warmup_estimate_and_every_repeat(monkeypatch):
    monkeypatch.setattr(timing, "WARM_MIN_S", 0.0)
    calls = []
    summary = measure(lambda: calls.append(1), StepClock(cuda=False), warmup=4, repeats=3,
                      min_repeat_ms=0.0, max_iters=10)
    assert summary.repeats == 3
    assert len(calls) == 4 + 3 + 3 * summary.iters_per_repeat


class PeerWantsMore:
    """A lockstep with one peer rank that wants ``peer_iters`` steps per repeat; it logs the
    calls (``step`` for each step, ``barrier`` for each barrier)."""

    def __init__(self, peer_iters: int, log: list[str]) -> None:
        self.peer_iters, self.log = peer_iters, log

    def barrier(self) -> None:
        self.log.append("barrier")

    def gather(self, values: list[float]) -> list[list[float]]:
        return [list(values), [float(self.peer_iters)]]


def test_ranks_time_the_largest_repeat_any_rank_wants_after_a_barrier_each():
    log: list[str] = []
    summary = measure(lambda: log.append("step"), StepClock(cuda=False), warmup=2, repeats=3,
                      min_repeat_ms=0.0, max_iters=10, min_warm_s=0.0,
                      lockstep=PeerWantsMore(7, log))
    assert summary.iters_per_repeat == 7  # this rank alone wants 3 (min_repeat_ms 0)
    timed = log[2 + 3:]
    assert timed == (["barrier"] + ["step"] * 7) * 3


def test_the_warm_up_lasts_the_seconds_asked_for(monkeypatch):
    monkeypatch.setattr(timing, "WARM_MIN_S", 0.0)
    calls = []
    measure(lambda: calls.append(1), StepClock(cuda=False), warmup=1, repeats=1,
            min_repeat_ms=0.0, max_iters=3, min_warm_s=0.05)
    assert len(calls) > 1 + 10 + 3 + 3  # at least one round of 10 more warm-up steps


class FakeClock:
    """``time.perf_counter`` that advances ``tick`` seconds per reading."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_warm_up_runs_exactly_its_steps_when_no_minimum_time_is_asked():
    calls, syncs = [], []
    assert timing.warm(lambda: calls.append(1), 7, lambda: syncs.append(1), min_s=0.0) == 7
    assert (len(calls), len(syncs)) == (7, 1)


def test_warm_up_goes_on_in_tens_until_the_minimum_time_has_passed(monkeypatch):
    monkeypatch.setattr(timing.time, "perf_counter", FakeClock(tick=1.0))
    calls, syncs = [], []
    # elapsed after each sync: 1, 2, 3 s (< 3.5: ten more steps each), then 4 s: stop
    done = timing.warm(lambda: calls.append(1), 3, lambda: syncs.append(1), min_s=3.5)
    assert done == len(calls) == 3 + 30
    assert len(syncs) == 1 + 3


def test_warm_up_uses_the_module_minimum_by_default(monkeypatch):
    monkeypatch.setattr(timing.time, "perf_counter", FakeClock(tick=1.0))
    monkeypatch.setattr(timing, "WARM_MIN_S", 1.5)
    calls = []
    assert timing.warm(lambda: calls.append(1), 1, lambda: None) == 1 + 10


def test_the_minimum_warm_up_time_applies_on_cuda_only():
    assert timing.warm_min_s(cuda=True) == timing.WARM_MIN_S > 0
    assert timing.warm_min_s(cuda=False) == 0.0
