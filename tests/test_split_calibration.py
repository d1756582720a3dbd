"""The launch and fusion verdicts on the unprofiled split, calibrated on simulated blocks
(seeded, CPU only; method in :mod:`tests.split_calibration` and ``docs/comparison.md``)."""

from __future__ import annotations

import pytest

from tests.split_calibration import SCENARIOS, run


def rate(counts, *statuses: str) -> float:
    return sum(counts[s] for s in statuses) / sum(counts.values())


@pytest.mark.parametrize("scenario", SCENARIOS[:2], ids=lambda s: s.name)
def test_a_host_bound_baseline_whose_mode_cuts_issue_time_is_a_launch_win(scenario):
    launch, fusion = run(scenario)
    assert rate(launch, "WIN") >= 0.95, launch
    assert rate(fusion, "WIN") == 0, fusion  # same kernels: nothing was fused


def test_a_gpu_bound_baseline_whose_mode_cuts_busy_is_a_fusion_win_and_no_launch_win():
    launch, fusion = run(SCENARIOS[2])
    assert rate(fusion, "WIN") >= 0.95, fusion
    assert rate(launch, "NO_WIN") >= 0.95, launch


@pytest.mark.parametrize("scenario", SCENARIOS[3:], ids=lambda s: s.name)
def test_equal_modes_get_neither_verdict(scenario):
    launch, fusion = run(scenario)
    assert rate(launch, "WIN") <= 0.05, launch
    assert rate(fusion, "WIN") <= 0.05, fusion
