"""CUDA-graph replay rows (docs/metrics.md, "CUDA-graph replays"), on a hand-built trace.

One row per graph launch call owning at least one activity, in launch order: its step (``None``
outside every step), nodes, kernels (memcpy nodes are nodes, not kernels), the launch call's start
and duration, the first node start, the last node end and the union of the node intervals (nodes
on two streams overlapping count once; touching nodes leave no hole).
"""

from __future__ import annotations

from pathlib import Path

import traceviz
from tests.kineto import TraceBuilder


def test_replay_rows_follow_launch_order_with_exact_spans_busy_and_steps(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.step(2, 100_000, 100_000)
    g1 = b.launch(5_000, 2_000, name="cudaGraphLaunch")
    b.gpu(g1, 10_000, 2_000)  # 10-12
    b.gpu(g1, 12_000, 1_000, cat="gpu_memcpy")  # 12-13, touching: no hole
    b.gpu(g1, 15_000, 1_000)  # 15-16: a 2 µs hole
    b.kernel(launch_ts=20_000, ts=30_000, dur=1_000)  # an ordinary launch between the replays
    g2 = b.launch(105_000, 3_000, name="cuGraphLaunch", cat="cuda_driver")
    b.gpu(g2, 110_000, 10_000, stream=7)  # 110-120
    b.gpu(g2, 115_000, 3_000, stream=8)  # 115-118, inside the other node
    g3 = b.launch(250_000, 1_000, name="cudaGraphLaunch")  # after the last step's end
    b.gpu(g3, 260_000, 1_000)
    b.runtime("cudaGraphLaunch", 270_000, 1_000)  # no nodes: no replay row
    g4 = b.launch(280_000, 1_000, name="cudaGraphLaunch")  # the last replay: one copy, no kernel
    b.gpu(g4, 290_000, 2_000, cat="gpu_memcpy")
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    rows = [(r.correlation, r.step, r.launch_name, r.nodes, r.kernels, r.launch_start_ns,
             r.launch_ns, r.first_start_ns, r.last_end_ns, r.busy_ns) for r in a.graph_replays]
    assert rows == [
        (g1, "ProfilerStep#1", "cudaGraphLaunch", 3, 2, 5_000, 2_000, 10_000, 16_000, 4_000),
        (g2, "ProfilerStep#2", "cuGraphLaunch", 2, 2, 105_000, 3_000, 110_000, 120_000, 10_000),
        (g3, None, "cudaGraphLaunch", 1, 1, 250_000, 1_000, 260_000, 261_000, 1_000),
        (g4, None, "cudaGraphLaunch", 1, 0, 280_000, 1_000, 290_000, 292_000, 2_000),
    ]
    r1 = a.graph_replays[0]
    assert (r1.span_ns, r1.internal_gap_ns, r1.launch_to_first_ns) == (6_000, 2_000, 5_000)


def test_a_trace_without_graph_launches_has_no_replays(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=1_000)
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    assert a.graph_replays == ()
