"""Edges of the gap and period definitions (docs/metrics.md, "Per step", "Idle gaps").

Hand-built traces, all times in ns, each edge pinned at equal timestamps: a launch call starting
exactly at the gap's start, a next step starting exactly at this step's last end, simultaneous
enders, and the integer-ns, ``-1``-for-no-GPU-work contract of the step timeline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.model import GapTable
from traceviz.analyze.trace.gaps import gap_stats, step_timeline
from traceviz.analyze.trace.links import link_launches
from traceviz.vocab import GAP_CLASS_NAMES, GapClass


def _analyze(b: TraceBuilder, tmp_path: Path) -> tuple[traceviz.Trace, traceviz.Analysis]:
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    return trace, traceviz.analyze(trace)


def test_a_launch_call_starting_exactly_at_the_gap_start_is_a_host_wait(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)  # 10-20 µs
    b.kernel(launch_ts=20_000, ts=30_000, dur=1_000)  # launched at the gap start 20: host_wait
    b.kernel(launch_ts=30_999, ts=40_000, dur=1_000)  # launched 1 ns before 31: queued
    _, a = _analyze(b, tmp_path)
    assert list(a.gaps.cls) == [GapClass.HOST_WAIT, GapClass.OTHER_IDLE]
    s = a.steps[0]
    assert (s.host_wait_ns, s.other_idle_ns, s.sync_wait_ns) == (10_000, 9_000, 0)


def test_a_next_step_starting_exactly_at_this_steps_end_leaves_no_tail_hole(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)  # step 1: 10-20 µs
    b.step(2, 50_000, 50_000)
    b.kernel(launch_ts=51_000, ts=20_000, dur=5_000)  # step 2: starts at 20 = step 1's end
    b.step(3, 100_000, 50_000)
    b.kernel(launch_ts=101_000, ts=25_001, dur=1_000)  # step 3: 1 ns after step 2's end
    _, a = _analyze(b, tmp_path)
    s1, s2, s3 = a.steps
    assert (s1.period_ns, s1.gpu_busy_ns) == (10_000, 10_000)
    assert (s2.period_ns, s2.gpu_busy_ns) == (5_001, 5_000)
    assert s3.period_ns == 1_000
    # Only step 2 has a hole: its 1 ns tail, ended by step 3's kernel, launched (at 101 µs)
    # after the hole opened: a host wait.
    assert a.gaps.step.tolist() == [1]
    assert a.gaps.tail.tolist() == [True]
    assert (a.gaps.start_ns.tolist(), a.gaps.end_ns.tolist()) == ([25_000], [25_001])
    assert a.gaps.cls.tolist() == [GapClass.HOST_WAIT]


def test_of_simultaneous_enders_the_first_runtime_call_of_the_trace_counts_as_launched_first(
        tmp_path: Path) -> None:
    """The earliest launch call (runtime row 0) ends the gap: queued work, not a host wait."""
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=30_000, dur=1_000, stream=7)  # runtime row 0, queued
    b.kernel(launch_ts=2_000, ts=2_500, dur=500, stream=7)  # 2.5-3 µs: the gap starts at 3
    b.kernel(launch_ts=20_000, ts=30_000, dur=1_000, stream=18)  # launched after 3
    _, a = _analyze(b, tmp_path)
    assert a.gaps.cls.tolist() == [GapClass.OTHER_IDLE]
    assert a.gaps.stream.tolist() == [7]
    assert (a.steps[0].other_idle_ns, a.steps[0].host_wait_ns) == (27_000, 0)


def test_step_timeline_is_integer_ns_with_minus_one_for_a_step_without_gpu_work(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)  # 10-20
    b.kernel(launch_ts=25_000, ts=30_000, dur=5_000)  # 30-35: host wait 20 -> 30
    b.step(2, 50_000, 50_000)  # no GPU work
    b.step(3, 100_000, 50_000)
    b.kernel(launch_ts=101_000, ts=110_000, dur=2_000)  # 110-112
    trace, a = _analyze(b, tmp_path)
    tl = step_timeline(trace, link_launches(trace), a.activity_step, len(a.steps))
    assert tl.gpu_start_ns.tolist() == [10_000, -1, 110_000]
    assert tl.gpu_end_ns.tolist() == [35_000, -1, 112_000]
    assert tl.busy_ns.tolist() == [15_000, 0, 2_000]
    assert tl.period_ns.tolist() == [100_000, 0, 2_000]
    idle = np.zeros((3, len(GapClass)), np.int64)
    idle[0, GapClass.HOST_WAIT] = 10_000 + 75_000  # the gap and the tail 35 -> 110
    assert tl.idle_ns_by_class.tolist() == idle.tolist()
    for arr in (tl.gpu_start_ns, tl.gpu_end_ns, tl.period_ns, tl.busy_ns, tl.idle_ns_by_class,
                tl.gaps.start_ns, tl.gaps.end_ns, tl.gaps.activity, tl.gaps.stream):
        assert arr.dtype == np.int64
    assert (tl.gaps.step.dtype, tl.gaps.cls.dtype, tl.gaps.tail.dtype) == (
        np.int32, np.int8, np.bool_)


def test_a_step_whose_gpu_work_starts_at_time_zero_has_its_full_period(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(50_000)
    b.gpu(corr, 0, 10_000)  # at the trace's time origin (clock skew: before its launch)
    b.kernel(launch_ts=60_000, ts=70_000, dur=5_000)
    _, a = _analyze(b, tmp_path)
    s = a.steps[0]
    assert (s.period_ns, s.gpu_busy_ns, s.host_wait_ns) == (75_000, 15_000, 60_000)


def test_a_trace_without_holes_has_an_empty_integer_gap_table(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)
    b.kernel(launch_ts=2_000, ts=20_000, dur=10_000)  # touches: no hole
    _, a = _analyze(b, tmp_path)
    g = a.gaps
    assert len(g) == 0
    for col in (g.step, g.start_ns, g.end_ns, g.cls, g.stream, g.activity, g.tail):
        assert len(col) == 0
    assert (g.start_ns.dtype, g.stream.dtype, g.activity.dtype) == (np.int64,) * 3
    assert len(a.gap_stats) == 0 and list(a.gap_stats) == []


def test_graph_internal_is_checked_before_sync_wait(tmp_path: Path) -> None:
    """A hole inside a replay stays graph_internal even where the sync_wait condition holds too
    (skewed clocks: the replay ran before its launch call, a sync ended inside the hole)."""
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(50_000, name="cudaGraphLaunch")
    b.gpu(corr, 10_000, 2_000)  # 10-12
    b.gpu(corr, 14_000, 2_000)  # 14-16: hole 12 -> 14, its launch call starts at 50 >= 12
    b.runtime("cudaStreamSynchronize", 11_000, 2_000)  # ends at 13: after 12, before 50
    _, a = _analyze(b, tmp_path)
    assert a.gaps.cls.tolist() == [GapClass.GRAPH_INTERNAL]
    assert (a.steps[0].graph_internal_ns, a.steps[0].sync_wait_ns) == (2_000, 0)


def _nearest_rank(values: list[int], q: float) -> int:
    """By the definition: the smallest value with at least a fraction q of them at or below."""
    ordered = sorted(values)
    return next(v for v in ordered if sum(x <= v for x in ordered) >= q * len(ordered))


@pytest.mark.parametrize("top_step_class_zero", [False, True])
def test_gap_stats_group_by_step_stream_and_class_for_any_step_index(
        top_step_class_zero: bool) -> None:
    """Many gaps in scrambled order, on steps beyond 2**14 (group keys = step * 4 + class beyond
    16 bits; with ``top_step_class_zero`` the largest key is exactly 2**16): every (scope, key,
    class) row is the nearest-rank distribution of exactly its gaps."""
    rng = np.random.default_rng(7)
    n = 300
    pool = [0, 16_384] if top_step_class_zero else [0, 1, 16_383, 16_384, 16_385]
    steps = rng.choice(np.array(pool), n).astype(np.int32)
    cls = rng.integers(0, 4, n).astype(np.int8)
    if top_step_class_zero:
        cls[steps == 16_384] = 0
    stream = rng.choice(np.array([7, 20]), n).astype(np.int64)
    start = rng.integers(0, 10**9, n).astype(np.int64)
    dur = rng.integers(1, 50, n).astype(np.int64)  # few distinct lengths: many ties
    gaps = GapTable(step=steps, start_ns=start, end_ns=start + dur, cls=cls, stream=stream,
                    activity=np.arange(n, dtype=np.int64), tail=np.zeros(n, bool))
    names = tuple(f"s{i}" for i in range(16_386))
    got = {(g.scope, g.key, g.gap_class): (g.count, g.p50_ns, g.p90_ns, g.max_ns, g.sum_ns)
           for g in gap_stats(gaps, names)}
    want = {}
    for scope, keys in (("step", [names[i] for i in steps]),
                        ("stream", [f"stream {s}" for s in stream]), ("all", ["all"] * n)):
        for key in set(keys):
            for c in range(4):
                d = [int(dur[i]) for i in range(n) if keys[i] == key and cls[i] == c]
                if d:
                    want[(scope, key, GAP_CLASS_NAMES[c])] = (
                        len(d), _nearest_rank(d, 0.5), _nearest_rank(d, 0.9), max(d), sum(d))
    assert got == want

