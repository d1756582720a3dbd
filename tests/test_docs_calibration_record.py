"""The committed calibration record (``scripts/calibration_facts.py``) matches the simulations'
code: their parameters and scenarios, so a page rendered from it describes what
``python -m tests.calibration`` (and the split and two-run ones) would run."""

from __future__ import annotations

import json
from pathlib import Path

from scripts import calibration_facts as cf
from tests import calibration, run_calibration, split_calibration

RECORD = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
          / "2026-11-28-verdict-calibration-simulated.json")


def test_the_record_has_the_simulations_parameters_and_scenarios() -> None:
    doc = json.loads(RECORD.read_text(encoding="utf-8"))
    speed, split, run = doc["speed"], doc["split"], doc["run"]
    assert (speed["sigma"], speed["min_pairs"], speed["step_pairs"], speed["max_pairs"],
            speed["target_half_width"], speed["min_speedup"]) == (
        calibration.SIGMA_30, calibration.MIN_PAIRS, calibration.STEP_PAIRS,
        calibration.MAX_PAIRS, calibration.TARGET_HALF_WIDTH, calibration.MIN_SPEEDUP)
    assert [{k: v for k, v in s.items() if k in kw} | {"name": s["name"]}
            for s, kw in zip(speed["scenarios"], calibration.SCENARIOS.values(), strict=True)
            ] == [{**kw, "name": n} for n, kw in calibration.SCENARIOS.items()]
    assert (split["iters"], split["max_pairs"]) == (split_calibration.ITERS,
                                                    split_calibration.MAX_PAIRS)
    assert [(s["name"], s["seed"], s["trials"]) for s in split["scenarios"]] == [
        (s.name, s.seed, s.trials) for s in split_calibration.SCENARIOS]
    assert (run["modes"], run["pairs"], run["trials"], run["min_speedup"]) == (
        run_calibration.MODES, run_calibration.PAIRS, run_calibration.TRIALS,
        run_calibration.MIN_SPEEDUP)
    assert [(s["name"], s["block_spread"], s["process_spread"], s["slowdown"])
            for s in run["scenarios"]] == [(s.name, s.block_spread, s.process_spread, s.slowdown)
                                           for s in run_calibration.SCENARIOS]


def test_a_statuses_cell_lists_the_seen_statuses_most_first() -> None:
    assert cf._statuses({"INCONCLUSIVE": 0.99, "WIN": 0.005, "REGRESSION": 0.005,
                         "NO_WIN": 0.0}) == "INCONCLUSIVE 99.0 %, REGRESSION 0.5 %, WIN 0.5 %"
    assert cf._statuses({"WIN": 1.0}) == "WIN 100 %"
