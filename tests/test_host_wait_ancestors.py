"""Step ancestors (events enclosing a step marker on its thread) are not host-wait sources;
every edge of "start ≤ marker start and end ≥ marker end" pinned on hand-built traces (ns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kineto import BWD_TID, CPU_TID, TraceBuilder
from tests.test_host_wait_handbuilt import assert_sums, flame, incl_ns, run, self_ns
from traceviz.analyze.host_wait import UNTRACED

STEP_START, STEP_END = 10_000, 110_000


def one_gap(b: TraceBuilder) -> None:
    """Step 1 is 10–110 µs. Kernel A runs 13–20 µs; the launch of B at 55 µs (2 µs), B at 60 µs:
    one host-wait gap 20–60 µs, waiting window 20–55, launch tail 55–60."""
    b.step(1, STEP_START, STEP_END - STEP_START)
    b.kernel(launch_ts=11_000, ts=13_000, dur=7_000)
    b.kernel(launch_ts=55_000, launch_dur=2_000, ts=60_000, dur=1_000)


@pytest.mark.parametrize(("start", "end"), [
    (STEP_START, STEP_END),  # equal start and equal end: still encloses the marker
    (STEP_START - 5_000, STEP_END),  # equal end
    (STEP_START, STEP_END + 10_000),  # equal start
    (0, 200_000),  # strictly around
], ids=["equal-both", "equal-end", "equal-start", "around"])
def test_an_event_enclosing_the_step_marker_is_not_a_source(
        tmp_path: Path, start: int, end: int) -> None:
    b = TraceBuilder()
    one_gap(b)
    b.cpu_op("harness.py(250): run", start, end - start, cat="python_function")
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert self_ns(h) == {UNTRACED: 35_000, "cudaLaunchKernel": 5_000}
    assert "harness.py(250): run" not in h.sources


@pytest.mark.parametrize(("start", "end"), [
    (STEP_START, STEP_END - 1),  # starts with the step, ends 1 ns before it
    (STEP_START + 1, 200_000),  # starts 1 ns after the step, ends after it
    (STEP_START - 5_000, STEP_END - 1),  # straddles the step's start
], ids=["inside-1ns-short", "starts-1ns-late", "straddles-start"])
def test_an_event_that_does_not_enclose_the_marker_stays_a_source(
        tmp_path: Path, start: int, end: int) -> None:
    b = TraceBuilder()
    one_gap(b)
    b.cpu_op("train.py(12): step", start, end - start, cat="python_function")
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert self_ns(h) == {"train.py(12): step": 35_000, "cudaLaunchKernel": 5_000}
    assert incl_ns(h)["train.py(12): step"] == 40_000


def test_children_of_an_ancestor_become_roots_and_the_rest_is_untraced(tmp_path: Path) -> None:
    b = TraceBuilder()
    one_gap(b)
    b.cpu_op("runpy(198): _run_module_as_main", 0, 300_000, cat="python_function")
    b.cpu_op("harness.py(250): run", 1_000, 250_000, cat="python_function")
    b.cpu_op("train.py(12): step", 30_000, 40_000, cat="python_function")  # 30–70 µs
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    # Window 20–55: untraced 20–30, step 30–55; tail 55–60 in the launch call inside step.
    assert self_ns(h) == {UNTRACED: 10_000, "train.py(12): step": 25_000,
                          "cudaLaunchKernel": 5_000}
    assert flame(h) == {(UNTRACED,): (10_000, 10_000),
                        ("train.py(12): step",): (25_000, 30_000),
                        ("train.py(12): step", "cudaLaunchKernel"): (5_000, 5_000)}


def test_an_event_enclosing_a_later_step_is_an_ancestor_everywhere(tmp_path: Path) -> None:
    # `loop` encloses step 2 only; it is excluded also where it overlaps step 1's gap.
    b = TraceBuilder()
    one_gap(b)
    b.step(2, 200_000, 100_000)
    b.cpu_op("loop.py(3): epoch", 50_000, 260_000, cat="python_function")  # 50–310 µs
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert "loop.py(3): epoch" not in h.sources
    assert self_ns(h, 0) == {UNTRACED: 35_000, "cudaLaunchKernel": 5_000}


def test_ancestors_are_taken_per_thread(tmp_path: Path) -> None:
    # The marker is on the main thread; the same span on the launch thread (autograd's) is not
    # around any marker of its own thread, so it stays a source.
    b = TraceBuilder()
    b.step(1, STEP_START, STEP_END - STEP_START, tid=CPU_TID)
    b.kernel(launch_ts=11_000, ts=13_000, dur=7_000)
    b.cpu_op("autograd::engine::evaluate_function: MmBackward0", 0, 200_000, tid=BWD_TID)
    corr = b.launch(55_000, 2_000, tid=BWD_TID)
    b.gpu(corr, 60_000, 1_000)
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert incl_ns(h)["autograd::engine::evaluate_function: MmBackward0"] == 40_000
