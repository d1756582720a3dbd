"""Edges of the fusion and launch rules on the profiled-trace and unprofiled paths
(``traceviz/analyze/verdicts.py``; docs/comparison.md), called directly on per-step inputs built
by hand: each status at both sides of its threshold (inclusive edges at equality), and the
one-line explanation each branch gives, pinned word for word.

Thresholds: the defaults but ``fusion_min_kernel_drop = 0.25``, so that 20 → 15 kernels is a
drop of exactly 0.25 in binary floating point (20 → 16 is 0.19999999999999996, not 0.2: see
docs/reliability.md, "Mutation testing").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from traceviz.analyze.verdicts import (
    THRESHOLD_RANGES,
    PeriodChange,
    Range,
    Thresholds,
    Verdict,
    VerdictInputs,
    fusion_verdict,
    launch_verdict,
    parse_thresholds,
    relative_drop,
    verdicts_for,
)
from traceviz.errors import UsageError

T = Thresholds(fusion_min_kernel_drop=0.25)


def inp(mode: str = "compile", **kw: Any) -> VerdictInputs:
    """Per-step medians of one mode: 20 kernels and launches, 100 µs busy ± 2 µs, 50 µs host
    wait, 200 µs period, 150 µs CPU; override what a case moves."""
    values: dict[str, Any] = dict(
        mode=mode, kernels=20, activities=20, launches=20, gpu_busy_ns=100_000,
        busy_spread_ns=2_000, host_wait_ns=50_000, period_ns=200_000, cpu_ns=150_000,
        input_copies=0, input_copy_ns=0, correctness_ok=True, inflation=None, top_family=None,
        top_family_share=None)
    values.update(kw)
    return VerdictInputs(**values)


def speed(status: str, source: str = "paired") -> Verdict:
    return Verdict("compile", "speed", status,
                   {"evidence_source": source, "outcome": "1.50× faster"}, {}, "")


FUSION_CASES = [
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'WIN', {},
        'WIN',
        ('medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs '
          '(-2%; step-to-step spread ±2.0 µs)'),
        id='fused_busy_fell_and_speed_win_is_a_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999, correctness_ok=None),
        {}, 'WIN', {},
        'WIN',
        ('medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs '
          '(-2%; step-to-step spread ±2.0 µs) (outputs not checked: no manifest)'),
        id='unchecked_outputs_are_said'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'NO_WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels and GPU busy fell, but the step did not get faster (speed '
          'NO_WIN: 1.50× faster) (medians over steps: kernels/step 20 → 15 (-25%), GPU '
          'busy/step 100.0 → 98.0 µs (-2%; step-to-step spread ±2.0 µs))'),
        id='fused_but_speed_no_win_is_no_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'INCONCLUSIVE', {},
        'NO_WIN',
        ('fused 20 → 15 kernels and GPU busy fell, but the profiled period did not fall '
          '(200.0 → 200.0 µs) (medians over steps: kernels/step 20 → 15 (-25%), GPU '
          'busy/step 100.0 → 98.0 µs (-2%; step-to-step spread ±2.0 µs))'),
        id='fused_without_stopwatch_win_and_equal_period_is_no_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999, period_ns=199_999),
        {}, 'INCONCLUSIVE', {},
        'WIN',
        ('medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs '
          '(-2%; step-to-step spread ±2.0 µs)'),
        id='fused_without_stopwatch_win_and_1ns_shorter_period_is_a_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'INCONCLUSIVE', dict(unprofiled_saved_ns=8_004),
        'INCONCLUSIVE',
        ('fused and GPU busy fell, but the stopwatch cannot tell whether the step got '
          'faster (speed INCONCLUSIVE: 1.50× faster) (medians over steps: kernels/step 20 → '
          '15 (-25%), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step spread ±2.0 µs))'),
        id='unprofiled_rules_need_a_speed_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'WIN', dict(unprofiled_saved_ns=8_004),
        'WIN',
        ('2.0 µs/step of GPU busy saved (median) is 25% of the 8.0 µs/step saved without '
          'the profiler (pair-level median): fusion paid (medians over steps: kernels/step '
          '20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step spread ±2.0 µs))'),
        id='unprofiled_busy_share_exactly_at_the_threshold_wins'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'WIN', dict(unprofiled_saved_ns=8_005, rules_note='x'),
        'NO_WIN',
        ('kernels fused and GPU busy fell, but 2.0 µs/step of GPU busy saved (median) is '
          '25% of the 8.0 µs/step saved without the profiler (pair-level median) (at least '
          '25% needed): the step got faster on the host side, not through less GPU work '
          '(medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs '
          '(-2%; step-to-step spread ±2.0 µs)) (x)'),
        id='unprofiled_busy_share_just_below_is_no_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'WIN', dict(unprofiled_saved_ns=0),
        'INCONCLUSIVE',
        ('no unprofiled step time saved to compare with (medians over steps: kernels/step '
          '20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step spread ±2.0 µs))'),
        id='unprofiled_without_time_saved_is_inconclusive'),
    pytest.param(
        dict(kernels=16, activities=16, gpu_busy_ns=90_000),
        {}, 'WIN', {},
        'NO_WIN',
        ('kernel count fell 20.0%, short of the 25% drop that fusion needs (medians over '
          'steps: kernels/step 20 → 16 (-20%), GPU busy/step 100.0 → 90.0 µs (-10%; '
          'step-to-step spread ±2.0 µs))'),
        id='kernel_drop_short_of_the_threshold_is_no_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=98_000),
        {}, 'WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels but GPU busy fell 2%, within its step-to-step spread '
          '(medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs '
          '(-2%; step-to-step spread ±2.0 µs))'),
        id='kernel_drop_exactly_at_the_threshold_with_busy_saved_equal_to_spread_is_no_win'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=101_000),
        {}, 'WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels but GPU busy rose 1% (medians over steps: kernels/step 20 →'
          ' 15 (-25%), GPU busy/step 100.0 → 101.0 µs (+1%; step-to-step spread ±2.0 µs))'),
        id='fused_with_busy_risen_within_spread_is_no_win'),
    pytest.param(
        dict(gpu_busy_ns=102_000, activities=21),
        {}, 'WIN', {},
        'NO_WIN',
        ('kernel count unchanged, so nothing was fused; 1 more memcpy/memset activities per'
          ' step than the baseline (medians over steps: kernels/step 20 → 20 (±0%), GPU '
          'busy/step 100.0 → 102.0 µs (+2%; step-to-step spread ±2.0 µs))'),
        id='unchanged_count_with_busy_at_spread_is_no_regression'),
    pytest.param(
        dict(kernels=25, activities=25, gpu_busy_ns=101_000, input_copies=2,
             input_copy_ns=1_234_567),
        {}, 'WIN', {},
        'NO_WIN',
        ('kernel count rose 25.0%; CUDA graphs add 2 input-copy activities per step '
          '(1,234.6 µs/step) (medians over steps: kernels/step 20 → 25 (+25%), GPU busy/step'
          ' 100.0 → 101.0 µs (+1%; step-to-step spread ±2.0 µs))'),
        id='risen_count_names_input_copies'),
    pytest.param(
        dict(activities=22, gpu_busy_ns=102_001),
        {}, 'NO_WIN', {},
        'REGRESSION',
        ('GPU busy time per step rose beyond its spread (kernel count not lower, so nothing'
          ' was fused; 2 more memcpy/memset activities per step than the baseline): medians '
          'over steps: kernels/step 20 → 20 (±0%), GPU busy/step 100.0 → 102.0 µs (+2%; '
          'step-to-step spread ±2.0 µs)'),
        id='busy_beyond_spread_without_fusion_is_a_regression'),
    pytest.param(
        dict(activities=22, gpu_busy_ns=102_001, input_copies=1, input_copy_ns=1500),
        {}, 'WIN', {},
        'NO_WIN',
        ('GPU busy time per step rose beyond its spread (kernel count not lower, so nothing'
          ' was fused; CUDA graphs add 1 input-copy activity per step (1.5 µs/step)), but '
          'the step is faster overall (speed WIN: 1.50× faster): medians over steps: '
          'kernels/step 20 → 20 (±0%), GPU busy/step 100.0 → 102.0 µs (+2%; step-to-step '
          'spread ±2.0 µs)'),
        id='busy_beyond_spread_in_a_faster_step_is_no_win'),
    pytest.param(
        dict(gpu_busy_ns=180_000, top_family='gemm', top_family_share=0.75),
        dict(gpu_busy_ns=180_000), 'NO_WIN', {},
        'NO_WIN',
        ('GPU-bound (gemm kernels take 75% of GPU time): GPU busy is 90% of the period, '
          'removing launch overhead can save at most 10%; kernel count unchanged, so nothing'
          ' was fused (medians over steps: kernels/step 20 → 20 (±0%), GPU busy/step 180.0 →'
          ' 180.0 µs (±0%; step-to-step spread ±2.0 µs))'),
        id='gpu_bound_at_the_share_says_so'),
    pytest.param(
        dict(gpu_busy_ns=179_999, top_family='gemm', top_family_share=0.75),
        dict(gpu_busy_ns=179_999), 'NO_WIN', {},
        'NO_WIN',
        ('kernel count unchanged, so nothing was fused (medians over steps: kernels/step 20'
          ' → 20 (±0%), GPU busy/step 180.0 → 180.0 µs (±0%; step-to-step spread ±2.0 µs))'),
        id='gpu_bound_just_below_the_share_is_not_said'),
    pytest.param(
        dict(gpu_busy_ns=180_000),
        dict(gpu_busy_ns=180_000), 'NO_WIN', {},
        'NO_WIN',
        ('GPU-bound: GPU busy is 90% of the period, removing launch overhead can save at '
          'most 10%; kernel count unchanged, so nothing was fused (medians over steps: '
          'kernels/step 20 → 20 (±0%), GPU busy/step 180.0 → 180.0 µs (±0%; step-to-step '
          'spread ±2.0 µs))'),
        id='gpu_bound_without_a_top_family'),
    pytest.param(
        dict(gpu_busy_ns=180_000, period_ns=0),
        dict(gpu_busy_ns=180_000), 'NO_WIN', {},
        'NO_WIN',
        ('kernel count unchanged, so nothing was fused (medians over steps: kernels/step 20'
          ' → 20 (±0%), GPU busy/step 180.0 → 180.0 µs (±0%; step-to-step spread ±2.0 µs))'),
        id='no_period_is_never_gpu_bound'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999, correctness_ok=False),
        {}, 'WIN', {},
        'INCONCLUSIVE',
        ('outputs do not match the baseline, so no speed claim stands; medians over steps: '
          'kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step '
          'spread ±2.0 µs)'),
        id='mismatched_outputs_are_inconclusive'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        dict(kernels=0), 'WIN', {},
        'INCONCLUSIVE',
        ('the baseline has no GPU work per step to compare against; medians over steps: '
          'kernels/step 0 → 15 (n/a), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step '
          'spread ±2.0 µs)'),
        id='a_baseline_without_kernels_is_inconclusive'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=250_000, input_copies=3,
             input_copy_ns=1_234_567),
        dict(gpu_busy_ns=1_000_000, period_ns=2_000_000, busy_spread_ns=123_456), 'WIN',
             dict(unprofiled_saved_ns=1_000_000),
        'WIN',
        ('750.0 µs/step of GPU busy saved (median) is 75% of the 1,000.0 µs/step saved '
          'without the profiler (pair-level median): fusion paid (medians over steps: '
          'kernels/step 20 → 15 (-25%), GPU busy/step 1,000.0 → 250.0 µs (-75%; step-to-step'
          ' spread ±123.5 µs))'),
        id='large_numbers_print_to_a_tenth_of_a_us'),
    pytest.param(
        dict(gpu_busy_ns=1, period_ns=1),
        dict(gpu_busy_ns=1), 'NO_WIN', {},
        'NO_WIN',
        ('GPU-bound: GPU busy is 100% of the period, removing launch overhead can save at '
          'most 0%; kernel count unchanged, so nothing was fused (medians over steps: '
          'kernels/step 20 → 20 (±0%), GPU busy/step 0.0 → 0.0 µs (±0%; step-to-step spread '
          '±2.0 µs))'),
        id='a_one_ns_period_is_judged_for_gpu_bound'),
    pytest.param(
        dict(gpu_busy_ns=181_100, top_family_share=0.75),
        dict(gpu_busy_ns=181_100), 'NO_WIN', {},
        'NO_WIN',
        ('GPU-bound: GPU busy is 91% of the period, removing launch overhead can save at '
          'most 9%; kernel count unchanged, so nothing was fused (medians over steps: '
          'kernels/step 20 → 20 (±0%), GPU busy/step 181.1 → 181.1 µs (±0%; step-to-step '
          'spread ±2.0 µs))'),
        id='a_share_without_a_family_names_none'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=97_999),
        {}, 'WIN', dict(unprofiled_saved_ns=1),
        'WIN',
        ('2.0 µs/step of GPU busy saved (median) is 200100% of the 0.0 µs/step saved '
          'without the profiler (pair-level median): fusion paid (medians over steps: '
          'kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 98.0 µs (-2%; step-to-step '
          'spread ±2.0 µs))'),
        id='a_1ns_unprofiled_saving_is_a_saving'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=99_999, busy_spread_ns=0),
        dict(busy_spread_ns=0), 'WIN', {},
        'WIN',
        ('medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 100.0 µs '
          '(±0%; step-to-step spread ±0.0 µs)'),
        id='busy_saved_by_1ns_beyond_a_zero_spread_fell'),
    pytest.param(
        dict(activities=22, gpu_busy_ns=102_001),
        dict(activities=21), 'NO_WIN', {},
        'REGRESSION',
        ('GPU busy time per step rose beyond its spread (kernel count not lower, so nothing'
          ' was fused; 1 more memcpy/memset activities per step than the baseline): medians '
          'over steps: kernels/step 20 → 20 (±0%), GPU busy/step 100.0 → 102.0 µs (+2%; '
          'step-to-step spread ±2.0 µs)'),
        id='extra_copies_count_against_the_baselines_copies'),
    pytest.param(
        dict(gpu_busy_ns=102_001),
        {}, 'NO_WIN', {},
        'REGRESSION',
        ('GPU busy time per step rose beyond its spread (kernel count not lower, so nothing'
          ' was fused): medians over steps: kernels/step 20 → 20 (±0%), GPU busy/step 100.0 '
          '→ 102.0 µs (+2%; step-to-step spread ±2.0 µs)'),
        id='a_regression_without_extra_copies_names_none'),
    pytest.param(
        dict(kernels=15, activities=15),
        {}, 'WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels but GPU busy fell 0%, within its step-to-step spread '
          '(medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 100.0 → 100.0 µs '
          '(±0%; step-to-step spread ±2.0 µs))'),
        id='fused_with_unchanged_busy_fell_0_percent'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=170_000, busy_spread_ns=80_000),
        {}, 'WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels but GPU busy rose 70% (medians over steps: kernels/step 20 '
          '→ 15 (-25%), GPU busy/step 100.0 → 170.0 µs (+70%; step-to-step spread ±80.0 µs))'),
        id='fused_with_busy_risen_70_percent'),
    pytest.param(
        dict(kernels=15, activities=15, gpu_busy_ns=0),
        dict(gpu_busy_ns=1), 'WIN', {},
        'NO_WIN',
        ('fused 20 → 15 kernels but GPU busy fell 100%, within its step-to-step spread '
          '(medians over steps: kernels/step 20 → 15 (-25%), GPU busy/step 0.0 → 0.0 µs '
          '(-100%; step-to-step spread ±2.0 µs))'),
        id='a_1ns_baseline_busy_moves_100_percent'),
    pytest.param(
        dict(kernels=16, activities=18, gpu_busy_ns=90_000, input_copies=1, input_copy_ns=2_000),
        dict(activities=21), 'WIN', {},
        'NO_WIN',
        ('kernel count fell 20.0%, short of the 25% drop that fusion needs; CUDA graphs add'
          ' 1 input-copy activity per step (2.0 µs/step) (medians over steps: kernels/step '
          '20 → 16 (-20%), GPU busy/step 100.0 → 90.0 µs (-10%; step-to-step spread ±2.0 '
          'µs))'),
        id='one_input_copy_is_named'),
    pytest.param(
        dict(kernels=16, activities=18, gpu_busy_ns=90_000),
        dict(activities=21), 'WIN', {},
        'NO_WIN',
        ('kernel count fell 20.0%, short of the 25% drop that fusion needs; 1 more '
          'memcpy/memset activities per step than the baseline (medians over steps: '
          'kernels/step 20 → 16 (-20%), GPU busy/step 100.0 → 90.0 µs (-10%; step-to-step '
          'spread ±2.0 µs))'),
        id='extra_copies_are_counted_against_the_baselines_in_a_no_win'),
]

LAUNCH_CASES = [
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'paired', (20_000, 10_000, 0), '',
        'WIN',
        ('host + sync wait explain 50% of the period saved: launch overhead removed (speed '
          'WIN: 1.50× faster) (medians over steps: launches/step 20 → 1 (-95%), '
          'host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled period saved 20.0'
          ' µs/step, by host + sync wait 10.0 µs/step)'),
        id='wait_share_exactly_at_the_threshold_wins'),
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'paired', (20_000, 9_999, 0), 'no split',
        'NO_WIN',
        ('speed WIN: 1.50× faster, but host + sync wait explain only 50% of the period '
          'saved (at least 50% needed): the time came from elsewhere; host wait unchanged '
          '(±0%) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → '
          '50.0 µs (±0%); means over steps: profiled period saved 20.0 µs/step, by host + '
          'sync wait 10.0 µs/step; no split)'),
        id='wait_share_just_below_is_no_win'),
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'trace', (20_000, -1_000, 0), '',
        'INCONCLUSIVE',
        ('speed WIN: 1.50× faster, but host + sync wait explain only 0% of the period saved'
          ' (at least 50% needed): the time came from elsewhere; host wait unchanged (±0%) '
          '(medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → 50.0 µs '
          '(±0%); means over steps: profiled period saved 20.0 µs/step, by host + sync wait '
          '-1.0 µs/step)'),
        id='on_plain_traces_a_short_share_is_inconclusive'),
    pytest.param(
        dict(launches=1, inflation=2.5),
        {}, 'WIN', 'paired', (0, 0, 0), '',
        'INCONCLUSIVE',
        ('speed WIN: 1.50× faster, but the profiled period did not fall (profiler inflation'
          ' 2.5×), so the trace cannot say where the time went (medians over steps: '
          'launches/step 20 → 1 (-95%), host_wait/step 50.0 → 50.0 µs (±0%); means over '
          'steps: profiled period saved 0.0 µs/step, by host + sync wait 0.0 µs/step)'),
        id='a_win_whose_period_did_not_fall_cannot_attribute'),
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'paired', (-1, 0, 0), '',
        'INCONCLUSIVE',
        ('speed WIN: 1.50× faster, but the profiled period did not fall, so the trace '
          'cannot say where the time went (medians over steps: launches/step 20 → 1 (-95%), '
          'host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled period saved -0.0'
          ' µs/step, by host + sync wait 0.0 µs/step)'),
        id='without_inflation_nothing_is_said_of_it'),
    pytest.param(
        dict(launches=1),
        {}, 'REGRESSION', 'paired', (-20_000, -10_000, 0), '',
        'REGRESSION',
        ('speed REGRESSION: 1.50× faster, and host + sync wait grew by 10.0 µs/step, 50% of'
          ' the period added; host wait unchanged (±0%) (medians over steps: launches/step '
          '20 → 1 (-95%), host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled '
          'period saved -20.0 µs/step, by host + sync wait -10.0 µs/step)'),
        id='regression_with_wait_share_at_the_threshold'),
    pytest.param(
        dict(launches=1),
        {}, 'REGRESSION', 'paired', (-20_000, -9_999, 0), '',
        'NO_WIN',
        ('speed REGRESSION: 1.50× faster, not from launch overhead; host wait unchanged '
          '(±0%) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → '
          '50.0 µs (±0%); means over steps: profiled period saved -20.0 µs/step, by host + '
          'sync wait -10.0 µs/step)'),
        id='regression_with_wait_share_below_is_not_from_launches'),
    pytest.param(
        dict(launches=1),
        {}, 'REGRESSION', 'trace', (0, -5, 0), '',
        'INCONCLUSIVE',
        ('speed REGRESSION: 1.50× faster, not from launch overhead; host wait unchanged '
          '(±0%) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → '
          '50.0 µs (±0%); means over steps: profiled period saved 0.0 µs/step, by host + '
          'sync wait -0.0 µs/step)'),
        id='regression_with_no_period_added_on_traces_is_inconclusive'),
    pytest.param(
        dict(launches=1, host_wait_ns=45_001),
        {}, 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; host wait unchanged (-10%) (medians over steps: '
          'launches/step 20 → 1 (-95%), host_wait/step 50.0 → 45.0 µs (-10%); means over '
          'steps: profiled period saved 0.0 µs/step, by host + sync wait 0.0 µs/step)'),
        id='host_wait_within_10_percent_is_unchanged'),
    pytest.param(
        dict(launches=1, host_wait_ns=44_999),
        {}, 'INCONCLUSIVE', 'paired', (0, 0, 0), '',
        'INCONCLUSIVE',
        ('speed INCONCLUSIVE: 1.50× faster; host wait fell 10% under the profiler, which '
          'the stopwatch does not confirm as a speed-up (medians over steps: launches/step '
          '20 → 1 (-95%), host_wait/step 50.0 → 45.0 µs (-10%); means over steps: profiled '
          'period saved 0.0 µs/step, by host + sync wait 0.0 µs/step)'),
        id='host_wait_beyond_10_percent_fell'),
    pytest.param(
        dict(launches=1, host_wait_ns=60_000),
        {}, 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; under the profiler the step is CPU-bound: CPU time '
          'per step 150.0 µs vs GPU busy 100.0 µs, so the GPU waits for Python / dispatch '
          'between launches rather than for the launches (medians over steps: launches/step '
          '20 → 1 (-95%), host_wait/step 50.0 → 60.0 µs (+20%); means over steps: profiled '
          'period saved 0.0 µs/step, by host + sync wait 0.0 µs/step)'),
        id='more_host_wait_and_cpu_above_busy_is_cpu_bound'),
    pytest.param(
        dict(launches=1, host_wait_ns=60_000, cpu_ns=100_000),
        {}, 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; launch overhead did not clearly fall (medians over '
          'steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → 60.0 µs (+20%); means '
          'over steps: profiled period saved 0.0 µs/step, by host + sync wait 0.0 µs/step)'),
        id='more_host_wait_and_cpu_equal_to_busy_is_not'),
    pytest.param(
        dict(launches=1, input_copies=1, input_copy_ns=1000, host_wait_ns=20_000),
        {}, 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; CUDA graphs add 1 input-copy activity per step (1.0 '
          "µs/step) and the CPU time per step (150.0 µs) is not below the baseline's (150.0 "
          'µs) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → 20.0 '
          'µs (-60%); means over steps: profiled period saved 0.0 µs/step, by host + sync '
          'wait 0.0 µs/step)'),
        id='input_copies_and_cpu_not_below_the_baseline'),
    pytest.param(
        dict(launches=1, input_copies=1, input_copy_ns=1000, cpu_ns=149_999, host_wait_ns=20_000),
        {}, 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; CUDA graphs add 1 input-copy activity per step (1.0 '
          'µs/step) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → '
          '20.0 µs (-60%); means over steps: profiled period saved 0.0 µs/step, by host + '
          'sync wait 0.0 µs/step)'),
        id='input_copies_and_cpu_below_the_baseline'),
    pytest.param(
        dict(launches=1),
        dict(host_wait_ns=0, gpu_busy_ns=180_000), 'NO_WIN', 'paired', (0, 0, 0), '',
        'NO_WIN',
        ('speed NO_WIN: 1.50× faster; the baseline has no host wait to remove; baseline '
          'GPU-bound: GPU busy is 90% of the period, removing launch overhead can save at '
          'most 10% (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 0.0 → '
          '50.0 µs (n/a); means over steps: profiled period saved 0.0 µs/step, by host + '
          'sync wait 0.0 µs/step)'),
        id='a_baseline_without_host_wait_and_gpu_bound'),
    pytest.param(
        dict(launches=1, correctness_ok=False),
        {}, 'WIN', 'paired', (20_000, 10_000, 0), '',
        'INCONCLUSIVE',
        ('outputs do not match the baseline (medians over steps: launches/step 20 → 1 '
          '(-95%), host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled period '
          'saved 20.0 µs/step, by host + sync wait 10.0 µs/step)'),
        id='mismatched_outputs_are_inconclusive'),
    pytest.param(
        dict(launches=1),
        dict(host_wait_ns=123_456), 'WIN', 'paired', (123_456, 98_765, 0), '',
        'WIN',
        ('host + sync wait explain 80% of the period saved: launch overhead removed (speed '
          'WIN: 1.50× faster) (medians over steps: launches/step 20 → 1 (-95%), '
          'host_wait/step 123.5 → 50.0 µs (-59%); means over steps: profiled period saved '
          '123.5 µs/step, by host + sync wait 98.8 µs/step)'),
        id='large_numbers_print_to_a_tenth_of_a_us'),
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'paired', (1, 1, 0), '',
        'WIN',
        ('host + sync wait explain 100% of the period saved: launch overhead removed (speed'
          ' WIN: 1.50× faster) (medians over steps: launches/step 20 → 1 (-95%), '
          'host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled period saved 0.0 '
          'µs/step, by host + sync wait 0.0 µs/step)'),
        id='a_one_ns_saving_is_attributed'),
    pytest.param(
        dict(launches=1),
        {}, 'WIN', 'paired', (20_000, 9_890, 0), '',
        'NO_WIN',
        ('speed WIN: 1.50× faster, but host + sync wait explain only 49% of the period '
          'saved (at least 50% needed): the time came from elsewhere; host wait unchanged '
          '(±0%) (medians over steps: launches/step 20 → 1 (-95%), host_wait/step 50.0 → '
          '50.0 µs (±0%); means over steps: profiled period saved 20.0 µs/step, by host + '
          'sync wait 9.9 µs/step)'),
        id='a_share_printed_to_the_percent'),
    pytest.param(
        dict(launches=1),
        {}, 'REGRESSION', 'paired', (-1, -1, 0), '',
        'REGRESSION',
        ('speed REGRESSION: 1.50× faster, and host + sync wait grew by 0.0 µs/step, 100% of'
          ' the period added; host wait unchanged (±0%) (medians over steps: launches/step '
          '20 → 1 (-95%), host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled '
          'period saved -0.0 µs/step, by host + sync wait -0.0 µs/step)'),
        id='a_1ns_period_added_by_wait_is_a_regression'),
    pytest.param(
        dict(launches=1),
        {}, 'REGRESSION', 'paired', (-123_456, -98_765, 0), '',
        'REGRESSION',
        ('speed REGRESSION: 1.50× faster, and host + sync wait grew by 98.8 µs/step, 80% of'
          ' the period added; host wait unchanged (±0%) (medians over steps: launches/step '
          '20 → 1 (-95%), host_wait/step 50.0 → 50.0 µs (±0%); means over steps: profiled '
          'period saved -123.5 µs/step, by host + sync wait -98.8 µs/step)'),
        id='a_regression_with_large_numbers'),
]


@pytest.mark.parametrize(
    ("mode", "base", "speed_status", "extra", "status", "explanation"), FUSION_CASES)
def test_fusion_rule_edge(mode: dict[str, Any], base: dict[str, Any], speed_status: str,
                          extra: dict[str, Any], status: str, explanation: str) -> None:
    v = fusion_verdict(inp(**mode), inp("eager", **base), speed(speed_status), T, **extra)
    assert (v.mode, v.kind, v.status, v.explanation) == ("compile", "fusion", status, explanation)


@pytest.mark.parametrize(
    ("mode", "base", "speed_status", "source", "change", "note", "status", "explanation"),
    LAUNCH_CASES)
def test_launch_rule_edge(mode: dict[str, Any], base: dict[str, Any], speed_status: str,
                          source: str, change: tuple[float, float, float], note: str,
                          status: str, explanation: str) -> None:
    v = launch_verdict(inp(**mode), inp("eager", **base), speed(speed_status, source),
                       PeriodChange(*change), T, note)
    assert (v.mode, v.kind, v.status, v.explanation) == ("compile", "launch", status, explanation)


def test_fusion_evidence_and_thresholds_on_both_rule_sets() -> None:
    mode = inp(kernels=15, activities=15, gpu_busy_ns=97_999, context=("1 graph break", "x"))
    v = fusion_verdict(mode, inp("eager"), speed("WIN"), T)
    assert v.thresholds == {"fusion_min_kernel_drop": 0.25, "gpu_bound_busy_share": 0.9}
    assert v.evidence == {
        "baseline": "eager", "rules": "profiled-trace", "unprofiled_saved_us": None,
        "busy_share_of_saved": None, "evidence_source": "paired", "kernels_per_step": [20, 15],
        "kernel_drop": 0.25, "gpu_busy_us_per_step": [100.0, 97.999],
        "busy_drop": relative_drop(100_000, 97_999), "busy_spread_us": 2.0,
        "profiled_period_us": [200.0, 200.0], "speed": "WIN", "correctness_ok": True,
        "context": ["1 graph break", "x"]}
    assert v.explanation.endswith("; context: 1 graph break; x")
    u = fusion_verdict(mode, inp("eager", busy_spread_ns=1_000), speed("WIN"), T,
                       unprofiled_saved_ns=8_004)
    assert u.thresholds == {"fusion_min_kernel_drop": 0.25, "gpu_bound_busy_share": 0.9,
                            "fusion_min_busy_share": 0.25}
    assert (u.evidence["rules"], u.evidence["unprofiled_saved_us"],
            u.evidence["busy_share_of_saved"], u.evidence["busy_spread_us"]) == (
        "unprofiled", 8.004, 0.25, 2.0)


def test_launch_evidence_and_thresholds() -> None:
    v = launch_verdict(inp(launches=1, host_wait_ns=40_000, inflation=1.5),
                       inp("eager"), speed("WIN"), PeriodChange(20_000, 10_000, 4_000), T)
    assert v.thresholds == {"launch_min_wait_share": 0.5, "max_profiler_inflation": 2.0,
                            "gpu_bound_busy_share": 0.9}
    assert v.evidence == {
        "baseline": "eager", "rules": "profiled-trace", "evidence_source": "paired",
        "speed": "WIN", "launches_per_step": [20, 1], "launch_drop": 0.95,
        "host_wait_us_per_step": [50.0, 40.0], "host_wait_drop": relative_drop(50_000, 40_000),
        "period_saved_us": 20.0, "wait_saved_us": 10.0, "busy_saved_us": 4.0,
        "wait_share_of_saved": 0.5, "profiler_inflation": 1.5, "correctness_ok": True,
        "context": []}


def test_verdicts_for_gives_fusion_then_launch_with_the_rules_note() -> None:
    fusion, launch = verdicts_for(inp(launches=1), inp("eager"), speed("NO_WIN"),
                                  PeriodChange(0, 0, 0), T, "no split")
    assert (fusion.kind, launch.kind) == ("fusion", "launch")
    assert fusion.explanation.endswith(" (no split)")
    assert launch.explanation.endswith("; no split)")


def test_relative_drop_of_a_zero_baseline_is_none() -> None:
    assert relative_drop(0, 5) is None
    assert relative_drop(4, 3) == 0.25


@pytest.mark.parametrize(("value", "inside"), [
    (0.0, True), (1.0, False), (0.999, True), (-0.001, False), (True, False), ("0.5", False),
    (float("nan"), False), (float("inf"), False)])
def test_a_range_holds_finite_numbers_between_its_edges(value: object, inside: bool) -> None:
    assert (value in THRESHOLD_RANGES["min_speedup"]) is inside


def test_ranges_print_in_interval_notation() -> None:
    assert [str(Range(0, 1, True, False, "")), str(Range(0, 1, False, True, "")),
            str(Range(1, float("inf"), True, False, "")),
            str(Range(1, float("inf"), True, True, ""))] == ["[0, 1)", "(0, 1]", "[1, ∞)",
                                                            "[1, ∞)"]
    assert 1.0 in Range(0, 1, False, True, "") and 0 not in Range(0, 1, False, True, "")


@pytest.mark.parametrize(("overrides", "message"), [
    (["min_speedup=0.1=2"], "threshold min_speedup: '0.1=2' is not a number"),
    (["min_speedup"], "--threshold 'min_speedup': expected name=value"),
    (["nope=1", "zzz=2"], "unknown threshold(s) nope, zzz; known: min_speedup, "
     "fusion_min_kernel_drop, launch_min_wait_share, gpu_bound_busy_share, "
     "max_profiler_inflation, host_bound_max_lag_steps, fusion_min_busy_share, "
     "baseline_drift_margin, block_tail_allowance_us, gpu_bound_min_compute_share, "
     "straggler_min_share, straggler_min_host_share"),
    (["fusion_min_busy_drop=0.1", "time_noise_k=2"],
     "threshold fusion_min_busy_drop no longer exists: GPU busy must fall by more than its "
     "step-to-step spread; threshold time_noise_k no longer exists: the speed verdict uses the "
     "paired CI and min_speedup (see docs/comparison.md)"),
])
def test_threshold_overrides_are_refused_in_one_line_that_says_why(
        overrides: list[str], message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_thresholds(overrides)
    assert str(err.value) == message


@pytest.mark.parametrize(("name", "text", "message"), [
    ("a.toml", "[thresholds]\nmin_speedup = 'x'\n", "threshold min_speedup: 'x' is not a number"),
    ("b.json", "[1, 2]", "threshold config {path}: expected a table of name = number"),
    ("c.json", "{bad", "threshold config {path}: Expecting property name enclosed in double "
     "quotes: line 1 column 2 (char 1)"),
    ("d.toml", None, "threshold config {path}: No such file or directory"),
])
def test_threshold_files_are_refused_in_one_line_that_says_why(
        tmp_path: Path, name: str, text: str | None, message: str) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        parse_thresholds(None, path)
    assert str(err.value) == message.format(path=path)


def test_a_threshold_file_may_be_a_bare_table_and_overrides_win(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("min_speedup = 0.05\nfusion_min_kernel_drop = 0.3\n", encoding="utf-8")
    t = parse_thresholds(["min_speedup = 0.07"], path)
    assert (t.min_speedup, t.fusion_min_kernel_drop, t.launch_min_wait_share) == (0.07, 0.3, 0.5)


def test_a_busy_share_short_of_a_higher_threshold_says_the_threshold() -> None:
    t = Thresholds(fusion_min_kernel_drop=0.25, fusion_min_busy_share=0.8)
    v = fusion_verdict(inp(kernels=15, activities=15, gpu_busy_ns=250_000),
                       inp("eager", gpu_busy_ns=1_000_000, period_ns=2_000_000), speed("WIN"), t,
                       unprofiled_saved_ns=1_000_000)
    assert (v.status, v.explanation) == ("NO_WIN", (
        "kernels fused and GPU busy fell, but 750.0 µs/step of GPU busy saved (median) is 75% "
        "of the 1,000.0 µs/step saved without the profiler (pair-level median) (at least 80% "
        "needed): the step got faster on the host side, not through less GPU work (medians "
        "over steps: kernels/step 20 → 15 (-25%), GPU busy/step 1,000.0 → 250.0 µs (-75%; "
        "step-to-step spread ±2.0 µs))"))


def test_without_a_rules_note_nothing_is_appended() -> None:
    change = PeriodChange(20_000, 10_000, 0)
    launch = launch_verdict(inp(launches=1), inp("eager"), speed("WIN"), change, T)
    assert launch.explanation.endswith("by host + sync wait 10.0 µs/step)")
    fusion, launch = verdicts_for(inp(launches=1), inp("eager"), speed("WIN"), change, T)
    assert fusion.explanation.endswith("spread ±2.0 µs))")
    assert launch.explanation.endswith("by host + sync wait 10.0 µs/step)")


def test_a_speed_verdict_without_an_outcome_is_named_by_its_status() -> None:
    bare = Verdict("compile", "speed", "NO_WIN", {"evidence_source": "paired"}, {}, "")
    v = launch_verdict(inp(launches=1), inp("eager"), bare, PeriodChange(0, 0, 0), T)
    assert v.explanation.startswith("speed NO_WIN; host wait unchanged (±0%)")


def test_the_wait_share_threshold_is_printed_to_the_percent() -> None:
    t = Thresholds(launch_min_wait_share=0.75)
    v = launch_verdict(inp(launches=1), inp("eager"), speed("WIN"),
                       PeriodChange(20_000, 10_000, 0), t)
    assert "explain only 50% of the period saved (at least 75% needed)" in v.explanation


@pytest.mark.parametrize(("drop", "kernels", "fused"), [
    (0.2, 16, True),  # 1 − 16/20 = 0.19999999999999996 in binary floating point
    (0.2, 17, False),
    (0.15, 17, True),  # 1 − 17/20 = 0.15000000000000002
    (0.35, 13, True),  # 1 − 13/20 = 0.35 (0.35000000000000003)
])
def test_an_exact_kernel_drop_reaches_its_threshold_despite_float_rounding(
        drop: float, kernels: int, fused: bool) -> None:
    v = fusion_verdict(inp(kernels=kernels, activities=kernels, gpu_busy_ns=50_000),
                       inp("eager"), speed("WIN"), Thresholds(fusion_min_kernel_drop=drop))
    assert (v.status != "NO_WIN" or "not fused" not in v.explanation) if fused else True
    assert ("kernel count" not in v.explanation and "drop that fusion needs"
            not in v.explanation) is fused
