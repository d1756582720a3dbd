"""The calibration scorer: what it counts as right, wrong and out of bounds (no profiling)."""

from __future__ import annotations

from benchmarks.calibration.cells import Cell, dist_cells, rebuilt, single_cells
from benchmarks.calibration.run import wait_for_load
from benchmarks.calibration.score import expectation, expected_step_ns, named_straggler, score

X_NS = 100_000.0
HOST50 = Cell("host50-200us", "host50", 200.0, 1, {"m": 8, "k": 1}, {"m": 8, "k": 1,
              "spin_ns": X_NS}, {"host_ns": X_NS, "gpu_ns": 0.0}, 200_000.0)
#: A 20 µs-target cell as one H100 ran it: a 9.6 µs busy-wait on a host-bound 32 µs step.
SHORT = Cell("host50-20us", "host50", 20.0, 1, {"m": 8, "k": 1}, {"m": 8, "k": 1,
             "spin_ns": 9_559}, {"host_ns": 9_559.0, "gpu_ns": 0.0}, 19_117.0,
             old_cost={"host_ns": 28_000.0, "gpu_ns": 7_400.0})
PROBE = {"bases": {"20.0": {"m": 8, "k": 2, "predicted_ns": 40_000.0}},
         "effects": {"20.0": {"rep": {"host_ns": 20_000.0, "gpu_ns": 5_000.0},
                              "tail_chain": {"host_ns": 80_000.0, "gpu_ns": 20_000.0},
                              "tail_fused": {"host_ns": 18_000.0, "gpu_ns": 4_000.0}}}}


def _rec(delta_ns: float, verdict: str, old_ns: float = 200_000.0, **parts: object) -> dict:
    return {"status": "ok", "verdict": verdict, "old_ns": old_ns, "new_ns": old_ns + delta_ns,
            "delta_step_ns": delta_ns, "old_host_issue_ns": old_ns, "old_gpu_busy_ns": 0.0,
            **parts}


def test_cpu_host_effect_within_a_quarter_passes_and_outside_misses_with_the_part() -> None:
    assert score(HOST50, "eager", "cpu", _rec(0.8 * X_NS, "slower")).passed
    miss = score(HOST50, "eager", "cpu", _rec(0.6 * X_NS, "slower"))
    assert not miss.passed and miss.checks == {"direction": True, "size": False,
                                               "bounded": True}
    assert "delta_step_ns" in miss.reasons[0]


def test_a_change_called_in_the_wrong_direction_misses() -> None:
    s = score(HOST50, "eager", "cpu", _rec(X_NS, "unchanged"))
    assert s.checks["direction"] is False and "expected slower" in s.reasons[0]


def test_a_change_under_the_size_floor_but_far_above_the_verdict_threshold_must_be_called(
        ) -> None:
    rec = dict(_rec(10_549.0, "slower", old_ns=32_110.0, host_issue_ns=11_082.0),
               old_host_issue_ns=32_432.0, old_gpu_busy_ns=4_544.0)
    assert score(SHORT, "eager", "cuda", rec).checks["direction"] is True
    unchanged = score(SHORT, "eager", "cuda", {**rec, "verdict": "unchanged"})
    assert unchanged.checks["direction"] is False
    assert "expected slower" in unchanged.reasons[0]


def test_an_expected_change_near_the_verdict_threshold_accepts_either_side_of_it() -> None:
    rec = _rec(2_000.0, "slower", old_ns=60_000.0, host_issue_ns=2_000.0)
    tiny = Cell("host10-60us", "host10", 60.0, 1, {}, {}, {"host_ns": 1_700.0, "gpu_ns": 0.0},
                60_000.0)  # 1.7 µs ± 25 % straddles 3 % of 60 µs (1.8 µs)
    assert score(tiny, "eager", "cpu", rec).checks["direction"] is True
    assert score(tiny, "eager", "cpu", {**rec, "verdict": "unchanged"}).checks["direction"]
    assert score(tiny, "eager", "cpu", {**rec, "verdict": "faster"}).checks["direction"] is False


def test_the_expected_step_uses_the_runs_own_old_side_and_the_probe_only_where_it_is_missing(
        ) -> None:
    exp = expectation(SHORT, "eager", "cuda")
    measured = {"old_host_issue_ns": 32_000.0, "old_gpu_busy_ns": 40_000.0}
    assert expected_step_ns(exp, measured, "cuda", SHORT.old_cost) == 1_559.0
    assert expected_step_ns(exp, {}, "cuda", SHORT.old_cost) == 9_559.0
    assert expected_step_ns(exp, {"old_gpu_busy_ns": 35_000.0}, "cuda",
                            SHORT.old_cost) == 2_559.0


def test_a_profiled_part_is_bounded_by_its_traces_profiled_period_not_the_unprofiled_step(
        ) -> None:
    rec = _rec(-258.0, "inconclusive", old_ns=32_100.0, host_issue_ns=401.0,
               own_old_ns=21_800.0, own_new_ns=22_200.0, host_wait_ns=-135_781.0,
               host_wait_sides_ns=[222_599.0, 86_818.0],
               profiled_period_ns=[229_766.0, 93_954.0])
    s = score(HOST50, "cudagraph", "cuda", rec)
    assert s.checks["bounded"] is True, s.reasons
    over = score(HOST50, "cudagraph", "cuda", {**rec, "host_wait_ns": -235_781.0,
                                                "host_wait_sides_ns": [322_599.0, 86_818.0]})
    assert over.checks["bounded"] is False
    assert any("host_wait_ns -235.8 µs > longer profiled period 229.8 µs" in r
               for r in over.reasons)
    assert any("A's host_wait_ns" in r for r in over.reasons)


def test_an_unprofiled_part_is_bounded_by_the_steps_of_the_processes_it_was_measured_in(
        ) -> None:
    rec = _rec(X_NS, "slower", host_issue_ns=X_NS, own_old_ns=50_000.0, own_new_ns=90_000.0)
    s = score(HOST50, "eager", "cuda", rec)
    assert s.checks["bounded"] is False
    assert any("host_issue_ns +100.0 µs > longer own-process step 90.0 µs" in r
               for r in s.reasons)


def test_a_waterfall_part_larger_than_its_steps_is_out_of_bounds() -> None:
    rec = _rec(X_NS, "slower", excess=["waterfall compile vs eager: host_overhead +300.0 µs "
                                       "> longer step 200.0 µs"])
    s = score(HOST50, "eager", "cpu", rec)
    assert s.checks["bounded"] is False and "host_overhead" in s.reasons[-1]


def test_a_two_process_size_miss_names_the_between_process_difference_when_pairs_agree(
        ) -> None:
    fused = single_cells(PROBE, [20.0], ("fused",))[0]
    truth = fused.truth["host_ns"]
    rec = {**_rec(truth * 1.06, "faster", old_ns=108_900.0, host_issue_ns=truth * 1.6),
           "own_old_ns": 156_400.0, "own_new_ns": 58_500.0, "new_ns": 44_400.0}
    s = score(fused, "eager", "cuda", rec)
    assert s.checks["size"] is False
    assert s.context and "+44% (old: 156.4 vs 108.9 µs paired)" in s.context[0]
    agreeing = score(fused, "eager", "cuda", {**rec, "host_issue_ns": truth})
    assert agreeing.checks["size"] and not agreeing.context


def test_stored_cells_are_rebuilt_from_their_probe_with_the_current_truths() -> None:
    stale = {**single_cells(PROBE, [20.0], ("fused",))[0].to_dict(),
             "truth": {"host_ns": 1.0, "gpu_ns": 1.0}, "old_cost": None}
    (cell,) = rebuilt([stale], PROBE, "cuda")
    assert cell.truth == {"host_ns": 18_000.0 - 80_000.0, "gpu_ns": 4_000.0 - 20_000.0}
    assert cell.old_cost == {"host_ns": 2 * 20_000.0 + 80_000.0,
                             "gpu_ns": 2 * 5_000.0 + 20_000.0}


def test_a_manual_cuda_graph_expects_no_host_busy_wait() -> None:
    exp = expectation(HOST50, "cudagraph", "cuda")
    assert exp.truth_ns == 0.0 and exp.part == "host_issue_ns"
    assert score(HOST50, "cudagraph", "cuda", _rec(2_000.0, "unchanged",
                                                   host_issue_ns=1_000.0)).passed


def test_a_missing_run_is_a_miss_that_says_so() -> None:
    s = score(HOST50, "compile", "cpu", {"status": "failed", "note": "boom"})
    assert not s.passed and "boom" in s.reasons[0]


def test_the_load_wait_gives_up_at_its_limit_and_reports_the_load() -> None:
    load, waited = wait_for_load(-1.0, 0.0)
    assert load >= 0.0 and waited >= 0.0


def _ranks_doc(mode_rule: str, mode_rank: int, base_rule: str = "slowest period") -> dict:
    """A distributed run's report with one compiled mode's rank headline."""
    return {"headline": {"compile": {"ranks": {"bounding_rule": [base_rule, mode_rule],
                                               "bounding_rank": [0, mode_rank]}},
                         "triton": None}}


def test_the_named_straggler_is_read_from_the_modes_rank_headline_eager_from_its_baseline_side(
        ) -> None:
    doc = _ranks_doc("straggler", 1, base_rule="straggler")
    assert named_straggler(doc, "compile") == 1
    assert named_straggler(doc, "eager") == 0
    assert named_straggler(_ranks_doc("slowest period", 1), "compile") is None
    assert named_straggler(doc, "cudagraph") == "?"


def _dist_rec(delta_ns: float, old_ns: float, stragglers: list) -> dict:
    return {"status": "ok/ok", "verdict": "slower", "old_ns": old_ns,
            "new_ns": old_ns + delta_ns, "delta_step_ns": delta_ns,
            "own_old_ns": old_ns, "own_new_ns": old_ns + delta_ns,
            "old_host_issue_ns": old_ns, "old_gpu_busy_ns": 0.0, "stragglers": stragglers}


def test_an_injected_straggler_must_be_named_and_the_symmetric_run_must_name_none() -> None:
    (cell,) = dist_cells("cuda", ("straggler",))
    d = cell.truth["host_ns"]
    assert score(cell, "eager", "cuda", _dist_rec(d, 2e6, [None, 1])).passed
    missed = score(cell, "eager", "cuda", _dist_rec(d, 2e6, [None, None]))
    assert missed.checks["straggler"] is False and "straggler" in missed.reasons[0]
    false_alarm = score(cell, "eager", "cuda", _dist_rec(d, 2e6, [0, 1]))
    assert false_alarm.checks["straggler"] is False


def test_the_distributed_cells_run_on_as_many_ranks_as_asked_and_slow_one() -> None:
    four = dist_cells("cuda", nproc=4)
    assert [c.name for c in four] == ["straggler-nproc4", "payload4-nproc4", "compute2-nproc4"]
    assert all(c.nproc == 4 for c in four)
    (cell,) = rebuilt([four[0].to_dict()], None, "cuda")
    assert cell.name == "straggler-nproc4" and cell.nproc == 4
    d = cell.truth["host_ns"]
    assert score(cell, "eager", "cuda", _dist_rec(d, 2e6, [None, 1])).passed
    assert not score(cell, "eager", "cuda", _dist_rec(d, 2e6, [None, 3])).passed  # wrong rank


def test_a_distributed_host_effect_is_expected_in_full_whatever_the_ranks_gpu_busy() -> None:
    """Ranks in lockstep spend GPU busy waiting in communication kernels: 4.58 ms of it on a
    2.58 ms step (4 x H200) must not hide the straggler's delay in the expected step."""
    (cell,) = dist_cells("cuda", ("straggler",), nproc=4)
    d = cell.truth["host_ns"]
    rec = {**_dist_rec(d, 2.58e6, [None, 1]), "old_host_issue_ns": 2.55e6,
           "old_gpu_busy_ns": 4.58e6}
    s = score(cell, "eager", "cuda", rec)
    assert s.expected_delta_step_ns == d and s.checks["direction"]
    assert not score(cell, "eager", "cuda", {**rec, "verdict": "unchanged"}).checks["direction"]


def test_in_a_graph_replay_the_stragglers_delay_overlaps_the_previous_replay() -> None:
    """The step becomes max(old step, D + one launch): a 1 ms delay on a 0.53 ms replay adds
    0.47 ms (H200: +0.504 ms measured), in eager all of D."""
    (cell,) = dist_cells("cuda", ("straggler",))
    d = cell.truth["host_ns"]
    replay = score(cell, "cudagraph", "cuda", _dist_rec(504_000.0, 529_000.0, [None, 1]))
    assert replay.passed and replay.expected["truth_ns"] == d - 529_000.0
    assert not score(cell, "eager", "cuda", _dist_rec(504_000.0, 529_000.0, [None, 1])).passed


def test_one_more_round_expects_as_many_kernels_as_a_round_of_the_old_side_has() -> None:
    """cuBLAS ran the 200 µs cell's matmul as two kernels (split-K): 7 rounds + a 1-op tail =
    22 kernels on side A, so one more round adds 3, not 2."""
    (cell,) = single_cells({"bases": {"200.0": {"m": 256, "k": 7, "predicted_ns": 2e5}},
                            "effects": {"200.0": {"rep": {"host_ns": 2e4, "gpu_ns": 3e4}}}},
                           [200.0], ("gpu",))
    rec = _rec(30_000.0, "slower", gpu_busy_ns=30_000.0, kernels=3.0, old_kernels=22.0)
    assert score(cell, "eager", "cuda", rec).checks["counts"] is True
    assert score(cell, "eager", "cuda", {**rec, "kernels": 2.0}).checks["counts"] is False


def test_a_graph_replay_expects_no_host_cost_of_an_extra_gpu_round() -> None:
    # one more tanh(y @ w) round: 28.9 µs of host issue and 5.6 µs of GPU in eager; a replay
    # (manual graph or CUDA-graph trees) launches it with the rest of the graph
    gpu = Cell("gpu-200us", "gpu", 200.0, 1, {"m": 256, "k": 6}, {"m": 256, "k": 7},
               {"host_ns": 28_900.0, "gpu_ns": 5_600.0}, 180_000.0)
    for mode in ("cudagraph", "reduce-overhead", "max-autotune"):
        exp = expectation(gpu, mode, "cuda")
        assert (exp.part, exp.truth_ns, exp.host_ns) == ("gpu_busy_ns", 5_600.0, 0.0), mode
    for mode in ("eager", "compile", "max-autotune-no-cudagraphs"):
        assert expectation(gpu, mode, "cuda").host_ns == 28_900.0, mode
    # a host-bound 137 µs replay: the round's 5.6 µs of GPU hides under the host's time
    hidden = _rec(-4_500.0, "inconclusive", old_ns=136_600.0, gpu_busy_ns=4_100.0,
                  old_host_issue_ns=130_000.0, old_gpu_busy_ns=40_000.0)
    assert score(gpu, "reduce-overhead", "cuda", hidden).checks["direction"] is True


def test_the_paired_change_ci_is_the_old_step_over_each_end_of_the_speedup_ci() -> None:
    from benchmarks.calibration.score import change_ci_ns

    # old 200 µs; speed-up CI 0.8–1.25: new steps 250 and 160 µs → change −40 … +50 µs
    low, high = change_ci_ns({"old_ns": 200_000.0, "speedup": [1.0, 0.8, 1.25]}) or (0, 0)
    assert (round(low, 6), round(high, 6)) == (-40_000.0, 50_000.0)
    assert change_ci_ns({"old_ns": 200_000.0, "speedup": [1.0, 0.0, 1.25]}) is None
    assert change_ci_ns({"speedup": [1.0, 0.8, 1.25]}) is None
