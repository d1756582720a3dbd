"""Host-wait sources on hand-built traces: every answer is known by construction (ns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import traceviz
from tests.kineto import BWD_TID, TraceBuilder
from traceviz.analyze.host_wait import UNTRACED, HostWaitSources, top_rows
from traceviz.vocab import GapClass


def run(b: TraceBuilder, tmp_path: Path) -> tuple[traceviz.Analysis, HostWaitSources]:
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    assert a.host_wait_sources is not None
    return a, a.host_wait_sources


def self_ns(h: HostWaitSources, step: int | None = None) -> dict[str, int]:
    return {r.source: r.host_wait_ns for r in h.table(step).self}


def incl_ns(h: HostWaitSources, step: int | None = None) -> dict[str, int]:
    return {r.source: r.host_wait_ns for r in h.table(step).inclusive}


def flame(h: HostWaitSources) -> dict[tuple[str, ...], tuple[int, int]]:
    """Call path (root first) → (self ns, inclusive ns) over the trace."""
    inc = h.path_inclusive_ns()
    out = {}
    for i in range(len(h.path_parent)):
        path, j = [], i
        while j >= 0:
            path.append(h.sources[h.path_source[j]])
            j = h.path_parent[j]
        out[tuple(reversed(path))] = (int(h.path_self_ns[i]), int(inc[i]))
    return out


def assert_sums(a: traceviz.Analysis, h: HostWaitSources) -> None:
    """Self time sums to host_wait + sync_wait exactly, per step and over the trace."""
    for i, s in enumerate(a.steps):
        assert sum(self_ns(h, i).values()) == s.host_wait_ns + s.sync_wait_ns
    assert h.total_ns == a.totals.host_wait_ns + a.totals.sync_wait_ns


def first_kernel(b: TraceBuilder) -> None:
    """Kernel A: launched at 1 µs, runs 3–10 µs, so the next gap starts at 10 µs."""
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)


def test_nested_ops_split_the_window_and_the_launch_call_takes_the_tail(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("outer", 10_000, 30_000)  # 10–40 µs
    b.cpu_op("inner", 15_000, 10_000)  # 15–25 µs
    b.kernel(launch_ts=30_000, launch_dur=2_000, ts=35_000, dur=5_000)  # gap 10–35 µs
    a, h = run(b, tmp_path)
    assert a.steps[0].host_wait_ns == 25_000
    # window [10, 30): outer 10–15 and 25–30, inner 15–25; tail [30, 35): the launch call.
    assert self_ns(h) == {"outer": 10_000, "inner": 10_000, "cudaLaunchKernel": 5_000}
    assert incl_ns(h) == {"outer": 25_000, "inner": 10_000, "cudaLaunchKernel": 5_000}
    t = h.table()
    assert [r.source for r in t.self] == ["inner", "outer", "cudaLaunchKernel"]  # ns, then name
    assert t.inclusive[0].share == 1.0 and t.self[2].share == 0.2
    assert all(r.gaps == 1 for r in t.self)
    assert flame(h) == {
        ("outer",): (10_000, 25_000),
        ("outer", "inner"): (10_000, 10_000),
        ("outer", "cudaLaunchKernel"): (5_000, 5_000),
    }
    assert_sums(a, h)


def test_event_edges_at_gap_start_and_launch_start(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("ends_at_gap_start", 5_000, 5_000)  # 5–10 µs: touches the window, covers nothing
    b.cpu_op("starts_at_gap_start", 10_000, 4_000)  # 10–14 µs
    b.cpu_op("ends_at_launch", 26_000, 4_000)  # 26–30 µs: counted up to the launch start
    b.cpu_op("starts_at_launch", 30_000, 500)  # 30–30.5 µs: open at the launch start → tail
    b.kernel(launch_ts=30_200, launch_dur=100, ts=31_000, dur=1_000)
    a, h = run(b, tmp_path)
    # gap 10–31 µs; window ends at the launch start 30.2 µs.
    assert self_ns(h) == {
        "starts_at_gap_start": 4_000,
        UNTRACED: 12_000,  # 14–26 µs
        "ends_at_launch": 4_000,
        "starts_at_launch": 200,  # 30–30.2 µs, inside the window
        "cudaLaunchKernel": 800,  # tail 30.2–31 µs: the launch call is open at its start
    }
    assert incl_ns(h)["starts_at_launch"] == 1_000  # window 200 + the tail under it
    assert_sums(a, h)


def test_launch_at_gap_start_gives_all_to_the_tail(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("caller", 9_000, 3_000)
    b.kernel(launch_ts=10_000, launch_dur=1_000, ts=16_000, dur=1_000)  # launch == gap start
    a, h = run(b, tmp_path)
    assert a.steps[0].host_wait_ns == 6_000
    assert self_ns(h) == {"cudaLaunchKernel": 6_000}
    assert incl_ns(h) == {"cudaLaunchKernel": 6_000, "caller": 6_000}
    assert_sums(a, h)


def test_launch_after_gap_end_clips_the_window_to_the_gap(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("slow_python_op", 10_000, 50_000)
    b.kernel(launch_ts=50_000, ts=40_000, dur=1_000)  # GPU starts before its launch (skew)
    a, h = run(b, tmp_path)
    assert a.steps[0].host_wait_ns == 30_000
    assert self_ns(h) == {"slow_python_op": 30_000}
    assert_sums(a, h)


def test_window_with_no_open_event_is_python_or_untraced(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.kernel(launch_ts=20_000, launch_dur=1_000, ts=22_000, dur=1_000)
    a, h = run(b, tmp_path)
    assert self_ns(h) == {UNTRACED: 10_000, "cudaLaunchKernel": 2_000}
    assert incl_ns(h) == self_ns(h)
    assert_sums(a, h)


def test_sync_wait_gap_is_attributed_to_the_sync_call_and_its_callers(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("aten::item", 10_000, 30_000)  # 10–40
    b.cpu_op("aten::_local_scalar_dense", 11_000, 28_000)  # 11–39
    b.runtime("cudaStreamSynchronize", 12_000, 26_000)  # 12–38
    b.cpu_op("aten::add", 44_000, 6_000)  # 44–50
    b.kernel(launch_ts=45_000, launch_dur=1_000, ts=48_000, dur=1_000)  # gap 10–48
    a, h = run(b, tmp_path)
    assert a.gaps.cls[-1] == GapClass.SYNC_WAIT
    assert (a.steps[0].sync_wait_ns, a.steps[0].host_wait_ns) == (38_000, 0)
    assert self_ns(h) == {
        "aten::item": 2_000,
        "aten::_local_scalar_dense": 2_000,
        "cudaStreamSynchronize": 26_000,
        UNTRACED: 4_000,
        "aten::add": 1_000,
        "cudaLaunchKernel": 3_000,
    }
    inc = incl_ns(h)
    assert (inc["aten::item"], inc["aten::_local_scalar_dense"]) == (30_000, 28_000)
    assert_sums(a, h)


def test_recursive_names_count_once_in_the_inclusive_view(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("aten::to", 10_000, 20_000)  # 10–30
    b.cpu_op("aten::to", 12_000, 8_000)  # 12–20, nested in itself
    b.kernel(launch_ts=30_000, launch_dur=1_000, ts=31_000, dur=1_000)
    a, h = run(b, tmp_path)
    assert incl_ns(h)["aten::to"] == 20_000
    assert self_ns(h)["aten::to"] == 20_000
    assert flame(h) == {
        ("aten::to",): (12_000, 20_000),
        ("aten::to", "aten::to"): (8_000, 8_000),
        ("cudaLaunchKernel",): (1_000, 1_000),
    }
    assert_sums(a, h)


def test_improperly_nested_events_are_clamped_counted_and_still_sum(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("a", 10_000, 10_000)  # 10–20
    b.cpu_op("b", 15_000, 10_000)  # 15–25: ends after its parent → clamped to 20
    b.kernel(launch_ts=30_000, launch_dur=1_000, ts=31_000, dur=1_000)
    a, h = run(b, tmp_path)
    assert h.improperly_nested == 1
    assert [(w.code, w.count) for w in a.health if w.code.startswith("improperly")] == [
        ("improperly_nested_cpu_events", 1)]
    assert self_ns(h) == {"a": 5_000, "b": 5_000, UNTRACED: 10_000, "cudaLaunchKernel": 1_000}
    assert_sums(a, h)


def test_window_is_taken_on_the_launch_thread_only(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("main_thread_busy", 10_000, 30_000)  # on the main thread: not the launcher
    b.cpu_op("autograd::engine::evaluate_function: MulBackward0", 12_000, 20_000, tid=BWD_TID)
    corr = b.launch(25_000, 2_000, tid=BWD_TID)
    b.gpu(corr, 30_000, 1_000)
    a, h = run(b, tmp_path)
    assert self_ns(h) == {
        UNTRACED: 2_000,  # 10–12 on the autograd thread
        "autograd::engine::evaluate_function: MulBackward0": 13_000,  # 12–25
        "cudaLaunchKernel": 5_000,  # 25–30
    }
    assert_sums(a, h)


def test_compiled_region_names_what_runs_inside_it(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("Torch-Compiled Region: 0/0", 10_000, 30_000)  # 10–40
    b.cpu_op("## Call CompiledFxGraph fabcdefghijklmnop ##", 12_000, 26_000)  # 12–38
    b.cpu_op("aten::copy_", 13_000, 7_000)  # 13–20: a CUDA-graph input copy
    b.cpu_op("Torch-Compiled Region: 1/0", 20_000, 4_000)  # 20–24: nested region
    b.cpu_op("aten::mm", 21_000, 2_000)  # 21–23
    b.kernel(launch_ts=30_000, launch_dur=2_000, ts=34_000, dur=1_000, api="cudaGraphLaunch")
    a, h = run(b, tmp_path)
    r, fx = "Torch-Compiled Region: 0/0", "Torch-Compiled Region: 0/0 › CompiledFxGraph fabcdefg"
    assert self_ns(h) == {
        r: 2_000,  # 10–12
        fx: 7_000,  # 12–13, 24–30
        "Torch-Compiled Region: 0/0 › input copies": 7_000,
        "Torch-Compiled Region: 1/0": 2_000,  # 20–21, 23–24
        "Torch-Compiled Region: 1/0 › aten::mm": 2_000,
        "Torch-Compiled Region: 0/0 › cudaGraphLaunch": 4_000,  # tail 30–34
    }
    assert incl_ns(h)[r] == 24_000 and incl_ns(h)[fx] == 22_000
    assert incl_ns(h)["Torch-Compiled Region: 1/0"] == 4_000
    assert_sums(a, h)


def test_python_frames_are_sources_when_the_trace_has_stacks(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    first_kernel(b)
    b.cpu_op("train.py(12): step", 8_000, 40_000, cat="python_function")  # 8–48
    b.cpu_op("torch/optim/adamw.py(200): step", 10_000, 25_000, cat="python_function")
    b.cpu_op("Optimizer.step#AdamW.step", 10_000, 25_000, cat="user_annotation")  # same span
    b.cpu_op("aten::_foreach_mul_", 20_000, 10_000)  # 20–30
    b.kernel(launch_ts=40_000, launch_dur=1_000, ts=41_000, dur=1_000)
    a, h = run(b, tmp_path)
    assert h.has_stacks
    assert a.steps[0].cpu_ns == 100_000
    # Equal spans: the annotation is outer, the Python frame inner (tie order).
    assert self_ns(h) == {
        "torch/optim/adamw.py(200): step": 15_000,  # 10–20, 30–35
        "aten::_foreach_mul_": 10_000,
        "train.py(12): step": 5_000,  # 35–40
        "cudaLaunchKernel": 1_000,  # tail 40–41, under train.py
    }
    inc = incl_ns(h)
    assert inc["Optimizer.step#AdamW.step"] == 25_000 and inc["train.py(12): step"] == 31_000
    assert_sums(a, h)


def test_per_step_tables_and_gap_counts(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n, base in ((1, 0), (2, 100_000)):
        b.step(n, base, 100_000)
        b.kernel(launch_ts=base + 1_000, ts=base + 3_000, dur=7_000)
        b.cpu_op("op", base + 10_000, 10_000)
        b.kernel(launch_ts=base + 20_000, launch_dur=1_000, ts=base + 22_000, dur=1_000)
        b.cpu_op("op", base + 23_000, 7 * n * 1_000)
        b.kernel(launch_ts=base + 23_000 + 7 * n * 1_000, launch_dur=1_000,
                 ts=base + 25_000 + 7 * n * 1_000, dur=1_000)
    a, h = run(b, tmp_path)
    t1, t2, t = h.table(0), h.table(1), h.table()
    assert (t1.scope, t2.scope, t.scope) == ("ProfilerStep#1", "ProfilerStep#2", "trace")
    assert incl_ns(h, 0)["op"] == 10_000 + 7_000
    assert incl_ns(h, 1)["op"] == 10_000 + 14_000
    assert {r.source: r.gaps for r in t.inclusive}["op"] == 4
    assert t1.total_ns == a.steps[0].host_wait_ns + a.steps[0].sync_wait_ns
    # The tail hole between the steps (step 1's last kernel → step 2's first) is step 1's.
    assert t1.total_ns == sum(r.host_wait_ns for r in t1.self)
    assert_sums(a, h)
    means = h.per_step_inclusive_ns(np.array([0, 1]))
    assert means["op"] == (17_000 + 24_000) / 2


def test_top_rows_keep_n_and_sum_the_rest(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 200_000)
    first_kernel(b)
    t = 10_000
    for i in range(25):
        b.cpu_op(f"op{i:02d}", t, 1_000 + i)  # op24 longest
        t += 1_000 + i
    b.kernel(launch_ts=t, launch_dur=1_000, ts=t + 1_000, dur=1_000)
    a, h = run(b, tmp_path)
    rows = h.table().self
    top = top_rows(rows, 20, h.total_ns)
    assert len(top) == 21 and top[0].source == "op24"
    assert top[-1].source == "(6 other sources)"
    assert sum(r.host_wait_ns for r in top) == h.total_ns
    assert top_rows(rows[:5], 20, h.total_ns) == rows[:5]
    assert_sums(a, h)


def test_a_gap_whose_window_no_event_overlaps_is_untraced(tmp_path: Path) -> None:
    # Found by the property fuzzer: no step markers, a 1 ns gap [2, 3) ended by a kernel whose
    # launch starts exactly at the gap's end, and no CPU event open on the thread in [2, 3).
    b = TraceBuilder()
    b.runtime("cudaDeviceSynchronize", 0, 1)
    b.gpu(b.launch(1, 1), 1, 1)
    b.gpu(b.launch(3, 1), 3, 0)
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert self_ns(h) == {UNTRACED: 1}
