"""Data-validity health warnings on hand-built traces: each code, its count, its first event,
the edges of each definition, and that invalid values are excluded from the metrics (never 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.health.validity import (
    DATA_VALIDITY_CODES,
    FAR_FACTOR,
    FAR_MIN_MARGIN_NS,
    far_bounds_ns,
    far_bounds_sorted,
)
from traceviz.analyze.model import Analysis, HealthWarning


def analyze_doc(doc: dict[str, Any], tmp_path: Path) -> Analysis:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return traceviz.analyze(traceviz.load(path))


def analyze_b(b: TraceBuilder, tmp_path: Path) -> Analysis:
    return traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))


def by_code(a: Analysis) -> dict[str, HealthWarning]:
    return {h.code: h for h in a.health}


def three_steps() -> TraceBuilder:
    """Three 100 µs steps, one 5 µs kernel each, launched 1 µs in and starting 10 µs in."""
    b = TraceBuilder()
    for i in range(3):
        t0 = i * 100_000
        b.step(i + 1, t0, 100_000)
        b.kernel(launch_ts=t0 + 1_000, ts=t0 + 10_000, dur=5_000, name=f"k{i}")
    return b


def gpu_event(b: TraceBuilder, name: str) -> dict[str, Any]:
    return next(e for e in b.events if e["cat"] == "kernel" and e["name"] == name)


def test_a_clean_trace_has_no_data_validity_warning(tmp_path: Path) -> None:
    a = analyze_b(three_steps(), tmp_path)
    assert not [h for h in a.health if h.strict]
    assert a.totals.excluded_events == 0
    assert a.totals.gpu_busy_ns == 15_000


def test_negative_kernel_duration_is_named_excluded_and_not_zeroed(tmp_path: Path) -> None:
    b = three_steps()
    gpu_event(b, "k1")["dur"] = -5.0
    a = analyze_b(b, tmp_path)
    w = by_code(a)["negative_duration"]
    assert (w.count, w.strict) == (1, True)
    assert w.first_event is not None
    assert (w.first_event.table, w.first_event.name) == ("gpu", "k1")
    assert (w.first_event.ts_ns, w.first_event.dur_ns) == (110_000, -5_000)
    assert "k1" in w.message
    # Excluded: two kernels remain, busy time is theirs, the bad one is counted, not zeroed.
    assert (a.totals.activities, a.totals.excluded_events) == (2, 1)
    assert a.totals.gpu_busy_ns == 10_000
    assert [s.kernels for s in a.steps] == [1, 0, 1]
    assert a.totals.attributed + a.totals.unattributed == a.totals.activities


def test_nan_step_durations_are_invalid_and_degenerate_windows(tmp_path: Path) -> None:
    b = three_steps()
    doc = b.document()
    for e in doc["traceEvents"]:
        if e.get("name") in ("ProfilerStep#2", "ProfilerStep#3"):
            e["dur"] = "NaN"
    a = analyze_doc(doc, tmp_path)
    h = by_code(a)
    assert h["invalid_duration"].count == 2
    assert h["degenerate_step_windows"].count == 2
    first = h["degenerate_step_windows"].first_event
    assert first is not None and (first.name, first.ts_ns, first.dur_ns) == (
        "ProfilerStep#2", 100_000, None)
    assert [s.name for s in a.steps] == ["ProfilerStep#1"]
    # The kernels launched in the dropped windows are unattributed, not silently lost.
    assert (a.totals.attributed, a.totals.unattributed) == (1, 2)


@pytest.mark.parametrize("bad", ["Infinity", "-Infinity", "NaN", "abc", 1e300, True, [1]])
def test_non_time_ts_is_an_invalid_timestamp(tmp_path: Path, bad: Any) -> None:
    b = three_steps()
    gpu_event(b, "k2")["ts"] = bad
    a = analyze_b(b, tmp_path)
    w = by_code(a)["invalid_timestamp"]
    assert w.count == 1
    assert w.first_event is not None
    assert (w.first_event.name, w.first_event.ts_ns) == ("k2", None)
    assert a.totals.activities == 2
    assert a.activity_family.tolist().count("excluded") == 1


def test_bare_nan_and_infinity_tokens_in_the_file_are_invalid_durations(tmp_path: Path) -> None:
    b = three_steps()
    gpu_event(b, "k0")["dur"] = 1.25
    gpu_event(b, "k1")["dur"] = 2.5
    text = json.dumps(b.document()).replace('"dur": 1.25', '"dur": NaN')
    text = text.replace('"dur": 2.5', '"dur": Infinity')
    path = tmp_path / "t.json"
    path.write_text(text)
    a = traceviz.analyze(traceviz.load(path))
    w = by_code(a)["invalid_duration"]
    assert w.count == 2
    assert w.first_event is not None and w.first_event.name == "k0"
    assert a.totals.activities == 1


def test_negative_timestamp_is_named_and_excluded(tmp_path: Path) -> None:
    b = three_steps()
    b.cpu_op("early_op", ts=0, dur=1_000)
    next(e for e in b.events if e["name"] == "early_op")["ts"] = -0.001
    a = analyze_b(b, tmp_path)
    w = by_code(a)["negative_timestamp"]
    assert w.count == 1
    assert w.first_event is not None
    assert (w.first_event.table, w.first_event.ts_ns) == ("cpu", -1)


@pytest.mark.parametrize(("dur_ns", "flagged"), [(0, True), (1, False)])
def test_zero_length_step_window_is_degenerate_one_ns_is_not(
    tmp_path: Path, dur_ns: int, flagged: bool
) -> None:
    b = three_steps()
    b.step(9, 500_000, dur_ns)
    a = analyze_b(b, tmp_path)
    assert ("degenerate_step_windows" in by_code(a)) is flagged
    assert ("ProfilerStep#9" in [s.name for s in a.steps]) is not flagged


@pytest.mark.parametrize(("second_start_ns", "flagged"), [(15_000, False), (14_999, True)])
def test_stream_overlap_edge_touching_is_fine_one_ns_overlap_is_not(
    tmp_path: Path, second_start_ns: int, flagged: bool
) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000, name="a", stream=7)  # 10-15 µs
    b.kernel(launch_ts=2_000, ts=second_start_ns, dur=5_000, name="b", stream=7)
    b.kernel(launch_ts=3_000, ts=12_000, dur=5_000, name="other_stream", stream=8)
    a = analyze_b(b, tmp_path)
    w = by_code(a).get("stream_overlap")
    assert (w is not None) is flagged
    if w is not None:
        assert w.count == 1 and w.strict
        assert w.first_event is not None and w.first_event.name == "b"


@pytest.mark.parametrize(("gpu_start_ns", "flagged"), [(5_000, False), (4_999, True)])
def test_gpu_before_launch_edge_at_launch_start_is_fine(
    tmp_path: Path, gpu_start_ns: int, flagged: bool
) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=5_000, ts=gpu_start_ns, dur=1_000, name="early")
    a = analyze_b(b, tmp_path)
    w = by_code(a).get("gpu_before_launch")
    assert (w is not None) is flagged
    if w is not None:
        assert w.first_event is not None and w.first_event.name == "early"


def test_correlation_shared_by_two_runtime_calls_is_named(tmp_path: Path) -> None:
    b = three_steps()
    corr = b.kernel(launch_ts=201_000, ts=220_000, dur=1_000, name="k3")
    b.x("cuda_runtime", "cudaLaunchKernel", 250_000, 1_000, correlation=corr)
    a = analyze_b(b, tmp_path)
    w = by_code(a)["shared_correlation"]
    assert w.count == 1
    assert w.first_event is not None and w.first_event.ts_ns == 250_000
    # The earlier call owns the activity (unchanged rule), so step 3 still has k3.
    assert a.steps[2].kernels == 2


def test_far_bounds_are_p1_p99_plus_ten_times_their_width_at_least_one_second() -> None:
    starts = np.arange(0, 200 * 1_000_000_000, 1_000_000_000, dtype=np.int64)  # 0..199 s
    p1, p99 = 1_000_000_000, 197_000_000_000  # nearest-rank: 2nd and 198th of 200
    margin = FAR_FACTOR * (p99 - p1)
    assert far_bounds_ns(starts) == (p1 - margin, p99 + margin)
    assert far_bounds_ns(np.zeros(5, np.int64)) == (-FAR_MIN_MARGIN_NS, FAR_MIN_MARGIN_NS)
    assert far_bounds_ns(np.zeros(0, np.int64)) is None


@pytest.mark.parametrize("seed", range(30))
def test_far_bounds_bisected_over_sorted_tables_equal_the_partitioned_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    parts = [np.sort(rng.choice([
        rng.integers(-5, 5, n), rng.integers(0, 10**12, n),
        rng.integers(-2**62, 2**62, n), np.full(n, rng.integers(0, 100))])).astype(np.int64)
        for n in rng.integers(0, 300, 3)]
    assert far_bounds_sorted(parts) == far_bounds_ns(np.concatenate(parts))
    assert far_bounds_sorted([np.zeros(0, np.int64)] * 3) is None


@pytest.mark.parametrize(("offset_ns", "flagged"), [(0, False), (1, True)])
def test_event_starting_exactly_at_the_far_bound_is_kept_one_ns_later_is_far(
    tmp_path: Path, offset_ns: int, flagged: bool
) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    for i in range(100):
        b.cpu_op(f"op{i}", ts=i * 10_000, dur=1_000)
    a0 = analyze_b(b, tmp_path)
    assert "far_outside_time_range" not in by_code(a0)
    # With "late", 102 starts: 0 (step), 0, 10 µs, ..., 990 µs, late. Nearest rank:
    # p1 = 2nd = 0, p99 = 101st = 990 µs; margin = max(10 × 990 µs, 1 s) = 1 s.
    hi = 990_000 + FAR_MIN_MARGIN_NS
    b.cpu_op("late", ts=hi + offset_ns, dur=5_000)
    a = analyze_b(b, tmp_path)
    w = by_code(a).get("far_outside_time_range")
    assert (w is not None) is flagged
    if w is not None:
        assert w.count == 1 and w.first_event is not None and w.first_event.name == "late"
        assert a.totals.excluded_events == 1


def test_a_long_annotation_starting_inside_the_range_is_not_far(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 13_000_000_000)  # lasts until the profiler stopped, 13 s later
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)
    a = analyze_b(b, tmp_path)
    assert "far_outside_time_range" not in by_code(a)
    assert [s.name for s in a.steps] == ["ProfilerStep#1"]


def test_far_out_kernel_does_not_stretch_the_gpu_window(tmp_path: Path) -> None:
    b = TraceBuilder()
    for i in range(60):
        t0 = i * 100_000
        b.step(i + 1, t0, 100_000)
        b.kernel(launch_ts=t0 + 1_000, ts=t0 + 10_000, dur=5_000)
    b.gpu(None, ts=10**15, dur=5_000, name="stray")  # ~11.6 days later
    a = analyze_b(b, tmp_path)
    assert by_code(a)["far_outside_time_range"].count == 1
    assert a.totals.gpu_window_ns == 59 * 100_000 + 5_000


def test_per_row_arrays_still_index_the_loaded_gpu_table(tmp_path: Path) -> None:
    b = three_steps()
    gpu_event(b, "k0")["dur"] = "oops"
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    a = traceviz.analyze(trace)
    assert len(a.activity_step) == len(trace.gpu) == 3
    names = trace.gpu["name"].astype(str).to_numpy()
    assert a.activity_step[names == "k0"].tolist() == [-1]
    assert a.activity_step[names == "k2"].tolist() == [2]
    enders = names[a.gaps.activity]
    assert "k0" not in enders.tolist()
    assert set(enders.tolist()) <= {"k1", "k2"}


def test_every_data_validity_code_is_marked_strict_and_only_those() -> None:
    informational = HealthWarning("no_gpu_activity", "x")
    assert not informational.strict
    assert len(set(DATA_VALIDITY_CODES)) == len(DATA_VALIDITY_CODES) == 10


def test_real_h200_traces_have_no_data_validity_warning() -> None:
    from tests.conftest import gpu_traces

    paths = gpu_traces()
    if not paths:
        pytest.skip("tests/data/gpu is absent")
    for p in paths:
        a = traceviz.analyze(traceviz.load(p))
        assert not [h.code for h in a.health if h.strict], p.name
        assert a.totals.excluded_events == 0
