"""On CUDA a timed block starts after one lead-in step (``traceviz/collect/timing.py``, module
doc): the host's work before a step's first launch is hidden by a GPU-bound loop, so it must
not appear in the block's period.

Known answer by construction: each step busy-waits ``SPIN_MS`` on the host, then queues
``torch.cuda._sleep`` for about ``GPU_MS`` of GPU time; the GPU sets the pace (its time per step
is twice the host's). A block of 3 steps without the lead-in would read ``GPU_MS + SPIN_MS / 3``
per step (+17 %); the steady state is the GPU's own time, measured side by side in the same
process by a block of the same step without the busy-wait.
"""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")

from traceviz.collect.timing import StepClock  # noqa: E402

SPIN_MS = 10.0
GPU_MS = 20.0


def _spin(ms: float) -> None:
    end = time.perf_counter_ns() + int(ms * 1e6)
    while time.perf_counter_ns() < end:
        pass


@pytest.mark.gpu
def test_a_host_wait_hidden_by_a_gpu_bound_loop_is_not_in_the_block_period() -> None:
    clock = StepClock(cuda=True)
    cycles = 10_000_000

    def gpu_only() -> None:
        torch.cuda._sleep(cycles)

    for _ in range(6):  # size the GPU's work: its clock ramps up while it runs
        quiet_ms = min(clock.time_block(gpu_only, 3).period_ms for _ in range(2))
        if quiet_ms >= 1.8 * SPIN_MS:
            break
        cycles = int(cycles * GPU_MS / quiet_ms)
    assert quiet_ms >= 1.8 * SPIN_MS, "the GPU's work per step must outlast the host's"

    def spin_then_gpu() -> None:
        _spin(SPIN_MS)
        torch.cuda._sleep(cycles)

    quiet = [clock.time_block(gpu_only, 3).period_ms for _ in range(3)]
    spun = [clock.time_block(spin_then_gpu, 3) for _ in range(3)]
    gpu_ms = min(quiet)
    for block in spun:
        assert block.issue_ms >= SPIN_MS  # the host did spin in every timed step
        assert block.period_ms == pytest.approx(gpu_ms, rel=0.05), (block, quiet)
    # the same block timed from an idle GPU (no lead-in) shows the first step's busy-wait
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    begin.record()
    for _ in range(3):
        spin_then_gpu()
    end.record()
    end.synchronize()
    assert begin.elapsed_time(end) / 3 > gpu_ms + 0.8 * SPIN_MS / 3
