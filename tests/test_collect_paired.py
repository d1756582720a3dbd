"""Paired A/B timing: ABBA order, stopping rules and drift cancellation.

The clock here is a deterministic stand-in for :class:`~traceviz.collect.timing.StepClock`: it
returns a known per-step time for whichever step it is asked to time, optionally drifting with
the block's position in the run, so each answer is known by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from traceviz.collect.paired import PairedSettings, measure_paired
from traceviz.collect.timing import BlockTime


def baseline() -> str:
    return "A"


def mode() -> str:
    return "B"


class ScriptedClock:
    """Times ``baseline`` as ``base_ms`` and ``mode`` as ``mode_ms`` per step; each timed block
    (not the 3-step size estimates) is multiplied by ``1 + drift * block_index``. The host issue
    time of a block is ``issue_share`` of its period."""

    def __init__(self, base_ms: float, mode_ms: float, drift: float = 0.0,
                 issue_share: float = 0.5) -> None:
        self.base_ms, self.mode_ms, self.drift = base_ms, mode_ms, drift
        self.issue_share = issue_share
        self.blocks: list[str] = []

    def time_ms(self, call: Callable[[], Any], iters: int) -> float:
        return self.time_block(call, iters).period_ms

    def time_block(self, call: Callable[[], Any], iters: int) -> BlockTime:
        value = self.base_ms if call() == "A" else self.mode_ms
        if iters == 3:  # the block-size estimate
            return BlockTime(value, value * self.issue_share)
        factor = 1.0 + self.drift * len(self.blocks)
        self.blocks.append(call())
        return BlockTime(value * factor, value * factor * self.issue_share)


class Ticker:
    """A monotonic clock advancing ``step_s`` per read."""

    def __init__(self, step_s: float) -> None:
        self.t, self.step_s = 0.0, step_s

    def __call__(self) -> float:
        self.t += self.step_s
        return self.t


def settings(**kw: Any) -> PairedSettings:
    return PairedSettings(**{"warmup": 0, "min_repeat_ms": 10.0, **kw})


def test_blocks_alternate_in_abba_order():
    clock = ScriptedClock(2.0, 1.0)
    measure_paired(baseline, mode, clock, settings(), now=Ticker(0.0))
    assert clock.blocks[:8] == list("ABBAABBA")


def test_constant_times_converge_at_the_minimum_pair_count():
    clock = ScriptedClock(2.0, 1.0)
    out = measure_paired(baseline, mode, clock, settings(min_pairs=15), now=Ticker(0.0))
    assert out["stopped"] == "converged"
    assert out["pairs"] == 15
    assert out["speedup"] == out["ci_low"] == out["ci_high"] == 2.0
    assert out["baseline_block_ms"] == [2.0] * 15 and out["mode_block_ms"] == [1.0] * 15
    assert out["iters_baseline"] == 5 and out["iters_mode"] == 10  # >= 10 ms per block


def test_a_spent_budget_stops_before_the_minimum_pair_count():
    clock = ScriptedClock(2.0, 1.0)
    out = measure_paired(baseline, mode, clock, settings(budget_s=1.0), now=Ticker(0.6))
    assert out["stopped"] == "budget"
    assert out["pairs"] == 2  # never fewer than 2 pairs


def test_max_pairs_caps_a_run_that_never_converges():
    clock = ScriptedClock(2.0, 1.0, drift=0.05)  # drift keeps the CI wide
    out = measure_paired(
        baseline, mode, clock,
        settings(min_pairs=4, max_pairs=9, target_half_width=1e-9), now=Ticker(0.0),
    )
    assert out["stopped"] == "max_pairs"
    assert out["pairs"] == 9


def test_abba_order_cancels_a_linear_drift():
    # 1 % slower per block: an AB-only order would bias every pair's ratio the same way.
    clock = ScriptedClock(1.5, 1.0, drift=0.01)
    out = measure_paired(baseline, mode, clock, settings(min_pairs=40, max_pairs=40),
                         now=Ticker(0.0))
    assert out["speedup"] == pytest.approx(1.5, rel=0.005)
    assert out["ci_low"] <= 1.5 <= out["ci_high"]


def test_each_block_records_its_host_issue_time_beside_its_period():
    clock = ScriptedClock(2.0, 1.0, issue_share=0.25)
    out = measure_paired(baseline, mode, clock, settings(min_pairs=4, max_pairs=4),
                         now=Ticker(0.0))
    assert out["baseline_issue_ms"] == [0.5] * 4
    assert out["mode_issue_ms"] == [0.25] * 4
    assert len(out["baseline_issue_ms"]) == len(out["baseline_block_ms"]) == out["pairs"]


class TwoRanks:
    """A :class:`~traceviz.collect.paired.Lockstep` of this rank (0) and a scripted rank 1
    whose blocks are ``peer_extra_ms`` longer and whose host issue is ``peer_issue_share`` of
    its block time."""

    def __init__(self, peer_extra_ms: float, peer_issue_share: float) -> None:
        self.extra, self.share = peer_extra_ms, peer_issue_share

    def barrier(self) -> None:
        pass

    def gather(self, values: list[float]) -> list[list[float]]:
        if len(values) == 2:  # steps per block
            return [values, values]
        a, b = values[0] + self.extra, values[2] + self.extra
        return [values, [a, a * self.share, b, b * self.share, values[4]]]


def test_lockstep_keeps_every_ranks_issue_time_and_the_slowest_ranks_as_the_blocks():
    # rank 0: 2.0 / 1.0 ms blocks, issue 25 %; rank 1 is 0.5 ms slower, issue 90 %: rank 1's
    # block and issue time are the block's, and both ranks' issue times are kept
    out = measure_paired(baseline, mode, ScriptedClock(2.0, 1.0, issue_share=0.25),
                         settings(min_pairs=4, max_pairs=4), now=Ticker(0.0),
                         lockstep=TwoRanks(0.5, 0.9))
    assert out["baseline_block_ms"] == [2.5] * 4 and out["mode_block_ms"] == [1.5] * 4
    assert out["baseline_issue_ms"] == pytest.approx([2.25] * 4)
    assert out["rank_baseline_issue_ms"] == [pytest.approx([0.5, 2.25])] * 4
    assert out["rank_mode_issue_ms"] == [pytest.approx([0.25, 1.35])] * 4
    assert out["slowest_rank_blocks"] == {"1": 8}
