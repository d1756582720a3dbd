"""Edges of the speed evidence and the baseline-drift flag (``traceviz/analyze/compare/speed.py``;
docs/comparison.md): which recorded numbers a paired block must have to be used as recorded,
what the evidence of each source carries, and which baseline block times count.
"""

from __future__ import annotations

from typing import Any

import pytest

from traceviz.analyze.compare.speed import (
    PAIRED,
    TRACE,
    UNPAIRED,
    BaselineDrift,
    SpeedEvidence,
    Timing,
    baseline_drift,
    describe,
    speed_evidence,
    speed_status,
    speed_verdict,
)
from traceviz.analyze.stats import paired_speedup
from traceviz.analyze.verdicts import Thresholds

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
    none = speed_evidence(_mode(failed), Timing(None, None, None, None, None), "eager")
    assert (none.source, none.note) == ("none", "paired timing failed (CUDA out of memory)")


APART = ("modes timed in separate processes minutes apart, so drift between the runs lands in "
         "the comparison")
OVERLAP = f"the p10–p90 ranges overlap or the change is within ±25 %; {APART}"


def _unpaired(speedup: float, b10: float = 1.5, b90: float = 1.8, m10: float = 0.9,
              m90: float = 1.0) -> SpeedEvidence:
    return SpeedEvidence(UNPAIRED, speedup, baseline_ms=1.6, mode_ms=1.6 / speedup,
                         baseline_p10_ms=b10, baseline_p90_ms=b90, mode_p10_ms=m10,
                         mode_p90_ms=m90)


@pytest.mark.parametrize(("ev", "status", "why"), [
    (_unpaired(1.25), "WIN", f"the mode's p90 is below the baseline's p10 ({APART})"),
    (_unpaired(1.25, m90=1.5), "INCONCLUSIVE", OVERLAP),  # p90 equal to p10: overlap
    (_unpaired(1.24), "INCONCLUSIVE", OVERLAP),  # below 1 + 25 %
    (_unpaired(0.75, m10=2.0, m90=2.2), "REGRESSION",
     f"the mode's p10 is above the baseline's p90 ({APART})"),
    (_unpaired(0.75, b90=2.0, m10=2.0, m90=2.2), "INCONCLUSIVE", OVERLAP),
    (_unpaired(0.76, m10=2.0, m90=2.2), "INCONCLUSIVE", OVERLAP),
    (_unpaired(0.5, m10=1.0), "INCONCLUSIVE", OVERLAP),  # slower, but the ranges overlap
    (SpeedEvidence(UNPAIRED, 1.3, baseline_ms=1.3, mode_ms=1.0), "INCONCLUSIVE",
     f"no p10–p90 recorded; {APART}"),
], ids=["win_at_1_plus_margin", "p90_equal_p10", "below_margin", "regression_at_1_minus_margin",
        "p10_equal_p90", "above_1_minus_margin", "slower_overlapping", "no_percentiles"])
def test_unpaired_rule_edges(ev: SpeedEvidence, status: str, why: str) -> None:
    assert speed_status(ev, 0.25, 2.0) == (status, why)


INFLATION = ("within 2× either way the profiler's inflation can explain the change (no "
             "unprofiled timing)")


@pytest.mark.parametrize(("speedup", "inflation", "status", "why"), [
    (2.0, 2.0, "INCONCLUSIVE", INFLATION),
    (2.5, 2.0, "WIN", "the profiled period fell more than 2×, beyond what profiler inflation "
                      "alone can produce"),
    (0.5, 2.0, "INCONCLUSIVE", INFLATION),
    (0.25, 2.0, "REGRESSION", "the profiled period rose more than 2×, beyond what profiler "
                              "inflation alone can produce"),
    (1.0, 0.5, "INCONCLUSIVE", "within 0.5× either way the profiler's inflation can explain the "
                               "change (no unprofiled timing)"),
    (0.625, 1.5, "REGRESSION", "the profiled period rose more than 1.5×, beyond what profiler "
                               "inflation alone can produce"),
])
def test_trace_rule_needs_more_than_the_inflation_and_never_wins_unless_lower(
        speedup: float, inflation: float, status: str, why: str) -> None:
    ev = SpeedEvidence(TRACE, speedup, baseline_ms=2.0, mode_ms=2.0 / speedup)
    assert speed_status(ev, 0.25, inflation) == (status, why)


@pytest.mark.parametrize(("low", "high", "why"), [
    (1.0, 1.125, "the whole CI lies within ±25 % of 1"),
    (1.0625, 1.125, "statistically different from 1 but within ±25 %"),
    (0.875, 1.0, "the whole CI lies within ±25 % of 1"),
    (0.875, 0.9375, "statistically different from 1 but within ±25 %"),
])
def test_a_paired_no_win_says_whether_the_ci_excludes_1(low: float, high: float,
                                                        why: str) -> None:
    ev = SpeedEvidence(PAIRED, (low + high) / 2, low, high, 0.95, 10)
    assert speed_status(ev, 0.25, 2.0) == ("NO_WIN", why)


def test_without_any_speed_number_the_status_is_inconclusive() -> None:
    assert speed_status(SpeedEvidence("none", None), 0.25, 2.0) == (
        "INCONCLUSIVE", "no step timing and no profiled period to compare")


@pytest.mark.parametrize(("ev", "text"), [
    (SpeedEvidence("none", None), "speed not measured"),
    (SpeedEvidence("none", None, note="paired timing failed (x)"),
     "speed not measured (paired timing failed (x))"),
    (SpeedEvidence(PAIRED, 1.0, 0.9375, 1.0625, None, None),
     "no change (1.00×) (95 % CI 0.94–1.06)"),
    (SpeedEvidence(PAIRED, 0.8, 0.75, 0.875, 0.9, 12),
     "1.25× slower (speed-up 0.80, 90 % CI 0.75–0.88, 12 pairs)"),
    (SpeedEvidence(PAIRED, 1.5, 1.25, 1.75, 0.95, 0), "1.50× faster (95 % CI 1.25–1.75)"),
    (_unpaired(1.25), "1.25× faster by unpaired medians (1.600 → 1.280 ms/step, timed in "
                      "separate processes)"),
    (SpeedEvidence(TRACE, 2.5, baseline_ms=2.0, mode_ms=0.8),
     "2.50× faster (profiled) — median GPU period 2.000 → 0.800 ms/step"),
])
def test_the_outcome_in_words(ev: SpeedEvidence, text: str) -> None:
    assert describe(ev) == text


def test_any_other_source_with_a_number_is_inconclusive() -> None:
    assert speed_status(SpeedEvidence("none", 1.5), 0.25, 2.0) == (
        "INCONCLUSIVE", "no step timing and no profiled period to compare")


def test_the_speed_verdict_says_why_each_limit_and_note_applies() -> None:
    ev = SpeedEvidence(PAIRED, 1.5, 1.25, 1.75, 0.95, 12, "max_pairs", note="n1")
    drift = BaselineDrift(2.5, 2.0, 1.9, 2.1, 0.1)
    v = speed_verdict("compile", "eager", ev, Thresholds(), ("a", "b"), drift)
    assert (v.mode, v.kind, v.status) == ("compile", "speed", "WIN")
    assert v.thresholds == {"min_speedup": 0.03, "baseline_drift_margin": 0.1}
    assert v.explanation == (
        "1.50× faster (95 % CI 1.25–1.75, 12 pairs): the whole CI is above 1 + 3 %; pairing "
        "stopped at its pair limit before the CI narrowed to its target; n1; the eager baseline "
        "ran 2.500 ms/step inside this mode's process vs 2.000 in its own (+25 %), outside its "
        "own p10–p90 widened by 10 % (1.710–2.310): the speed-up is relative to a slowed "
        "baseline; context: a; b")
    assert v.evidence == {
        "baseline": "eager", "evidence_source": "paired", "speedup": 1.5, "ci_low": 1.25,
        "ci_high": 1.75, "level": 0.95, "pairs": 12, "stopped": "max_pairs", "note": "n1",
        "outcome": "1.50× faster (95 % CI 1.25–1.75, 12 pairs)", "context": ["a", "b"],
        "baseline_drift": drift.as_evidence()}
    budget = SpeedEvidence(PAIRED, 1.5, 1.25, 1.75, 0.95, 12, "budget")
    assert speed_verdict("compile", "eager", budget, Thresholds()).explanation.endswith(
        "; pairing stopped at its time budget before the CI narrowed to its target")
    converged = SpeedEvidence(PAIRED, 1.5, 1.25, 1.75, 0.95, 12, "converged")
    steady = BaselineDrift(2.0, 2.0, 1.9, 2.1, 0.1)  # inside the band: not flagged
    v = speed_verdict("compile", "eager", converged, Thresholds(), (), steady)
    assert v.explanation == (
        "1.50× faster (95 % CI 1.25–1.75, 12 pairs): the whole CI is above 1 + 3 %")
    assert v.thresholds == {"min_speedup": 0.03, "baseline_drift_margin": 0.1}


def test_only_the_trace_rule_uses_the_inflation_threshold() -> None:
    ev = SpeedEvidence(TRACE, 2.5, baseline_ms=2.0, mode_ms=0.8)
    v = speed_verdict("compile", "eager", ev, Thresholds())
    assert v.thresholds == {"min_speedup": 0.03, "max_profiler_inflation": 2.0}
    assert v.evidence == {"baseline": "eager", "evidence_source": "trace", "speedup": 2.5,
                          "profiled_period_ms": [2.0, 0.8],
                          "outcome": "2.50× faster (profiled) — median GPU period 2.000 → 0.800 "
                                     "ms/step",
                          "context": []}
