"""Edges of the launch-call definition (docs/metrics.md, "Launch call"), on hand-built traces.

Each test pins one edge that a mutant of ``traceviz/analyze/trace/links.py`` survived once
(benchmarks/mutation.py): the ``-1`` of an activity with no launch call, a trace whose runtime
calls carry no correlation at all, integer activity counts, and the earlier of two calls sharing
an id owning the activities.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.trace.links import link_launches


def test_activity_without_a_launch_call_links_to_minus_one(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=1_000)  # linked to its launch call
    b.gpu(None, 20_000, 1_000)  # no correlation at all
    b.gpu(999_999, 30_000, 1_000)  # a correlation no runtime call carries
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    links = link_launches(trace)
    gpu_ts = trace.gpu["ts_ns"].to_numpy() - trace.gpu["ts_ns"].to_numpy().min()
    by_ts = dict(zip(gpu_ts.tolist(), links.launch_row.tolist(), strict=True))
    launch = int(np.flatnonzero(trace.runtime["name"].astype(str) == "cudaLaunchKernel")[0])
    assert by_ts == {0: launch, 10_000: -1, 20_000: -1}
    assert links.launch_row.dtype == np.int64


def test_activities_with_no_correlated_runtime_call_are_all_unlinked(tmp_path: Path) -> None:
    """GPU activities but not one runtime call with a correlation id: nothing links, no error."""
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.gpu(5, 10_000, 1_000)
    b.gpu(6, 20_000, 1_000)
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    links = link_launches(trace)
    assert links.launch_row.tolist() == [-1, -1]
    assert links.activity_count.tolist() == [0] * len(trace.runtime)
    a = traceviz.analyze(trace)
    assert (a.totals.activities, a.totals.unlinked) == (2, 2)


def test_activity_count_is_an_integer_count_per_runtime_call(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(1_000, name="cudaGraphLaunch")
    for k in range(3):
        b.gpu(corr, 10_000 + 2_000 * k, 1_000)
    b.kernel(launch_ts=5_000, ts=30_000, dur=1_000)
    b.runtime("cudaStreamSynchronize", 40_000, 1_000)
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    links = link_launches(trace)
    names = trace.runtime["name"].astype(str).tolist()
    assert dict(zip(names, links.activity_count.tolist(), strict=True)) == {
        "cudaGraphLaunch": 3, "cudaLaunchKernel": 1, "cudaStreamSynchronize": 0,
    }
    assert links.activity_count.dtype == np.int64
    assert links.is_launch.tolist() == [True, True, False]


def test_of_two_calls_sharing_a_correlation_the_earlier_owns_the_activities(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.kernel(launch_ts=1_000, ts=10_000, dur=1_000)
    b.x("cuda_runtime", "cudaLaunchKernel", 5_000, 1_000, correlation=corr)  # later, same id
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    links = link_launches(trace)
    first = int(np.argmin(trace.runtime["ts_ns"].to_numpy()))
    assert links.launch_row.tolist() == [first]
    assert links.activity_count[first] == 1 and links.activity_count.sum() == 1
