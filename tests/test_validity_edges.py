"""Edges of the data-validity definitions (docs/metrics.md, "Data validity") and of the warning
messages that name them, on hand-built traces and arrays whose answer is known by construction.

Pinned: a zero duration is no negative duration; an event at ts 0 is no negative timestamp; the
nearest-rank p1 / p99 of the far-outside bounds at every small count (by the definition, with
integer arithmetic); the first offending event over several tables (the earliest; on a tie the
first table in gpu, runtime, cpu order); only ``user_annotation`` events named
``ProfilerStep#N`` are step windows; the exact message of a warning (singular and plural, µs to
the ns, names cut at 80 characters, flow events without a duration).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.health.validity import (
    FAR_FACTOR,
    FAR_MIN_MARGIN_NS,
    describe,
    far_bounds_ns,
    far_bounds_sorted,
    screen_values,
)
from traceviz.analyze.model import EventRef


def _screen(b: TraceBuilder, tmp_path: Path):
    return screen_values(traceviz.load(b.write(tmp_path / "t.json")))


def _codes(b: TraceBuilder, tmp_path: Path) -> dict:
    return {w.code: w for w in _screen(b, tmp_path).warnings}


def _hundred_ops(b: TraceBuilder) -> None:
    """100 short ops in the first ms: enough starts for p1/p99 to leave a late event out."""
    for i in range(100):
        b.cpu_op(f"op{i}", i * 10_000, 1_000)


def _nearest_rank(values: list[int], pct: int) -> int:
    """The smallest value with at least pct % of the values at or below it (integer test)."""
    ordered = sorted(values)
    return next(v for v in ordered if 100 * sum(x <= v for x in ordered) >= pct * len(ordered))


@pytest.mark.parametrize("n", [1, 2, 3, 99, 100, 101, 150, 199, 200, 201, 1_000])
def test_far_bounds_are_the_nearest_rank_p1_p99_at_every_count(n: int) -> None:
    rng = np.random.default_rng(n)
    starts = rng.permutation(np.arange(n, dtype=np.int64) * 1_000_000_007)
    p1, p99 = _nearest_rank(starts.tolist(), 1), _nearest_rank(starts.tolist(), 99)
    margin = max(FAR_FACTOR * (p99 - p1), FAR_MIN_MARGIN_NS)
    assert far_bounds_ns(starts) == (p1 - margin, p99 + margin)
    parts = [np.sort(starts[: n // 3]), np.sort(starts[n // 3:])]
    assert far_bounds_sorted(parts) == (p1 - margin, p99 + margin)


def test_a_zero_duration_is_not_negative_and_ts_zero_is_not_negative(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)  # starts at ts 0
    b.kernel(launch_ts=1_000, ts=10_000, dur=0)  # an instant kernel
    s = _screen(b, tmp_path)
    assert s.warnings == () and s.excluded_events == 0


def test_exclusion_leaving_a_single_event_still_bounds_it(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.cpu_op("bad", 5_000, -1_000)
    b.cpu_op("good", 10_000, 1_000)
    codes = _codes(b, tmp_path)
    assert set(codes) == {"negative_duration"}


def test_the_first_offending_event_is_the_earliest_over_the_tables(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.gpu(None, 30_000, -1_000, name="late_kernel")
    b.runtime("cudaLaunchKernel", 20_000, -1_000)  # earlier: named first
    b.cpu_op("later_op", 40_000, -1_000)
    w = _codes(b, tmp_path)["negative_duration"]
    assert w.count == 3
    assert (w.first_event.table, w.first_event.name) == ("runtime", "cudaLaunchKernel")


def test_on_a_tie_the_first_offending_event_is_from_the_first_table(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.cpu_op("op", 20_000, -1_000)
    b.runtime("cudaLaunchKernel", 20_000, -1_000)
    b.gpu(None, 20_000, -1_000, name="kernel")
    w = _codes(b, tmp_path)["negative_duration"]
    assert (w.first_event.table, w.first_event.name) == ("gpu", "kernel")


def test_only_user_annotations_named_profiler_step_are_step_windows(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.x("user_annotation", "my_region", 10_000, 0)  # zero length, but no step
    b.cpu_op("ProfilerStep#2", 20_000, 0)  # a cpu_op, not an annotation
    assert "degenerate_step_windows" not in _codes(b, tmp_path)
    b.step(3, 30_000, 0)
    assert _codes(b, tmp_path)["degenerate_step_windows"].count == 1


def test_value_warnings_state_what_how_many_the_effect_and_the_first_event(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.cpu_op("a", 12_345, -1_000)
    codes = _codes(b, tmp_path)
    assert codes["negative_duration"].message == (
        "dur is negative (the event ends before it starts): 1 event, excluded from every "
        "metric; first: cpu event 'a' at ts=12.345 µs, dur=-1.000 µs")
    b.cpu_op("b", 20_000, -2_000)
    b.x("cpu_op", "c", -5_000, 1_000)
    b.x("cpu_op", "d", 30_000, 1_000)["ts"] = "soon"
    b.x("cpu_op", "e", 40_000, 1_000)["dur"] = "long"
    codes = _codes(b, tmp_path)
    assert codes["negative_duration"].message.startswith(
        "dur is negative (the event ends before it starts): 2 events, excluded from every "
        "metric; first: cpu event 'a'")
    assert codes["negative_timestamp"].message == (
        "ts is negative: 1 event, excluded from every metric; first: cpu event 'c' at "
        "ts=-5.000 µs, dur=1.000 µs")
    assert codes["invalid_timestamp"].message == (
        "ts is NaN, infinite, not a number or out of range: 1 event, excluded from every "
        "metric; first: cpu event 'd' at ts=invalid, dur=1.000 µs")
    assert codes["invalid_duration"].message == (
        "dur is NaN, infinite, not a number or out of range: 1 event, excluded from every "
        "metric; first: cpu event 'e' at ts=40.000 µs, dur=invalid")


def test_described_events_cut_names_beyond_80_characters_and_flows_have_no_duration() -> None:
    n80, n81 = "k" * 80, "k" * 81
    assert describe(EventRef("gpu", n80, 1_500, 2)) == (
        f"gpu event {n80!r} at ts=1.500 µs, dur=0.002 µs")
    assert describe(EventRef("gpu", n81, None, None)) == (
        f"gpu event {'k' * 77 + '...'!r} at ts=invalid, dur=invalid")
    assert describe(EventRef("flow", "ac2g", 7, None)) == "flow event 'ac2g' at ts=0.007 µs"


def test_step_window_and_far_outside_warnings_state_their_definition(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 0)
    b.step(2, 1_000, 1_000)
    codes = _codes(b, tmp_path)
    assert codes["degenerate_step_windows"].message == (
        "ProfilerStep window of no positive length (dur zero, negative, NaN or infinite): "
        "1 window, not used as steps; first: cpu event 'ProfilerStep#1' at ts=0.000 µs, "
        "dur=0.000 µs")
    b.step(3, 5_000, 0)
    assert codes != _codes(b, tmp_path)
    assert _codes(b, tmp_path)["degenerate_step_windows"].message.startswith(
        "ProfilerStep window of no positive length (dur zero, negative, NaN or infinite): "
        "2 windows, not used as steps; first: cpu event 'ProfilerStep#1'")
    _hundred_ops(b)
    b.cpu_op("late", 5_000_000_000, 1_000)  # 5 s after everything else: far outside
    assert _codes(b, tmp_path)["far_outside_time_range"].message == (
        "start far outside the trace's time range (before p1 − margin or after p99 + margin of "
        f"event starts, margin = max({FAR_FACTOR} × (p99 − p1), 1 s)): 1 event, excluded from "
        "every metric; first: cpu event 'late' at ts=5000000.000 µs, dur=1.000 µs")


def test_exclusions_for_several_reasons_in_one_table_add_up(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.step(2, 100_000, 0)  # degenerate: excluded
    b.cpu_op("negative", 10_000, -1_000)  # negative duration: excluded
    b.cpu_op("late", 5_000_000_000, 1_000)  # far outside: excluded
    _hundred_ops(b)
    s = _screen(b, tmp_path)
    assert s.excluded_events == 3
    kept = set(s.trace.cpu["name"].astype(str))
    assert "ProfilerStep#1" in kept and not kept & {"ProfilerStep#2", "negative", "late"}


def test_after_exclusion_the_tables_keep_their_columns_and_per_row_arrays_their_types(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=1_000,
             name="void at::native::vectorized_elementwise_kernel<4>")
    b.gpu(None, 20_000, -1_000, name="broken")  # excluded
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    s = screen_values(trace)
    for table in ("gpu", "runtime", "cpu"):
        assert list(getattr(s.trace, table).columns) == list(getattr(trace, table).columns)
    a = traceviz.analyze(trace)
    assert a.activity_step.dtype == np.int32
    assert a.activity_step.tolist() == [0, -1]
    assert a.activity_family.tolist() == ["aten-elementwise", "excluded"]


def _health(b: TraceBuilder, tmp_path: Path) -> dict:
    return {w.code: w for w in traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json"))).health}


def test_ordering_warnings_state_what_how_many_and_the_first_event(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000, name="a")  # 10-15 µs
    b.kernel(launch_ts=2_000, ts=14_000, dur=5_000, name="b")  # overlaps a on stream 7
    corr = b.kernel(launch_ts=30_000, ts=29_000, dur=1_000, name="early")  # before its launch
    b.x("cuda_runtime", "cudaLaunchKernel", 40_000, 1_000, correlation=corr)  # id reused
    h = _health(b, tmp_path)
    assert h["stream_overlap"].message == (
        "GPU activity starting before the previous one on its stream ended (a stream runs its "
        "work in order: timestamps are wrong): 1 activity, kept; first: gpu event 'b' at "
        "ts=14.000 µs, dur=5.000 µs")
    assert h["gpu_before_launch"].message == (
        "GPU activity starting before its launch call (CPU/GPU clock skew): 1 activity, kept; "
        "first: gpu event 'early' at ts=29.000 µs, dur=1.000 µs")
    assert h["shared_correlation"].message == (
        "runtime call reusing the correlation id of an earlier call: 1 call, the earlier call "
        "owns the GPU activities; first: runtime event 'cudaLaunchKernel' at ts=40.000 µs, "
        "dur=1.000 µs")
    b.kernel(launch_ts=3_000, ts=18_000, dur=5_000, name="c")  # overlaps b
    b.kernel(launch_ts=50_000, ts=49_000, dur=1_000, name="early2")
    b.x("cuda_runtime", "cudaLaunchKernel", 60_000, 1_000, correlation=corr)
    h = _health(b, tmp_path)
    assert ": 2 activities, kept; first: gpu event 'b'" in h["stream_overlap"].message
    assert ": 2 activities, kept; first: gpu event 'early'" in h["gpu_before_launch"].message
    assert ": 2 calls, the earlier call owns" in h["shared_correlation"].message


@pytest.mark.parametrize("later", ["stream", "device"])
def test_stream_overlap_is_found_in_every_stream_not_only_the_first(
        tmp_path: Path, later: str) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=0, dur=10_000, name="first")  # stream 7, device 0: 0-10 µs
    other = {"stream": 8} if later == "stream" else {"stream": 7, "device": 1}
    for name, ts in (("c", 5_000), ("e", 10_000)):  # c 5-15, e 10-20: e overlaps c
        corr = b.launch(1_500)
        b.gpu(corr, ts, 10_000, name=name, **other)
    w = _health(b, tmp_path)["stream_overlap"]
    assert w.count == 1 and w.first_event.name == "e"


@pytest.mark.parametrize(("side", "offset_ns", "flagged"),
                         [("hi", 0, False), ("hi", 1, True), ("lo", 0, False), ("lo", 1, True)])
def test_with_exclusions_an_event_exactly_at_a_far_bound_is_kept_one_ns_beyond_is_far(
        tmp_path: Path, side: str, offset_ns: int, flagged: bool) -> None:
    """The partitioned path (taken once something is excluded) has the bisected path's edges.

    101 kept starts: 100 ops at base + 0, 10, …, 990 µs and the probe. Probe above: p1 = 2nd =
    base + 10 µs, p99 = 100th = base + 990 µs. Probe below: p1 = 2nd = base, p99 = 100th = base
    + 980 µs. The margin is 1 s either way (10 × width < 1 s)."""
    base = 1_000_000_000_000
    b = TraceBuilder()
    b.cpu_op("negative", base + 500_000, -1_000)  # excluded first: the far bounds skip it
    for i in range(100):
        b.cpu_op(f"op{i}", base + i * 10_000, 1_000)
    if side == "hi":
        b.cpu_op("probe", base + 990_000 + FAR_MIN_MARGIN_NS + offset_ns, 1_000)
    else:
        b.cpu_op("probe", base - FAR_MIN_MARGIN_NS - offset_ns, 1_000)
    w = _codes(b, tmp_path).get("far_outside_time_range")
    assert (w is not None) is flagged
    if w is not None:
        assert w.count == 1 and w.first_event.name == "probe"


def test_an_event_already_excluded_is_not_counted_again_as_far_outside(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.gpu(None, 10_000, -1_000, name="negative_kernel")  # every table has an exclusion
    b.runtime("cudaLaunchKernel", 11_000, -1_000)
    b.cpu_op("negative_op", 12_000, -1_000)
    _hundred_ops(b)
    b.x("cpu_op", "before_zero", -5_000_000_000, 1_000)  # negative ts, and 5 s before the rest
    codes = _codes(b, tmp_path)
    assert "far_outside_time_range" not in codes
    assert codes["negative_timestamp"].count == 1
    assert _screen(b, tmp_path).excluded_events == 4


def test_after_exclusion_gaps_name_their_ending_activity_by_loaded_row(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.gpu(None, 1_000, -1_000, name="broken")  # loaded gpu row 0, excluded
    b.kernel(launch_ts=2_000, ts=10_000, dur=1_000, name="a")  # row 1
    b.kernel(launch_ts=20_000, ts=30_000, dur=1_000, name="b")  # row 2: ends the gap
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    a = traceviz.analyze(trace)
    (row,) = a.gaps.activity.tolist()
    assert str(trace.gpu["name"].iat[row]) == "b"


def test_excluded_events_do_not_widen_the_far_bounds(tmp_path: Path) -> None:
    b = TraceBuilder()
    _hundred_ops(b)  # 0 .. 990 µs
    for i in range(5):  # 5 % of the starts at 5 s, all excluded (negative durations)
        b.cpu_op(f"negative{i}", 5_000_000_000 + i, -1_000)
    b.cpu_op("late", 3_000_000_000, 1_000)  # 3 s: far from the kept starts
    w = _codes(b, tmp_path)["far_outside_time_range"]
    assert w.count == 1 and w.first_event.name == "late"
