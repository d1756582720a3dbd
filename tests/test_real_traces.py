"""The analyzer on real traces: HTA's test traces (other GPUs and eras) and our own GPU runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import traceviz
from tests.conftest import gpu_traces, shared_hta_traces


def check_invariants(a: traceviz.Analysis) -> None:
    for s in a.steps:
        parts = s.gpu_busy_ns + s.host_wait_ns + s.sync_wait_ns + s.graph_internal_ns
        assert parts + s.other_idle_ns + s.queued_ns == s.period_ns, s.name
        if s.cpu_bound_share is not None:
            assert 0.0 <= s.cpu_bound_share <= 1.0
        assert s.gpu_busy_ns >= 0 and min(s.host_wait_ns, s.sync_wait_ns, s.other_idle_ns,
                                          s.queued_ns) >= 0
    t = a.totals
    idle = t.host_wait_ns + t.sync_wait_ns + t.graph_internal_ns + t.other_idle_ns + t.queued_ns
    assert t.gpu_busy_ns + idle == t.period_ns <= t.step_period_sum_ns
    assert t.step_period_sum_ns == sum(s.period_ns for s in a.steps)
    assert t.attributed + t.unattributed == t.activities
    assert t.kernels + t.memcpys + t.memsets == t.activities
    assert sum(s.activities for s in a.steps) == t.attributed
    assert t.gpu_busy_all_ns <= t.gpu_window_ns
    assert (a.gaps.end_ns > a.gaps.start_ns).all()
    for r in a.graph_replays:
        assert 0 <= r.busy_ns <= r.span_ns and r.nodes >= r.kernels


SHARED = shared_hta_traces()


@pytest.mark.skipif(not SHARED, reason="../shared/cases/hta is absent")
@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name.split(".")[0])
def test_invariants_hold_on_shared_hta_traces(path: Path) -> None:
    a = traceviz.analyze(traceviz.load(path))
    check_invariants(a)
    assert a.totals.activities > 0


def by_name(name: str) -> Path:
    for p in SHARED:
        if p.name.startswith(name):
            return p
    pytest.skip(f"{name} not in ../shared/cases/hta")


def test_shared_counts_match_the_documented_contents() -> None:
    """SOURCES.md counts straight from the JSON: kernels, GPU events, graph launches."""
    expected = {
        "a100_compile_cudagraph_triton_nccl_rank0": (6080, 7747, 70),
        "v100_compiled_cudagraph_nccl_rank1": (9876, 15632, 12),
        "a100_eager_nccl_rank3": (8568, 9450, 0),
        "a100_torchcompile_triton_culaunchkernel": (1, 1, 0),
        "a100_eager_nccl_2024_rank0": (2700, 3774, 0),
        "a100_eager_alexnet_cudasync": (79, 98, 0),
    }
    for name, (kernels, activities, graphs) in expected.items():
        t = traceviz.analyze(traceviz.load(by_name(name))).totals
        assert (t.kernels, t.activities, t.graph_launches) == (kernels, activities, graphs), name


def test_cuda_graph_trace_replays_own_their_nodes() -> None:
    a = traceviz.analyze(traceviz.load(by_name("v100_compiled_cudagraph_nccl_rank1")))
    assert len(a.graph_replays) == 12
    assert sum(r.nodes for r in a.graph_replays) == 5046  # SOURCES.md: GPU events in graphs
    assert {r.nodes for r in a.graph_replays} == {339, 502}
    assert all(s.graph_launches == 2 for s in a.steps)
    assert sum(s.graph_internal_ns for s in a.steps) > 0


def test_triton_via_culaunchkernel_is_a_launch_and_a_fused_kernel() -> None:
    a = traceviz.analyze(traceviz.load(by_name("a100_torchcompile_triton_culaunchkernel")))
    assert a.totals.kernel_launches == 1 and a.totals.triton_kernels == 1
    (k,) = a.triton_kernels
    assert (k.kind, k.fused_ops) == ("pointwise", ("add", "cos", "sin"))
    assert a.compile.compiled and a.compile.steps[0].regions == 1


def test_sync_heavy_trace_has_sync_waits() -> None:
    a = traceviz.analyze(traceviz.load(by_name("a100_eager_alexnet_cudasync")))
    (s,) = a.steps  # no ProfilerStep markers: one step
    assert s.name == "trace" and s.sync_wait_ns > 0


GPU = {p.name.split(".")[0].removeprefix("elementwise_"): p for p in gpu_traces()}
needs_gpu_traces = pytest.mark.skipif(not GPU, reason="tests/data/gpu has no traces")


@needs_gpu_traces
@pytest.mark.parametrize("mode", sorted(GPU))
def test_invariants_hold_on_our_h200_traces(mode: str) -> None:
    tr = traceviz.load(GPU[mode])
    a = traceviz.analyze(tr)
    check_invariants(a)
    assert a.totals.steps == 5 and a.totals.steps_with_gpu == 5
    assert "H200" in tr.meta.devices[0].name and tr.meta.timestamps == "relative"


@needs_gpu_traces
def test_eager_pointwise_chain_is_one_launch_per_kernel() -> None:
    a = traceviz.analyze(traceviz.load(GPU["eager"]))
    assert (a.per_step.kernels, a.per_step.launches, a.per_step.graph_launches) == (19, 19, 0)
    assert a.totals.triton_kernels == 0 and a.totals.unattributed == 0


@needs_gpu_traces
def test_compiled_pointwise_chain_is_one_fused_triton_kernel_per_step() -> None:
    a = traceviz.analyze(traceviz.load(GPU["compile"]))
    assert all(s.kernels == 1 and s.launches == 1 for s in a.steps)
    (k,) = a.triton_kernels
    assert k.kind == "pointwise" and k.count == 5 and len(k.fused_ops) >= 5
    assert a.compile.compiled and all(c.regions == 1 and c.graph_breaks == 0
                                      for c in a.compile.steps)
    eager = traceviz.analyze(traceviz.load(GPU["eager"]))
    assert a.per_step.gpu_busy_ns < eager.per_step.gpu_busy_ns / 2  # fusion: far fewer bytes


@needs_gpu_traces
def test_manual_graph_replay_has_far_fewer_launches_than_kernels() -> None:
    a = traceviz.analyze(traceviz.load(GPU["cudagraph"]))
    assert a.per_step.kernels == 19 and a.per_step.graph_launches == 1
    assert a.per_step.launches <= 3  # the graph launch plus the input copy-in
    (replay, *_) = a.graph_replays
    assert replay.kernels == 19 and replay.internal_gap_ns == replay.span_ns - replay.busy_ns
    assert all(s.host_wait_ns == 0 for s in a.steps)  # the replay is queued: no host starvation
    assert a.totals.graph_internal_ns > 0


@needs_gpu_traces
def test_reduce_overhead_replays_a_graph_after_an_input_copy() -> None:
    a = traceviz.analyze(traceviz.load(GPU["reduce-overhead"]))
    assert (a.per_step.graph_launches, a.per_step.launches) == (1, 2)
    assert all(c.input_copies == 1 for c in a.compile.steps)
    assert a.totals.triton_kernels == 5
