"""Metrics on hand-built traces whose answers are known by construction (all times in ns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import BWD_TID, TraceBuilder
from traceviz.vocab import GapClass


def run(b: TraceBuilder, tmp_path: Path) -> traceviz.Analysis:
    return traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))


def assert_invariants(a: traceviz.Analysis) -> None:
    for s in a.steps:
        total = s.gpu_busy_ns + s.host_wait_ns + s.sync_wait_ns + s.graph_internal_ns
        assert total + s.other_idle_ns == s.period_ns, s
        if s.cpu_bound_share is not None:
            assert 0.0 <= s.cpu_bound_share <= 1.0
    assert a.totals.attributed + a.totals.unattributed == a.totals.activities


def test_host_wait_and_queued_gaps_and_tail_are_split_exactly(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)  # A: 10-15 µs
    b.kernel(launch_ts=2_000, ts=20_000, dur=5_000)  # B queued before A ended -> other_idle 5 µs
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000)  # C launched after B ended -> host_wait 15
    b.step(2, 100_000, 100_000)
    b.kernel(launch_ts=110_000, ts=120_000, dur=10_000)  # D: next step starts at 120 µs
    a = run(b, tmp_path)
    assert_invariants(a)
    s1, s2 = a.steps
    assert (s1.kernels, s1.launches, s1.cpu_ns) == (3, 3, 100_000)
    assert s1.gpu_busy_ns == 15_000
    assert s1.period_ns == 120_000 - 10_000
    assert s1.other_idle_ns == 5_000  # B
    # C's gap (25->40) and the tail (45->120, D launched at 110 >= 45) are host waits.
    assert s1.host_wait_ns == 15_000 + 75_000
    assert s1.cpu_bound_share == pytest.approx(90_000 / 110_000)
    # Last step: period is its own extent.
    assert (s2.period_ns, s2.gpu_busy_ns, s2.host_wait_ns) == (10_000, 10_000, 0)
    tails = a.gaps.tail
    assert int(tails.sum()) == 1
    assert a.gaps.cls[tails][0] == GapClass.HOST_WAIT


def test_overlapping_streams_count_once_in_busy_time(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=20_000, stream=7)  # 10-30
    b.kernel(launch_ts=2_000, ts=15_000, dur=20_000, stream=18)  # 15-35 overlaps
    b.kernel(launch_ts=3_000, ts=35_000, dur=5_000, stream=7)  # 35-40 touches: no gap
    b.kernel(launch_ts=4_000, ts=50_000, dur=5_000, stream=18)  # gap 40-50, queued
    a = run(b, tmp_path)
    assert_invariants(a)
    s = a.steps[0]
    assert s.gpu_busy_ns == 30_000 + 5_000  # [10, 40] and [50, 55]
    assert s.period_ns == 45_000
    assert s.other_idle_ns == 10_000
    assert len(a.gaps) == 1 and a.gaps.stream[0] == 18
    assert a.totals.gpu_busy_all_ns == 35_000


def test_graph_replay_gaps_are_graph_internal_and_replay_row_is_exact(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(5_000, 8_000, name="cudaGraphLaunch")
    b.gpu(corr, 20_000, 4_000, name="g1")  # 20-24
    b.gpu(corr, 25_000, 4_000, name="g2")  # 25-29 (1 µs internal gap)
    b.gpu(corr, 31_000, 2_000, name="copy", cat="gpu_memcpy")  # 31-33 (2 µs internal gap)
    b.kernel(launch_ts=50_000, ts=60_000, dur=1_000)  # host wait 33 -> 60
    a = run(b, tmp_path)
    assert_invariants(a)
    s = a.steps[0]
    assert (s.launches, s.graph_launches, s.kernels, s.memcpys) == (2, 1, 3, 1)
    assert s.graph_internal_ns == 3_000
    assert s.host_wait_ns == 27_000
    (r,) = a.graph_replays
    assert (r.correlation, r.nodes, r.kernels, r.step) == (corr, 3, 2, "ProfilerStep#1")
    assert (r.span_ns, r.busy_ns, r.internal_gap_ns) == (13_000, 10_000, 3_000)
    assert (r.launch_ns, r.launch_to_first_ns) == (8_000, 15_000)
    assert a.totals.graph_launches == 1 and a.per_step.kernels_per_launch == 2.0


def test_gap_after_blocking_sync_is_sync_wait(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 200_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)  # ends at 20
    b.runtime("cudaStreamSynchronize", 2_000, 20_000)  # ends at 22 µs: after gap start
    b.kernel(launch_ts=30_000, ts=40_000, dur=10_000)  # gap 20->40, launched at 30
    b.runtime("cudaDeviceSynchronize", 41_000, 10_000)  # ends at 51, before the gap start 50? no
    b.kernel(launch_ts=60_000, ts=70_000, dur=1_000)  # gap 50->70; sync ended at 51 > 50
    b.runtime("cudaStreamSynchronize", 55_000, 50_000)  # ends 105: after the launch at 80
    b.kernel(launch_ts=80_000, ts=90_000, dur=1_000)  # gap 71->90: host_wait (sync ends late)
    a = run(b, tmp_path)
    assert_invariants(a)
    s = a.steps[0]
    assert s.sync_wait_ns == 20_000 + 20_000
    assert s.host_wait_ns == 19_000
    assert list(a.gaps.cls) == [GapClass.SYNC_WAIT, GapClass.SYNC_WAIT, GapClass.HOST_WAIT]


def test_sync_edges_a_sync_ending_at_the_gap_start_is_not_one_ending_at_the_launch_is(
        tmp_path: Path) -> None:
    """sync_wait: a sync call ended *after* the gap's start and *no later than* the launch
    call's start (docs/metrics.md): both edges at equal timestamps."""
    b = TraceBuilder()
    b.step(1, 0, 200_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)  # ends at 20 µs: the first gap starts
    b.runtime("cudaStreamSynchronize", 5_000, 15_000)  # ends at 20 = the gap start: not after
    b.kernel(launch_ts=30_000, ts=40_000, dur=10_000)  # gap 20->40: host_wait; ends at 50
    b.runtime("cudaStreamSynchronize", 45_000, 15_000)  # ends at 60 = the next launch's start
    b.kernel(launch_ts=60_000, ts=70_000, dur=1_000)  # gap 50->70: sync_wait
    a = run(b, tmp_path)
    assert_invariants(a)
    assert list(a.gaps.cls[:2]) == [GapClass.HOST_WAIT, GapClass.SYNC_WAIT]
    s = a.steps[0]
    assert (s.host_wait_ns, s.sync_wait_ns) == (20_000, 20_000)


def test_step_without_gpu_work_has_no_share_and_is_reported(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.kernel(launch_ts=1_000, ts=5_000, dur=1_000)
    b.step(2, 50_000, 50_000)  # CPU only
    b.step(3, 100_000, 50_000)
    b.kernel(launch_ts=101_000, ts=105_000, dur=1_000)
    a = run(b, tmp_path)
    assert_invariants(a)
    s1, s2, _ = a.steps
    assert (s2.period_ns, s2.kernels, s2.cpu_bound_share, s2.gpu_start_ns) == (0, 0, None, None)
    assert s1.period_ns == 100_000  # to the next step WITH activities
    assert s1.host_wait_ns == 99_000
    assert "steps_without_gpu_work" in {h.code for h in a.health}
    assert a.totals.steps_with_gpu == 2


def test_unattributed_and_unlinked_activities_are_counted_not_dropped(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 10_000, 50_000)
    b.kernel(launch_ts=1_000, ts=5_000, dur=1_000)  # launched before the step
    b.kernel(launch_ts=11_000, ts=15_000, dur=1_000)
    b.gpu(None, 20_000, 1_000)  # no correlation at all
    b.gpu(999_999, 22_000, 1_000)  # correlation with no launch call
    a = run(b, tmp_path)
    assert_invariants(a)
    t = a.totals
    assert (t.activities, t.attributed, t.unattributed, t.unlinked) == (4, 1, 3, 2)
    assert a.steps[0].kernels == 1
    codes = {h.code: h.count for h in a.health}
    assert codes["unlinked_activities"] == 2 and codes["unattributed_activities"] == 1
    assert list(a.activity_step) == [-1, 0, -1, -1]


def test_trace_without_step_markers_is_one_step_spanning_everything(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.kernel(launch_ts=1_000, ts=5_000, dur=1_000)
    b.kernel(launch_ts=7_000, ts=9_000, dur=1_000)
    a = run(b, tmp_path)
    assert_invariants(a)
    (s,) = a.steps
    assert (s.name, s.kernels, s.launches) == ("trace", 2, 2)
    assert (s.cpu_start_ns, s.cpu_ns) == (1_000, 9_000)
    assert s.host_wait_ns == 3_000


def test_launch_in_backward_thread_is_attributed_by_time(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(50_000, tid=BWD_TID)
    b.gpu(corr, 60_000, 1_000)
    a = run(b, tmp_path)
    assert a.steps[0].kernels == 1 and a.totals.unattributed == 0


def test_simultaneous_starts_take_the_earliest_launched_activity(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=2_000, dur=1_000)  # ends 3
    b.kernel(launch_ts=20_000, ts=30_000, dur=1_000, stream=18)  # host: launched after 3
    b.kernel(launch_ts=2_500, ts=30_000, dur=1_000, stream=7)  # queued before 3 -> other_idle
    a = run(b, tmp_path)
    assert a.steps[0].other_idle_ns == 27_000 and a.steps[0].host_wait_ns == 0


def test_driver_launched_kernels_count_as_launches_and_triton(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=5_000, dur=1_000, name="triton_poi_fused_add_mul_0",
             api="cuLaunchKernel")
    b.kernel(launch_ts=2_000, ts=7_000, dur=1_000, name="my_handwritten_kernel",
             api="cuLaunchKernelEx")
    a = run(b, tmp_path)
    assert a.totals.kernel_launches == 2
    assert a.totals.triton_kernels == 2
    rows = {r.name: r for r in a.triton_kernels}
    assert rows["triton_poi_fused_add_mul_0"].fused_ops == ("add", "mul")
    assert rows["triton_poi_fused_add_mul_0"].kind == "pointwise"
    assert rows["my_handwritten_kernel"].kind == "user"


def test_compile_structure_counts_breaks_recompiles_lookup_and_input_copies(
    tmp_path: Path,
) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.cpu_op("TorchDynamo Cache Lookup", 1_000, 2_000)
    b.cpu_op("Torch-Compiled Region: 0/0", 4_000, 100_000)
    b.cpu_op("TorchDynamo Cache Lookup", 110_000, 3_000)
    b.cpu_op("Torch-Compiled Region: 1/1", 120_000, 100_000)
    b.cpu_op("## Call CompiledFxGraph fabc ##", 130_000, 50_000, cat="user_annotation")
    b.kernel(launch_ts=131_000, ts=140_000, dur=1_000,
             name="void at::native::elementwise_kernel<direct_copy_kernel_cuda>")
    b.kernel(launch_ts=132_000, ts=142_000, dur=1_500, name="Memcpy DtoD (Device -> Device)")
    corr = b.launch(140_000, 5_000, name="cudaGraphLaunch")
    b.gpu(corr, 150_000, 5_000, name="triton_poi_fused_add_0")
    b.kernel(launch_ts=300_000, ts=310_000, dur=1_000,
             name="void at::native::elementwise_kernel<direct_copy_kernel_cuda>")  # outside fx
    a = run(b, tmp_path)
    (c,) = a.compile.steps
    assert a.compile.compiled
    assert (c.regions, c.frames, c.graph_breaks) == (2, ("0", "1"), 1)
    assert a.compile.recompiled_regions == ("1/1",)
    assert c.cache_lookup_ns == 5_000
    assert (c.compiled_graph_calls, c.input_copies) == (1, 2)
    assert c.input_copy_ns == 2_500  # the two copies inside the CompiledFxGraph call only


def test_gap_percentiles_are_nearest_rank_gap_lengths(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    t = 0
    for gap in (1_000, 2_000, 3_000, 4_000, 10_000):  # five host-wait gaps
        b.kernel(launch_ts=t + gap - 500, ts=t + gap, dur=1_000)
        t += gap + 1_000
    a = run(b, tmp_path)
    (row,) = [g for g in a.gap_stats if g.scope == "step" and g.gap_class == "host_wait"]
    assert (row.count, row.p50_ns, row.p90_ns, row.max_ns, row.sum_ns) == (
        4, 3_000, 10_000, 10_000, 19_000)
    assert np.all(a.gaps.end_ns > a.gaps.start_ns)


def test_graph_launch_without_nodes_warns(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.runtime("cudaGraphLaunch", 1_000, 5_000)
    b.kernel(launch_ts=10_000, ts=20_000, dur=1_000)
    a = run(b, tmp_path)
    assert {h.code: h.count for h in a.health}["graph_launch_without_nodes"] == 1
    assert a.totals.graph_launches == 0
