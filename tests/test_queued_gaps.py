"""The ``queued`` gap class and the launch-latency warning, on hand-built traces (times in ns)
and on HTA's A100 CUDA-graph trace, whose GPU starts work ~160 ms after the host issued it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.conftest import SHARED_HTA
from tests.kineto import TraceBuilder
from traceviz.analyze.trace.queued import LAUNCH_LATENCY_WARN_NS, QUEUED_MIN_NS
from traceviz.report.host_wait_section import summary_sentence
from traceviz.vocab import GapClass

Q = QUEUED_MIN_NS
H, S, OI, G, QU = (GapClass.HOST_WAIT, GapClass.SYNC_WAIT, GapClass.OTHER_IDLE,
                  GapClass.GRAPH_INTERNAL, GapClass.QUEUED)


def run(b: TraceBuilder, tmp_path: Path) -> traceviz.Analysis:
    tmp_path.mkdir(parents=True, exist_ok=True)
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    for s in a.steps:
        assert (s.gpu_busy_ns + s.host_wait_ns + s.sync_wait_ns + s.queued_ns
                + s.graph_internal_ns + s.other_idle_ns) == s.period_ns
    return a


def rows(a: traceviz.Analysis) -> list[tuple[int, int, int]]:
    """Every gap row as (start, end, class)."""
    g = a.gaps
    return list(zip(g.start_ns.tolist(), g.end_ns.tolist(), g.cls.tolist(), strict=True))


def one_gap(tmp_path: Path, launch_ts: int, launch_dur: int, gap_end: int,
            gap_start: int = 20_000) -> traceviz.Analysis:
    """Kernel A [10 µs, gap_start), then kernel B at ``gap_end`` launched at ``launch_ts``."""
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=gap_start - 10_000)
    b.kernel(launch_ts=launch_ts, ts=gap_end, dur=1_000, launch_dur=launch_dur)
    return run(b, tmp_path)


def test_a_host_wait_gap_is_split_at_the_launch_return(tmp_path: Path) -> None:
    # Gap [20, 20 + 2Q + 30) µs; the launch runs [25, 30) µs, the kernel starts 2Q + 20 later.
    end = 20_000 + 2 * Q + 30_000
    a = one_gap(tmp_path, launch_ts=25_000, launch_dur=5_000, gap_end=end)
    assert rows(a) == [(20_000, 30_000, H), (30_000, end, QU)]
    s = a.steps[0]
    assert (s.host_wait_ns, s.queued_ns, s.other_idle_ns) == (10_000, end - 30_000, 0)
    assert s.cpu_bound_share == pytest.approx(10_000 / s.period_ns)  # queued is not CPU-bound
    assert (a.gaps.activity[0] == a.gaps.activity[1]) and not a.gaps.tail.any()
    assert a.per_step.queued_ns == end - 30_000 and a.totals.queued_ns == end - 30_000


def test_a_return_exactly_the_threshold_before_the_gap_end_splits_one_ns_later_does_not(
        tmp_path: Path) -> None:
    end = 20_000 + 3 * Q
    at = one_gap(tmp_path / "at", launch_ts=25_000, launch_dur=end - Q - 25_000, gap_end=end)
    assert rows(at) == [(20_000, end - Q, H), (end - Q, end, QU)]
    later = one_gap(tmp_path / "later", launch_ts=25_000, launch_dur=end - Q - 25_000 + 1,
                    gap_end=end)
    assert rows(later) == [(20_000, end, H)]


def test_ordinary_launch_latency_stays_host_wait(tmp_path: Path) -> None:
    # The kernel starts 10 µs after its launch returned, as on an idle GPU: no queued sliver.
    a = one_gap(tmp_path, launch_ts=300_000, launch_dur=5_000, gap_end=315_000)
    assert rows(a) == [(20_000, 315_000, H)]


def test_a_launch_returning_at_or_after_the_gap_end_is_not_queued(tmp_path: Path) -> None:
    exact = one_gap(tmp_path / "exact", launch_ts=25_000, launch_dur=75_000, gap_end=100_000)
    assert rows(exact) == [(20_000, 100_000, H)]
    after = one_gap(tmp_path / "after", launch_ts=25_000, launch_dur=90_000, gap_end=100_000)
    assert rows(after) == [(20_000, 100_000, H)]


def test_a_launch_returning_at_or_before_the_gap_start_makes_the_whole_gap_queued(
        tmp_path: Path) -> None:
    end = 20_000 + 2 * Q
    # A zero-length launch at the gap start: host_wait by the class rule, returned at the start.
    at_start = one_gap(tmp_path / "start", launch_ts=20_000, launch_dur=0, gap_end=end)
    assert rows(at_start) == [(20_000, end, QU)]
    # Launched and returned before the GPU went idle (other_idle before this class existed).
    before = one_gap(tmp_path / "before", launch_ts=12_000, launch_dur=8_000, gap_end=end)
    assert rows(before) == [(20_000, end, QU)]
    early = one_gap(tmp_path / "early", launch_ts=2_000, launch_dur=1_000, gap_end=end)
    assert rows(early) == [(20_000, end, QU)]


def test_a_launch_in_flight_at_the_gap_start_keeps_other_idle_until_it_returns(
        tmp_path: Path) -> None:
    end = 40_000 + 2 * Q
    a = one_gap(tmp_path, launch_ts=15_000, launch_dur=25_000, gap_end=end)
    assert rows(a) == [(20_000, 40_000, OI), (40_000, end, QU)]


def test_an_activity_without_launch_call_neither_fills_nor_ends_a_gap(tmp_path: Path) -> None:
    # It belongs to no step (unattributed), so it never ends a step's gap: the gap is ended
    # by the next attributed activity and classified by that one's launch.
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)
    b.kernel(launch_ts=25_000, ts=20_000 + 3 * Q, dur=1_000, stream=8)  # returns at 26 µs
    b.gpu(None, 20_000 + Q, 1_000, stream=9)  # no launch call
    a = run(b, tmp_path)
    assert rows(a) == [(20_000, 26_000, H), (26_000, 20_000 + 3 * Q, QU)]
    assert a.totals.unlinked == 1


def test_split_queued_leaves_gaps_without_launch_call_alone() -> None:
    from traceviz.analyze.trace.queued import split_queued
    cols = {"start": np.array([0, 0]), "end": np.array([10 * Q, 10 * Q]),
            "cls": np.array([OI, H], np.int8), "step": np.array([0, 1])}
    out = split_queued(np.array([0, 0]), np.array([False, True]), cols)
    assert out["cls"].tolist() == [OI, QU] and out["end"].tolist() == [10 * Q, 10 * Q]
    assert out["step"].tolist() == [0, 1]


def test_a_tail_gap_is_split_at_the_next_steps_launch_return(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)
    b.step(2, 10_000_000, 1_000)
    b.kernel(launch_ts=10_000_000, ts=10_000_000 + 3 * Q, dur=1_000, launch_dur=100)
    a = run(b, tmp_path)
    assert rows(a) == [(20_000, 10_000_100, H), (10_000_100, 10_000_000 + 3 * Q, QU)]
    assert a.gaps.tail.all() and a.gaps.step.tolist() == [0, 0]


def test_of_several_activities_starting_at_the_gap_end_the_first_launched_decides(
        tmp_path: Path) -> None:
    end = 20_000 + 3 * Q
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)
    b.kernel(launch_ts=30_000, ts=end, dur=1_000, stream=8, launch_dur=1_000)  # returns at 31
    b.kernel(launch_ts=25_000, ts=end, dur=1_000, stream=9, launch_dur=2_000)  # first: 27
    a = run(b, tmp_path)
    assert rows(a) == [(20_000, 27_000, H), (27_000, end, QU)]
    assert a.gaps.stream.tolist() == [9, 9]


def test_a_sync_wait_gap_is_split_like_a_host_wait_gap(tmp_path: Path) -> None:
    end = 60_000 + 2 * Q
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=10_000)
    b.runtime("cudaStreamSynchronize", 15_000, 35_000)  # ends at 50, inside the gap
    b.kernel(launch_ts=55_000, ts=end, dur=1_000, launch_dur=5_000)  # returns at 60
    a = run(b, tmp_path)
    assert rows(a) == [(20_000, 60_000, S), (60_000, end, QU)]
    assert (a.steps[0].sync_wait_ns, a.steps[0].queued_ns) == (40_000, 2 * Q)


def test_graph_internal_gaps_are_never_queued(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    corr = b.launch(1_000, 2_000, name="cudaGraphLaunch")
    b.gpu(corr, 10_000, 5_000)
    b.gpu(corr, 15_000 + 3 * Q, 5_000)  # a hole of 3Q inside the replay, launch long returned
    a = run(b, tmp_path)
    assert rows(a) == [(15_000, 15_000 + 3 * Q, G)]


def test_gap_stats_count_each_part_in_its_class_and_host_wait_sources_skip_queued(
        tmp_path: Path) -> None:
    end = 20_000 + 2 * Q + 30_000
    a = one_gap(tmp_path, launch_ts=25_000, launch_dur=5_000, gap_end=end)
    stats = {(g.scope, g.gap_class): g for g in a.gap_stats}
    assert stats[("all", "host_wait")].count == 1 and stats[("all", "queued")].count == 1
    assert stats[("all", "queued")].sum_ns == end - 30_000
    hw = a.host_wait_sources
    assert hw is not None and hw.total_ns == 10_000  # [20, 25) untraced + [25, 30) the launch
    own = {r.source: r.host_wait_ns for r in hw.table().self}
    assert own["cudaLaunchKernel"] == 5_000  # the call itself, not the queued time after it


def latency_trace(tmp_path: Path, latencies: list[int]) -> traceviz.Analysis:
    """One kernel per latency, each launched 10 ms after the previous and starting
    ``latency`` ns after its launch call starts."""
    b = TraceBuilder()
    b.step(1, 0, 10_000_000 * (len(latencies) + 1))
    for i, lat in enumerate(latencies):
        t = 10_000_000 * i + 1_000
        b.kernel(launch_ts=t, ts=t + lat, dur=1_000, name=f"k{i}")
    return run(b, tmp_path)


def test_launch_latency_warning_fires_at_a_median_of_the_threshold_and_names_the_worst(
        tmp_path: Path) -> None:
    m = LAUNCH_LATENCY_WARN_NS
    a = latency_trace(tmp_path / "at", [10_000, m, m + 5_000, 3 * m, 20_000])
    (w,) = [h for h in a.health if h.code == "launch_latency_high"]
    assert not w.strict and w.count == 3  # the calls at or above the threshold
    assert "median launch-to-start latency 1.000 ms over 5 launch calls" in w.message
    assert "worst 3.000 ms (cudaLaunchKernel at ts=30001.000 µs → k3 at ts=33001.000 µs)" \
        in w.message
    assert w.first_event is not None and w.first_event.ts_ns == 10_001_000  # earliest offender
    below = latency_trace(tmp_path / "below", [10_000, m - 1, m + 5_000, 3 * m, 20_000])
    assert not [h for h in below.health if h.code == "launch_latency_high"]


HTA_A100 = SHARED_HTA / "a100_compile_cudagraph_triton_nccl_rank0.json.gz"


@pytest.mark.skipif(not HTA_A100.is_file(), reason="../shared/cases/hta is absent")
def test_hta_a100_long_queue_is_queued_not_host_wait() -> None:
    r = traceviz.analyze(HTA_A100).result
    by_name = {s.name: s for s in r.steps}
    s551, s553 = by_name["ProfilerStep#551"], by_name["ProfilerStep#553"]
    # Before: #553 had 155.5 ms of host_wait, #551 156.5 ms of sync_wait, each in one gap whose
    # launch returned ~9 ms into it. Now that gap is ~9 ms of host (sync) wait, then ~146 ms
    # queued, alike in both steps; each step's host + sync wait is ~10 ms, not ~157 ms.
    g = r.gaps
    for s, before in ((s551, GapClass.SYNC_WAIT), (s553, GapClass.HOST_WAIT)):
        (q,) = np.flatnonzero((g.step == s.index) & (g.cls == GapClass.QUEUED)
                              & (g.duration_ns > 140_000_000))
        assert g.activity[q - 1] == g.activity[q] and g.end_ns[q - 1] == g.start_ns[q]
        assert g.cls[q - 1] == before and g.duration_ns[q - 1] < 9_000_000
        assert 146_000_000 <= g.duration_ns[q] < 147_000_000
        assert s.host_wait_ns + s.sync_wait_ns < 11_000_000
    big = np.flatnonzero((r.gaps.cls == GapClass.QUEUED)
                         & (r.gaps.duration_ns > 140_000_000))
    assert sorted({r.steps[i].name for i in r.gaps.step[big]}) == [
        f"ProfilerStep#{n}" for n in range(550, 555)]
    hw = r.host_wait_sources
    assert hw is not None
    sentence = summary_sentence(hw, r.totals.cpu_bound_share) or ""
    assert "cudaLaunchKernel" not in sentence and "CPU-bound" in sentence
    (w,) = [h for h in r.health if h.code == "launch_latency_high"]
    assert "median launch-to-start latency 162." in w.message
    assert "worst 198." in w.message and "Memcpy DtoD" in w.message
