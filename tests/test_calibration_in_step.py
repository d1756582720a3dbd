"""The tails' truths are timed within a loop of the step (``probe.in_step_diff``), the ``gpu``
cell adds as many rounds as make it measurable on the CPU (``cells.extra_rounds``), and the
calibration steps pin max-autotune's GEMM backend so two builds differ by their effect
alone."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from benchmarks.calibration import probe  # noqa: E402
from benchmarks.calibration.cells import (  # noqa: E402
    EFFECT_SHARE,
    extra_rounds,
    rebuilt,
    single_cells,
)
from benchmarks.calibration.score import expectation, score  # noqa: E402
from benchmarks.calibration.steps import build  # noqa: E402

BASE = {"m": 16, "k": 2, "predicted_ns": 2_000_000.0}
COSTS = {"rep": {"host_ns": 500_000.0, "gpu_ns": 0.0},
         "tail_one": {"host_ns": 5_000.0, "gpu_ns": 0.0},
         "tail_split": {"host_ns": 45_000.0, "gpu_ns": 0.0},
         "tail_split_minus_one": {"host_ns": 40_000.0, "gpu_ns": 0.0}}


def _probe(device: str, **extra: dict) -> dict:
    return {"device": device, "bases": {"2000.0": BASE},
            "effects": {"2000.0": {**COSTS, **extra}}}


def test_in_step_diff_times_only_the_tails_within_the_step(monkeypatch):
    """A fake clock moves only where the test says: each tail call by its form's cost, and
    the step's part before the tail (``tail_input``) by a large amount that is not the
    tail's; the difference is the tails' alone, times the repeats."""
    now = [0]
    cost = {"one": 1_000, "split": 9_000}

    def fake_tail(y, form):
        now[0] += cost[form]
        return y

    def fake_input(y):
        now[0] += 1_000_000  # the rounds' time: outside the bracket
        return y

    monkeypatch.setattr(probe.time, "perf_counter_ns", lambda: now[0])
    monkeypatch.setattr(probe, "tail", fake_tail)
    monkeypatch.setattr(probe, "tail_input", fake_input)
    found = probe.in_step_diff(8, 1, ("one", "split"), 3, torch.device("cpu"))
    assert found["host_ns"] == 3 * (9_000 - 1_000)
    # side A's whole step, timed alike: the rounds' part plus its three tails
    assert found["old_step_host_ns"] == 1_000_000 + 3 * 1_000


def test_in_step_blocks_last_as_long_as_traceviz_blocks(monkeypatch):
    now = [0]

    def step() -> int:
        now[0] += 2_000_000  # 2 ms a step
        return 0

    monkeypatch.setattr(probe.time, "perf_counter_ns", lambda: now[0])
    assert probe._block_steps(step, cuda=False) == 50  # 100 ms / 2 ms

    def long_step() -> int:
        now[0] += 200_000_000  # 200 ms a step: one would fill the block
        return 0

    assert probe._block_steps(long_step, cuda=False) == 3  # never fewer than 3


def test_a_cell_takes_the_in_step_truth_when_it_ran_the_same_repeats():
    in_step = {"host_ns": 230_000.0, "gpu_ns": 0.0, "reps": 5.0}
    (cell,) = single_cells(_probe("cpu", tail_split_minus_one_in_step=in_step), [2000.0],
                           ("launches",))
    assert cell.new["tail_reps"] == 5  # 40 µs alone → 5 repeats for 10 % of 2 ms
    assert cell.truth["host_ns"] == 230_000.0  # not 5 × 40 µs
    assert "within the step loop" in expectation(cell, "eager", "cpu").why
    (stored,) = rebuilt([{**cell.to_dict(), "new": {**cell.new, "tail_reps": 2}}],
                        _probe("cpu", tail_split_minus_one_in_step=in_step), "cpu")
    assert stored.truth["host_ns"] == 2 * 40_000.0  # other repeats: the alone timing scaled
    assert "alone" in expectation(stored, "eager", "cpu").why


def test_an_in_step_truth_scales_with_the_runs_host_speed_in_eager_only():
    in_step = {"host_ns": 100_000.0, "gpu_ns": 0.0, "reps": 1.0,
               "old_step_host_ns": 200_000.0}
    (cell,) = single_cells(_probe("cuda", tail_split_minus_one_in_step=in_step), [2000.0],
                           ("launches",))
    assert cell.truth_old_step_ns == 200_000.0
    rec = {"status": "ok", "verdict": "slower", "old_ns": 300_000.0, "new_ns": 450_000.0,
           "delta_step_ns": 150_000.0, "old_host_issue_ns": 300_000.0,
           "old_gpu_busy_ns": 20_000.0, "host_issue_ns": 150_000.0, "kernels": 7.0}
    s = score(cell, "eager", "cuda", rec)
    assert s.expected["truth_ns"] == 150_000.0  # 100 µs × 300 / 200: the run's host ran 1.5x
    assert s.passed and "x 1.50" in s.expected["why"]
    unscaled = score(cell, "eager", "cuda", {**rec, "old_host_issue_ns": None})
    assert unscaled.expected["truth_ns"] == 100_000.0
    assert score(cell, "cudagraph", "cuda", rec).expected["truth_ns"] == 0.0
    cpu = single_cells(_probe("cpu", tail_split_minus_one_in_step={**in_step, "reps": 5.0}),
                       [2000.0], ("launches",))[0]
    cpu_rec = {**rec, "old_host_issue_ns": None, "old_ns": 100_000.0}
    assert score(cpu, "eager", "cpu", cpu_rec).expected["truth_ns"] == 50_000.0  # old_ns / ref


@pytest.mark.parametrize(("eager", "compiled", "rounds"), [
    (500_000.0, None, 1),
    (500_000.0, 30_000.0, 7),        # the compiled round sets the count: 7 × 30 ≥ 200 µs
    (500_000.0, 40_000.0, 5),        # exactly 10 % after 5
    (150_000.0, 400_000.0, 2),       # the cheaper one, whichever it is
])
def test_the_gpu_cell_adds_rounds_until_the_cheapest_reaches_its_share(eager, compiled,
                                                                        rounds):
    assert extra_rounds(eager, compiled, 2_000_000.0) == rounds
    cheapest = min(eager, compiled if compiled is not None else eager)
    assert rounds * cheapest >= EFFECT_SHARE * 2_000_000.0


def test_gpu_truths_and_kernel_counts_scale_with_the_extra_rounds():
    rep_compiled = {"host_ns": 30_000.0, "gpu_ns": 0.0}
    (cpu,) = single_cells(_probe("cpu", rep_compiled=rep_compiled), [2000.0], ("gpu",))
    assert cpu.new["extra_rep"] == 7
    assert cpu.truth["host_ns"] == 7 * 500_000.0
    assert expectation(cpu, "compile", "cpu").truth_ns == 7 * 30_000.0
    assert "9x tanh" in build({**cpu.new, "m": 8})["DESCRIPTION"]  # k = 2, + 7
    (cuda,) = single_cells(_probe("cuda", rep_compiled=rep_compiled), [2000.0], ("gpu",))
    assert cuda.new["extra_rep"] is True  # one round, written as stored cells ran it
    rec = {"status": "ok", "verdict": "slower", "old_ns": 100_000.0, "new_ns": 110_000.0,
           "delta_step_ns": 10_000.0, "old_kernels": 5.0, "kernels": 2.0}
    assert score(cuda, "eager", "cuda", rec).expected["kernels"] == 2.0  # (5 − 1 tail) / 2
    three = single_cells(_probe("cuda"), [2000.0], ("gpu",), extra=3)[0]
    assert score(three, "eager", "cuda", rec).expected["kernels"] == 6.0


def test_the_calibration_steps_run_max_autotune_gemms_on_one_backend(monkeypatch):
    import torch._inductor.config as inductor_config

    monkeypatch.setattr(inductor_config, "max_autotune_gemm_backends", "ATEN,TRITON,CPP")
    build({"name": "t", "m": 16, "k": 1})
    assert inductor_config.max_autotune_gemm_backends == "ATEN"
