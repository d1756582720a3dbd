"""Edges of the step definitions (docs/metrics.md, "Steps"), on hand-built traces.

A call belongs to the last window (sorted by start, end) starting **at or before** it, if it
does not start **after** that window's end; a call on a shared boundary belongs to the later
step; windows that merely touch do not overlap; a trace without markers is one step spanning
every kept event but Python frames (none when it holds only Python frames). Every edge is pinned
at equal timestamps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.trace.steps import find_steps
from traceviz.errors import NotATraceError


def _windows(b: TraceBuilder, tmp_path: Path):
    return find_steps(traceviz.load(b.write(tmp_path / "t.json")))


def test_a_call_at_a_window_start_or_end_belongs_to_it_and_one_past_the_end_to_none(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 10_000, 10_000)  # [10, 20] µs
    w = _windows(b, tmp_path)
    t = np.array([9_999, 10_000, 15_000, 20_000, 20_001], np.int64)
    assert w.locate(t).tolist() == [-1, 0, 0, 0, -1]
    assert w.locate(np.zeros(0, np.int64)).tolist() == []


def test_a_call_on_a_shared_boundary_belongs_to_the_later_step(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    b.step(2, 10_000, 10_000)
    w = _windows(b, tmp_path)
    assert w.locate(np.array([9_999, 10_000, 20_000], np.int64)).tolist() == [0, 1, 1]
    assert w.overlapping == 0  # touching windows do not overlap


def test_overlapping_windows_are_counted_and_the_later_window_takes_its_calls(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000)  # [0, 10]
    b.step(2, 9_999, 10_001)  # [9.999, 20]: starts 1 ns before step 1 ends
    w = _windows(b, tmp_path)
    assert w.overlapping == 1
    assert w.locate(np.array([9_998, 9_999, 10_000], np.int64)).tolist() == [0, 1, 1]


def test_of_two_windows_with_one_start_the_one_ending_last_takes_every_call(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(2, 0, 20_000)  # written first, ends last
    b.step(1, 0, 10_000)
    w = _windows(b, tmp_path)
    assert w.names == ("ProfilerStep#1", "ProfilerStep#2")
    assert w.numbers.tolist() == [1, 2]
    assert w.locate(np.array([0, 5_000, 15_000], np.int64)).tolist() == [1, 1, 1]


def test_inside_a_nested_window_the_inner_step_takes_the_calls_then_none(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 30_000)  # outer [0, 30]
    b.step(2, 10_000, 10_000)  # inner [10, 20]
    w = _windows(b, tmp_path)
    t = np.array([5_000, 10_000, 20_000, 20_001], np.int64)
    assert w.locate(t).tolist() == [0, 1, 1, -1]
    assert w.overlapping == 1


def test_duplicate_step_annotations_are_one_window(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    b.step(1, 0, 10_000)
    b.step(2, 10_000, 10_000)
    w = _windows(b, tmp_path)
    assert (len(w), w.synthetic, w.overlapping) == (2, False, 0)
    assert w.start_ns.tolist() == [0, 10_000] and w.end_ns.tolist() == [10_000, 20_000]


def test_only_cpu_user_annotations_named_profiler_step_make_steps(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.x("gpu_user_annotation", "ProfilerStep#1", 0, 10_000, pid=0, tid=7)
    b.x("user_annotation", "ProfilerStep#2_extra", 0, 10_000)
    b.x("user_annotation", "MyStep#3", 0, 10_000)
    b.x("cpu_op", "ProfilerStep#4", 0, 10_000)
    b.kernel(launch_ts=1_000, ts=2_000, dur=1_000)
    w = _windows(b, tmp_path)
    assert (w.names, w.synthetic) == (("trace",), True)


def test_without_markers_the_step_spans_gpu_runtime_and_ops_but_not_python_frames(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.x("python_function", "train.py(10): step", 0, 100_000)  # frames are not spanned
    b.cpu_op("aten::add", 2_000, 1_000)
    b.kernel(launch_ts=3_000, ts=5_000, dur=1_000)  # runtime call 3-4 µs, kernel 5-6 µs
    b.cpu_op("aten::mul", 7_000, 3_000)  # ends last at 10 µs
    w = _windows(b, tmp_path)
    # numbers are an int64 column, -1 where a step has no number
    assert (w.names, w.numbers.tolist(), w.synthetic, w.overlapping) == (("trace",), [-1], True,
                                                                        0)
    assert (w.start_ns.tolist(), w.end_ns.tolist()) == ([2_000], [10_000])


def test_without_markers_the_gpu_can_bound_the_step_on_both_sides(tmp_path: Path) -> None:
    b = TraceBuilder()
    corr = b.launch(5_000)
    b.gpu(corr, 1_000, 1_000)  # clock skew: the kernel "starts" before its launch
    b.gpu(corr, 8_000, 4_000)  # ends last at 12 µs
    w = _windows(b, tmp_path)
    assert (w.start_ns.tolist(), w.end_ns.tolist()) == ([1_000], [12_000])


def test_a_trace_with_no_events_is_refused_and_one_of_python_frames_only_has_no_steps(
        tmp_path: Path) -> None:
    with pytest.raises(NotATraceError, match="no timed events"):
        traceviz.load(TraceBuilder().write(tmp_path / "empty.json"))
    b = TraceBuilder()
    b.x("python_function", "f", 1_000, 5_000)  # kept, but a step never spans Python frames
    w = _windows(b, tmp_path)
    assert (w.names, w.numbers.tolist(), w.synthetic, w.overlapping) == ((), [], True, 0)
    assert (w.start_ns.dtype, w.end_ns.dtype) == (np.int64, np.int64)
    assert (w.start_ns.tolist(), w.end_ns.tolist()) == ([], [])
    located = w.locate(np.array([0], np.int64))
    assert located.tolist() == [-1] and located.dtype == np.int32


def test_each_window_is_checked_against_its_own_predecessor_for_overlap(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000)  # [0, 10]
    b.step(2, 10_000, 10_000)  # [10, 20]: touches step 1
    b.step(3, 15_000, 15_000)  # [15, 30]: starts before step 2 ends
    b.step(4, 30_000, 5_000)  # [30, 35]: touches step 3
    w = _windows(b, tmp_path)
    assert w.overlapping == 1
    located = w.locate(np.array([14_999, 15_000, 30_000, 36_000], np.int64))
    assert located.tolist() == [1, 2, 3, -1] and located.dtype == np.int32
