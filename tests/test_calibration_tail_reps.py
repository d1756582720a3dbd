"""The ``launches`` / ``fused`` cells repeat their tail until the effect is a measurable share
of the step (``benchmarks.calibration.cells.tail_reps``), and their truths, costs and kernel
counts scale with the repeats; a stored cell keeps the repeats it ran with."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from benchmarks.calibration.cells import (  # noqa: E402
    EFFECT_SHARE,
    MAX_TAIL_REPS,
    rebuilt,
    single_cells,
    tail_reps,
)
from benchmarks.calibration.score import expectation  # noqa: E402
from benchmarks.calibration.steps import CHAIN, SPLIT, build  # noqa: E402

PROBE = {"device": "cpu", "bases": {"2000.0": {"m": 64, "k": 4, "predicted_ns": 2_000_000.0}},
         "effects": {"2000.0": {"rep": {"host_ns": 500_000.0, "gpu_ns": 0.0},
                                "tail_one": {"host_ns": 5_000.0, "gpu_ns": 0.0},
                                "tail_split": {"host_ns": 45_000.0, "gpu_ns": 0.0},
                                "tail_chain": {"host_ns": 50_000.0, "gpu_ns": 0.0},
                                "tail_fused": {"host_ns": 10_000.0, "gpu_ns": 0.0}}}}


@pytest.mark.parametrize(("effect_ns", "base_ns", "reps"), [
    (40_000.0, 2_000_000.0, 5),      # exactly 10 % after 5: no sixth
    (40_001.0, 2_000_000.0, 5),
    (39_999.0, 2_000_000.0, 6),
    (-40_000.0, 2_000_000.0, 5),     # a negative effect (fusion) by its size
    (300_000.0, 2_000_000.0, 1),     # already above the share
    (1.0, 2_000_000.0, MAX_TAIL_REPS),
    (0.0, 2_000_000.0, 1),
])
def test_the_tail_repeats_until_the_effect_reaches_its_share_of_the_step(effect_ns, base_ns,
                                                                          reps):
    assert tail_reps(effect_ns, base_ns) == reps
    if 1 < reps < MAX_TAIL_REPS:
        assert reps * abs(effect_ns) >= EFFECT_SHARE * base_ns
        assert (reps - 1) * abs(effect_ns) < EFFECT_SHARE * base_ns


def test_launches_and_fused_truths_costs_and_counts_scale_with_the_repeats():
    launches, fused = single_cells(PROBE, [2000.0], ("launches", "fused"))
    assert launches.new["tail_reps"] == launches.old["tail_reps"] == 5  # 40 µs → 200 µs
    assert launches.truth["host_ns"] == 5 * 40_000.0
    assert launches.old_cost["host_ns"] == 4 * 500_000.0 + 5 * 5_000.0
    assert fused.new["tail_reps"] == 5 and fused.truth["host_ns"] == -5 * 40_000.0
    # kernel counts are checked on CUDA (eager's kernels)
    assert expectation(launches, "eager", "cuda").kernels == 5 * (SPLIT - 1)
    assert expectation(fused, "cudagraph", "cuda").kernels == 5 * (2 - (CHAIN + 1))


def test_a_stored_cell_is_rebuilt_with_the_repeats_it_ran():
    (stored,) = single_cells(PROBE, [2000.0], ("launches",), reps=1)
    before = {**stored.to_dict()}
    before["new"] = {k: v for k, v in before["new"].items() if k != "tail_reps"}  # older record
    (cell,) = rebuilt([before], PROBE, "cpu")
    assert cell.new["tail_reps"] == 1 and cell.truth["host_ns"] == 40_000.0


@pytest.mark.parametrize(("form", "scale"), [("one", 0.5), ("split", 0.5)])
def test_a_repeated_tail_is_the_tail_applied_to_its_own_output(form, scale):
    reps = 3
    step = build({"name": "t", "m": 16, "k": 1, "tail": form, "tail_reps": reps})
    x, w = step["make_inputs"](torch.device("cpu"))
    y = torch.tanh(x @ w)[:32, :32]
    assert torch.allclose(step["step"](x, w), y * scale ** reps)
    assert f"x{reps}" in step["DESCRIPTION"]


def test_the_fused_and_chain_forms_agree_when_repeated():
    a = build({"name": "a", "m": 16, "k": 1, "tail": "chain", "tail_reps": 4})
    b = build({"name": "b", "m": 16, "k": 1, "tail": "fused", "tail_reps": 4})
    x, w = a["make_inputs"](torch.device("cpu"))
    assert torch.allclose(a["step"](x, w), b["step"](x, w), rtol=1e-5)
    assert not math.isclose(float(a["step"](x, w).sum()), 0.0)


def test_a_compiled_gpu_miss_with_fewer_kernels_names_the_builds_not_the_round():
    from benchmarks.calibration.score import score

    probe = {"bases": {"200.0": {"m": 256, "k": 7, "predicted_ns": 2e5}},
             "effects": {"200.0": {"rep": {"host_ns": 40_000.0, "gpu_ns": 10_000.0},
                                   "tail_one": {"host_ns": 5_000.0, "gpu_ns": 1_000.0}}}}
    (cell,) = single_cells(probe, [200.0], ("gpu",))
    rec = {"status": "ok", "verdict": "faster", "old_ns": 182_600.0, "new_ns": 151_750.0,
           "delta_step_ns": -30_850.0, "old_host_issue_ns": 180_000.0,
           "old_gpu_busy_ns": 60_000.0, "gpu_busy_ns": -1_600.0, "host_issue_ns": -29_500.0,
           "kernels": -4.0, "old_kernels": 14.0, "speedup": [1.2, 1.19, 1.22],
           "min_speedup": 0.03}
    s = score(cell, "max-autotune-no-cudagraphs", "cuda", rec)
    assert s.checks["direction"] is False
    assert any("two builds chose different kernels" in c for c in s.context)
    same_kernels = score(cell, "max-autotune-no-cudagraphs", "cuda", {**rec, "kernels": 2.0})
    assert not any("builds chose" in c for c in same_kernels.context)


def test_the_probe_times_a_tail_effect_as_a_paired_difference(monkeypatch):
    """Each call advances a fake clock by its cost; a change in speed between blocks (every
    other block runs 3x slower) lands on both forms of a pair alike."""
    from benchmarks.calibration import probe

    now = [0]
    calls = [0]

    def clock() -> int:
        return now[0]

    def form(cost_ns: int):
        def call() -> None:
            block = calls[0] // probe.CALLS
            now[0] += cost_ns * (3 if (block // 2) % 2 else 1)
            calls[0] += 1
        return call

    monkeypatch.setattr(probe.time, "perf_counter_ns", clock)
    a, b = form(10_000), form(25_000)
    calls[0] = -2  # the two untimed warm-up calls
    diff = probe.paired_diff(a, b, cuda=False)
    # each pair's two blocks share a speed: 8 of the 15 pairs fast (+15 µs), 7 slow (+45 µs);
    # the forms' fastest blocks timed apart would differ by 25 − 10 = 15 µs only by luck
    assert diff == 15_000


def test_cells_prefer_the_probes_paired_difference():
    paired = {**PROBE["effects"]["2000.0"],
              "tail_split_minus_one": {"host_ns": 100_000.0, "gpu_ns": 0.0}}
    probe = {**PROBE, "effects": {"2000.0": paired}}
    (launches,) = single_cells(probe, [2000.0], ("launches",))
    assert launches.new["tail_reps"] == 2 and launches.truth["host_ns"] == 200_000.0


def test_on_cuda_the_tail_runs_once():
    """Many more launches into a GPU-bound step fill the launch queue, whose wait then lands in
    the host issue time: on CUDA the paired host issue resolves one tail's launches."""
    cuda = {**PROBE, "device": "cuda"}
    launches, fused = single_cells(cuda, [2000.0], ("launches", "fused"))
    assert launches.new["tail_reps"] == fused.new["tail_reps"] == 1
    assert launches.truth["host_ns"] == 40_000.0


def test_a_compiled_round_on_the_cpu_is_checked_against_the_round_compiled():
    effects = {**PROBE["effects"]["2000.0"], "rep_compiled": {"host_ns": 300_000.0,
                                                              "gpu_ns": 0.0}}
    (gpu,) = single_cells({**PROBE, "effects": {"2000.0": effects}}, [2000.0], ("gpu",))
    assert expectation(gpu, "compile", "cpu").truth_ns == 300_000.0
    assert expectation(gpu, "eager", "cpu").truth_ns == 500_000.0
    (older,) = single_cells(PROBE, [2000.0], ("gpu",))  # a probe without it: the eager round
    assert expectation(older, "compile", "cpu").truth_ns == 500_000.0
