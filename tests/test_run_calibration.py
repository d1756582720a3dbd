"""The two-run verdict on simulated runs (seeded, CPU only; method in tests/run_calibration.py
and docs/comparison.md, "Two runs")."""

from __future__ import annotations

from tests.run_calibration import QUIET, QUIET_SLOWER, TRIALS, run_scenario


def test_two_runs_of_the_same_code_are_unchanged_for_every_mode_in_95_percent() -> None:
    res = run_scenario(QUIET)
    for mode, counts in res.items():
        assert counts["unchanged"] / TRIALS >= 0.95, (mode, counts)
        assert counts["slower"] + counts["faster"] == 0, (mode, counts)


def test_a_true_1_2x_slowdown_of_one_mode_is_found_in_90_percent() -> None:
    res = run_scenario(QUIET_SLOWER)
    assert res["m0"]["slower"] / TRIALS >= 0.90, res["m0"]
    for mode, counts in res.items():
        if mode != "m0":
            assert counts["slower"] + counts["faster"] == 0, (mode, counts)
