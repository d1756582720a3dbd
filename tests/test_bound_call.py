"""The host-bound / GPU-bound call of the unprofiled split holds at every step size (issue 36).

The calibration cells (:mod:`tests.bound_calibration`) model timed blocks of host- and
GPU-bound steps from 20 µs to 20 ms with the block's tail (launch latency, the last step's
kernels, the event record); each goes through the real split. The edges of
:func:`~traceviz.analyze.compare.unprofiled.bound_call` are pinned with exact values.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.bound_calibration import (
    STEPS_US,
    Cell,
    blocks,
    gpu_bound_cells,
    host_bound_cells,
    issue36_cell,
    spin_cells,
)
from tests.synthetic_runs import paired_split
from traceviz.analyze.compare.launch_unprofiled import launch_verdict
from traceviz.analyze.compare.unprofiled import (
    COMPUTE_FILLS,
    COMPUTE_SHORT,
    LAG_BEYOND_TAIL,
    WITHIN_TAIL,
    GpuWork,
    bound_call,
    split_from_paired,
)
from traceviz.analyze.verdicts import Thresholds, Verdict, VerdictInputs

T = Thresholds()
CELLS = host_bound_cells() + gpu_bound_cells() + spin_cells() + [issue36_cell()]


def _gpu(cell: Cell) -> GpuWork:
    return GpuWork(cell.compute_us / 1000, cell.launches)


@pytest.mark.parametrize("index", range(len(CELLS)), ids=lambda i: CELLS[i].name)
def test_every_calibration_cell_is_called_as_it_was_built(index: int) -> None:
    cell = CELLS[index]
    rng = np.random.default_rng(index)
    base, base_issue = blocks(cell, 15, rng)
    mode, mode_issue = blocks(cell, 15, rng)
    s = split_from_paired(paired_split(base, mode, base_issue, mode_issue, cell.iters), T,
                          _gpu(cell), _gpu(cell))
    assert s is not None
    for side in (s.baseline, s.mode):
        assert side.host_bound == cell.host_bound, (side.bound_reason, side)


def test_the_calibration_spans_the_step_sizes_and_both_bounds() -> None:
    assert min(STEPS_US) <= 20 and max(STEPS_US) >= 20_000
    for truth in (True, False):
        assert {c.step_us for c in CELLS if c.host_bound == truth} >= set(STEPS_US)
    assert any(c.launches > 1022 and not c.host_bound for c in CELLS)


def test_the_old_rule_read_the_block_tail_as_steps() -> None:
    """Why the cells are needed: the tail alone is 2.4 steps of a 44 µs step."""
    cell = issue36_cell()
    p, i = blocks(cell, 15, np.random.default_rng(0))
    lag = cell.iters * (1 - np.median(i) / np.median(p))
    assert lag > 1.0  # the old threshold: GPU-bound


# --- issue 36's cases, through the verdict ----------------------------------------------------


def _vin(name: str, launches: float) -> VerdictInputs:
    return VerdictInputs(
        mode=name, kernels=launches, activities=launches, launches=launches, gpu_busy_ns=6_700.0,
        busy_spread_ns=100.0, host_wait_ns=0.0, period_ns=44_000.0, cpu_ns=44_000.0,
        input_copies=0.0, input_copy_ns=0.0, correctness_ok=True, inflation=None,
        top_family=None, top_family_share=None)


def _speed_win() -> Verdict:
    return Verdict("cudagraph", "speed", "WIN", {"evidence_source": "paired", "outcome": "1.84×"},
                   {}, "")


def _issue36_blocks() -> dict:
    """A 43.7 µs eager step (issue 43.6 µs, 2,000 steps a block, the GPU ending 2.4 steps
    behind the host: 105 µs of tail) against its manual CUDA graph, 1.84× faster (issue
    23.6 µs)."""
    rng = np.random.default_rng(36)
    n = 2000
    base = (0.0437 + 0.0002 * rng.random(15)).tolist()
    mode = (0.02375 + 0.0001 * rng.random(15)).tolist()
    base_issue = [p - 2.4 * p / n for p in base]
    mode_issue = [p - 0.1 / n for p in mode]
    return paired_split(base, mode, base_issue, mode_issue, iters=n)


def test_a_44_us_step_made_a_cuda_graph_is_a_launch_win_from_the_paired_blocks_alone() -> None:
    """Issue 36: launch NO_WIN, "the GPU ended 2.4 steps behind the host"; the tail is not lag."""
    s = split_from_paired(_issue36_blocks(), 1.0)
    assert s is not None and s.baseline.host_bound, s.baseline
    v = launch_verdict(_vin("cudagraph", 1), _vin("eager", 5), _speed_win(), s, T)
    assert v.status == "WIN", v.explanation


def test_with_the_lean_trace_the_44_us_step_is_host_bound_on_its_compute_share() -> None:
    s = split_from_paired(_issue36_blocks(), T, GpuWork(0.0067, 5), GpuWork(0.0067, 1))
    assert s is not None
    b = s.baseline
    assert (b.host_bound, b.bound_reason) == (True, COMPUTE_SHORT)
    assert b.compute_share == pytest.approx(0.0067 / b.period_ms)
    assert b.tail_ms == pytest.approx(0.0067 + 0.150)
    assert b.lag_steps.value == pytest.approx(2.4, rel=0.01)  # kept as evidence
    v = launch_verdict(_vin("cudagraph", 1), _vin("eager", 5), _speed_win(), s, T)
    assert v.status == "WIN", v.explanation
    call = v.evidence["bound_call"][0]
    assert call["reason"] == COMPUTE_SHORT and call["host_bound"] is True
    assert call["compute_busy_ms"] == 0.0067 and call["lag_steps"] == b.lag_steps.value
    assert call["lag_beyond_tail_steps"] == b.lag_beyond_tail_steps.value
    assert {"block_tail_allowance_us", "gpu_bound_min_compute_share",
            "host_bound_max_lag_steps"} <= set(v.thresholds)
    assert "15% of it, so the GPU cannot have set the pace" in v.explanation


def test_a_rank_spinning_in_nccl_for_its_peers_host_is_host_bound() -> None:
    """Issue 36: 5.4 ms step, 0.26 ms compute, "the GPU ended 1.4 steps behind the host"."""
    for cell in spin_cells():
        p, i = blocks(cell, 15, np.random.default_rng(1))
        s = split_from_paired(paired_split(p, p, i, i, cell.iters), T, _gpu(cell), _gpu(cell))
        assert s is not None and s.baseline.lag_steps.value > 1.0
        assert (s.baseline.host_bound, s.baseline.bound_reason) == (True, COMPUTE_SHORT)


def test_a_gpu_bound_step_of_1500_launches_is_gpu_bound_on_its_compute() -> None:
    """The launch queue holds 0.7 step: the lag cannot show it."""
    cell = Cell("1500 launches", 6_000.0, 20_000.0, 19_000.0, 1500.0, False)
    p, i = blocks(cell, 15, np.random.default_rng(2))
    s = split_from_paired(paired_split(p, p, i, i, cell.iters), T, _gpu(cell), _gpu(cell))
    assert s is not None and s.baseline.lag_beyond_tail_steps is not None
    assert s.baseline.lag_beyond_tail_steps.value <= T.host_bound_max_lag_steps  # hidden
    assert (s.baseline.host_bound, s.baseline.bound_reason) == (False, COMPUTE_FILLS)


# --- the rule's edges ---------------------------------------------------------------------------


@pytest.mark.parametrize(("lag", "share", "want"), [
    (100.0, 0.25, (True, COMPUTE_SHORT)),  # rule 1 first: a GPU that barely computes
    (100.0, 0.5, (False, LAG_BEYOND_TAIL)),  # 0.5 is not below 0.5
    (0.5, 0.5, (True, WITHIN_TAIL)),  # at most half a step beyond the tail: host-bound
    (0.5, 0.875, (True, WITHIN_TAIL)),
    (0.5, 0.9, (False, COMPUTE_FILLS)),  # at or above gpu_bound_busy_share
    (0.5, None, (True, WITHIN_TAIL)),  # no lean trace: the lag alone
    (0.75, None, (False, LAG_BEYOND_TAIL)),
])
def test_the_bound_call_rules_in_order(lag: float, share: float | None,
                                       want: tuple[bool, str]) -> None:
    assert bound_call(lag, share, T) == want


def test_the_bound_call_thresholds_are_data() -> None:
    t = Thresholds(gpu_bound_min_compute_share=0.0, host_bound_max_lag_steps=2.0,
                   gpu_bound_busy_share=1.0)
    assert bound_call(1.5, 0.01, t) == (True, WITHIN_TAIL)
    assert bound_call(2.5, 0.01, t) == (False, LAG_BEYOND_TAIL)


def test_the_tail_allowance_is_data() -> None:
    # 4 steps of 1 ms, the GPU 1 ms behind the host: 0.85 beyond a 150 µs allowance, 0 beyond 1 ms
    p = paired_split([1.0] * 3, [1.0] * 3, [0.75] * 3, [0.75] * 3, 4)
    s = split_from_paired(p, T)
    assert s is not None and s.baseline.lag_beyond_tail_steps is not None
    assert s.baseline.lag_beyond_tail_steps.value == pytest.approx(0.85)
    assert not s.baseline.host_bound
    s = split_from_paired(p, Thresholds(block_tail_allowance_us=1000.0))
    assert s is not None and s.baseline.host_bound
    assert s.baseline.lag_beyond_tail_steps.value == 0.0
