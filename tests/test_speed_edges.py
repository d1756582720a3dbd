"""Edges of the speed evidence and the baseline-drift flag (``traceviz/analyze/speed.py``;
docs/comparison.md): which recorded numbers a paired block must have to be used as recorded,
what the evidence of each source carries, and which baseline block times count.
"""

from __future__ import annotations

from typing import Any

import pytest

from traceviz.analyze.speed import (
    PAIRED,
    TRACE,
    UNPAIRED,
    BaselineDrift,
    Timing,
    baseline_drift,
    speed_evidence,
)
from traceviz.analyze.stats import paired_speedup

BASE_BLOCKS = [2.0, 2.2, 2.1, 2.05]
MODE_BLOCKS = [1.0, 1.0, 1.1, 1.0]


def _mode(paired: dict[str, Any] | None = None, **timing: float | None) -> Timing:
    return Timing(timing.get("median_ms"), timing.get("p10_ms"), timing.get("p90_ms"),
                  timing.get("period_ms"), paired)


BASE = Timing(2.0, 1.9, 2.2, 4.0, None)


def test_a_complete_recorded_paired_estimate_is_used_as_recorded() -> None:
    p = {"baseline": "eager", "speedup": 1.5, "ci_low": 1.4, "ci_high": 1.6, "level": 0.9,
         "pairs": 12, "stopped": "budget"}
    ev = speed_evidence(_mode(p), BASE, "eager")
    assert ev.as_evidence() == {"evidence_source": PAIRED, "speedup": 1.5, "ci_low": 1.4,
                                "ci_high": 1.6, "level": 0.9, "pairs": 12, "stopped": "budget"}


@pytest.mark.parametrize("missing", ["speedup", "ci_low", "ci_high"])
def test_a_paired_estimate_missing_any_summary_number_is_recomputed_from_the_blocks(
        missing: str) -> None:
    p = {"baseline": "eager", "speedup": 9.0, "ci_low": 8.0, "ci_high": 10.0,
         "baseline_block_ms": BASE_BLOCKS, "mode_block_ms": MODE_BLOCKS}
    del p[missing]
    est = paired_speedup(BASE_BLOCKS, MODE_BLOCKS)
    ev = speed_evidence(_mode(p), BASE, "eager")
    assert (ev.source, ev.speedup, ev.ci_low, ev.ci_high, ev.level, ev.pairs) == (
        PAIRED, est.speedup, est.ci_low, est.ci_high, est.level, est.pairs)


def test_a_recorded_estimate_without_level_or_pairs_reads_95_percent_and_no_count() -> None:
    p = {"baseline": "eager", "speedup": 1.5, "ci_low": 1.4, "ci_high": 1.6, "pairs": "12"}
    ev = speed_evidence(_mode(p), BASE, "eager")
    assert (ev.level, ev.pairs, ev.stopped) == (0.95, None, None)


@pytest.mark.parametrize("blocks", [
    {"baseline_block_ms": [], "mode_block_ms": MODE_BLOCKS},
    {"baseline_block_ms": BASE_BLOCKS, "mode_block_ms": {"0": 1.0}},
    {"baseline_block_ms": {"0": 2.0}, "mode_block_ms": {"0": 1.0}},
    {"baseline_block_ms": BASE_BLOCKS},
])
def test_a_paired_block_without_usable_block_lists_falls_back_with_a_note(
        blocks: dict[str, Any]) -> None:
    ev = speed_evidence(_mode({"baseline": "eager", **blocks}, median_ms=1.0, p10_ms=0.9,
                              p90_ms=1.1), BASE, "eager")
    assert ev.as_evidence() == {
        "evidence_source": UNPAIRED, "speedup": 2.0, "step_time_ms": [2.0, 1.0],
        "p10_ms": [1.9, 0.9], "p90_ms": [2.2, 1.1],
        "note": "paired block has no usable estimate"}


def test_trace_evidence_carries_the_two_profiled_periods() -> None:
    ev = speed_evidence(_mode(period_ms=1.0), BASE, "eager")
    assert ev.as_evidence() == {"evidence_source": TRACE, "speedup": 4.0,
                                "profiled_period_ms": [4.0, 1.0]}


@pytest.mark.parametrize("bad", [[], [2.0, 0.0], [2.0, -1.0], [2.0, float("nan")], "2.0"])
def test_drift_needs_positive_finite_baseline_block_times(bad: Any) -> None:
    assert baseline_drift({"baseline_block_ms": bad}, BASE, 0.05) is None
    drift = baseline_drift({"baseline_block_ms": [2.0, 3.0, 10.0]}, BASE, 0.05)
    assert drift is not None and (drift.in_pairs_ms, drift.own_ms) == (3.0, 2.0)


def test_drift_sentence_writes_small_times_with_four_decimals_from_below_0_1_ms() -> None:
    slow = BaselineDrift(in_pairs_ms=0.1, own_ms=0.0449, own_p10_ms=0.04, own_p90_ms=0.05,
                         margin=0.05)
    assert slow.drifted
    assert slow.sentence("eager").startswith(
        "the eager baseline ran 0.100 ms/step inside this mode's process vs 0.0449 in its own "
        "(+123 %)")
    assert slow.sentence("eager").endswith("the speed-up is relative to a slowed baseline")


def test_a_drift_of_exactly_no_change_is_not_called_slowed() -> None:
    same = BaselineDrift(in_pairs_ms=2.0, own_ms=2.0, own_p10_ms=2.5, own_p90_ms=3.0,
                         margin=0.05)
    assert same.drifted and same.change == 0
    assert same.sentence("eager").endswith(
        "the speed-up is relative to a baseline faster than on its own")


def test_an_empty_paired_block_is_no_paired_block() -> None:
    ev = speed_evidence(_mode({}, median_ms=1.0, p10_ms=0.9, p90_ms=1.1), BASE, "eager")
    assert (ev.source, ev.note) == (UNPAIRED, "")


def test_each_source_needs_both_numbers_and_keeps_why_better_ones_were_not_used() -> None:
    failed = {"error": "CUDA out of memory"}
    ev = speed_evidence(_mode(failed, period_ms=2.0), Timing(None, None, None, 4.0, None),
                        "eager")
    assert ev.as_evidence() == {"evidence_source": TRACE, "speedup": 2.0,
                                "profiled_period_ms": [4.0, 2.0],
                                "note": "paired timing failed (CUDA out of memory)"}
    only_base = speed_evidence(_mode(period_ms=2.0), Timing(2.0, 1.9, 2.1, 4.0, None), "eager")
    assert only_base.source == TRACE  # the mode has no unprofiled median
    only_mode = speed_evidence(_mode(median_ms=1.0, period_ms=2.0),
                               Timing(None, None, None, 4.0, None), "eager")
    assert only_mode.source == TRACE  # the baseline has none
    none = speed_evidence(_mode(period_ms=2.0), Timing(None, None, None, None, None), "eager")
    assert (none.source, none.speedup) == ("none", None)
    none = speed_evidence(_mode(), Timing(None, None, None, 4.0, None), "eager")
    assert (none.source, none.speedup) == ("none", None)
