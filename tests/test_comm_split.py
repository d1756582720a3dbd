"""GPU busy split into compute and communication on one trace (``traceviz/analyze/trace/comm.py``),
on hand-built traces whose answer is known by construction. All times ns.

One step ``[0, 100 µs)``; compute kernels on stream 7, NCCL kernels on streams 20/21. Each test
pins one edge of the definition: touching intervals, two communication streams overlapping,
a memcpy counted as compute, unattributed activities left out, and a trace without
communication getting no split at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.compare.modes import ModeInput, compare
from traceviz.analyze.model import Analysis
from traceviz.analyze.trace.comm import CommStep
from traceviz.report.jsonout import analysis_to_dict


def one_step(tmp_path: Path, *, compute: list[tuple[int, int]], comm: list[tuple[int, int, int]],
             memcpy: list[tuple[int, int]] = (), name: str = "t", steps: int = 1) -> Path:
    """``steps`` steps of 100 µs; in each, compute kernels ``(start, end)``, collectives
    ``(start, end, stream)`` and memcpys ``(start, end)`` at those offsets from the step
    start."""
    b = TraceBuilder()
    for n in range(steps):
        s = n * 100_000
        b.step(n + 1, s, 100_000)
        for a, e in compute:
            b.kernel(launch_ts=s + 100, ts=s + a, dur=e - a, name="gemm")
        for a, e, stream in comm:
            b.collective(s + 200, s + a, e - a, stream=stream)
        for a, e in memcpy:
            corr = b.launch(s + 300, name="cudaMemcpyAsync")
            b.gpu(corr, s + a, e - a, name="Memcpy DtoD (Device -> Device)", cat="gpu_memcpy")
    return b.write(tmp_path / f"{name}.json")


def split(path: Path) -> tuple[Analysis, CommStep]:
    a = traceviz.analyze(path).result
    assert a.comm is not None
    return a, a.comm.steps[0]


def test_partial_overlap_is_exact_and_busy_is_compute_plus_exposed(tmp_path: Path) -> None:
    # compute [10, 40) µs, NCCL [30, 70) µs: overlap 10 µs, exposed 30 µs
    a, s = split(one_step(tmp_path, compute=[(10_000, 40_000)], comm=[(30_000, 70_000, 20)]))
    assert (s.compute_busy_ns, s.comm_ns, s.overlap_ns, s.exposed_comm_ns) == (
        30_000, 40_000, 10_000, 30_000)
    assert s.overlap_share == 0.25
    assert a.steps[0].gpu_busy_ns == s.compute_busy_ns + s.exposed_comm_ns == 60_000
    assert a.compute_busy_ns(0) == 30_000


def test_touching_intervals_overlap_for_zero_ns(tmp_path: Path) -> None:
    # compute ends at 30 µs exactly where the collective starts: nothing hidden
    _, s = split(one_step(tmp_path, compute=[(10_000, 30_000)], comm=[(30_000, 50_000, 20)]))
    assert (s.overlap_ns, s.exposed_comm_ns) == (0, 20_000)


def test_collective_inside_compute_is_fully_hidden(tmp_path: Path) -> None:
    # collective [20, 40) inside compute [10, 50): exposed 0; equal starts pinned too
    _, s = split(one_step(tmp_path, compute=[(10_000, 50_000)], comm=[(10_000, 40_000, 20)]))
    assert (s.comm_ns, s.overlap_ns, s.exposed_comm_ns, s.overlap_share) == (
        30_000, 30_000, 0, 1.0)


def test_two_comm_streams_count_their_union_once(tmp_path: Path) -> None:
    # NCCL [30, 60) on stream 20 and [40, 70) on 21: comm = 40 µs, not 60; compute [50, 80)
    _, s = split(one_step(tmp_path, compute=[(50_000, 80_000)],
                          comm=[(30_000, 60_000, 20), (40_000, 70_000, 21)]))
    assert (s.comm_ns, s.overlap_ns, s.exposed_comm_ns) == (40_000, 20_000, 20_000)


def test_memcpy_is_compute_for_us_but_not_for_hta(tmp_path: Path) -> None:
    # a memcpy [30, 40) beside the collective [30, 50): ours 10 µs overlap, HTA's none
    a, s = split(one_step(tmp_path, compute=[(5_000, 10_000)], comm=[(30_000, 50_000, 20)],
                          memcpy=[(30_000, 40_000)]))
    assert (s.overlap_ns, s.exposed_comm_ns) == (10_000, 10_000)
    assert a.comm is not None
    assert (a.comm.overlap_ns, a.comm.kernel_overlap_ns) == (10_000, 0)
    assert (a.comm.overlap_share, a.comm.hta_overlap_share) == (0.5, 0.0)


def test_overall_is_one_union_over_attributed_activities(tmp_path: Path) -> None:
    p = one_step(tmp_path, compute=[(10_000, 40_000)], comm=[(30_000, 70_000, 20)], steps=3)
    a = traceviz.analyze(p).result
    c = a.comm
    assert c is not None and c.kernels == 3
    assert (c.compute_busy_ns, c.comm_ns, c.overlap_ns, c.exposed_comm_ns) == (
        90_000, 120_000, 30_000, 90_000)
    assert c.sums() == CommStep(-1, 90_000, 120_000, 30_000, comm_kernels=3)


def test_trace_without_communication_has_no_split_and_no_json_key(tmp_path: Path) -> None:
    p = one_step(tmp_path, compute=[(10_000, 40_000)], comm=[])
    an = traceviz.analyze(p)
    assert an.result.comm is None
    assert an.result.compute_busy_ns(0) == an.result.steps[0].gpu_busy_ns
    assert "communication" not in analysis_to_dict(an.trace, an.result)
    assert len(an.communication) == 0


def test_every_format_and_frame_carries_the_split(tmp_path: Path) -> None:
    an = traceviz.analyze(one_step(tmp_path, compute=[(10_000, 40_000)],
                                   comm=[(30_000, 70_000, 20)]))
    doc = analysis_to_dict(an.trace, an.result)["communication"]
    assert doc["overall"]["exposed_comm_us"] == 30.0
    assert doc["steps"][0]["overlap_us"] == 10.0
    df = an.communication
    assert df.loc[0, ["gpu_busy_ns", "compute_busy_ns", "exposed_comm_ns"]].tolist() == [
        60_000, 30_000, 30_000]
    assert "Compute and communication per step" in an.render("md")
    assert "Communication per step" in an.render("text")


def test_fusion_reads_compute_busy_and_waterfall_splits_busy(tmp_path: Path) -> None:
    # baseline: compute [10, 40), collective [30, 70); mode: the same compute, the collective
    # moved to [40, 80) (exposed 30 → 40 µs): GPU busy rose 10 µs, compute busy did not move.
    base = traceviz.analyze(one_step(tmp_path, compute=[(10_000, 40_000)],
                                     comm=[(30_000, 70_000, 20)], name="b", steps=4)).result
    mode = traceviz.analyze(one_step(tmp_path, compute=[(10_000, 40_000)],
                                     comm=[(40_000, 80_000, 20)], name="m", steps=4)).result
    c = compare([ModeInput("eager", None, base), ModeInput("compile", None, mode)],
                baseline="eager")
    w = c.waterfalls[0]
    assert w.comm
    assert (w.parts["compute_busy_ns"], w.parts["exposed_comm_ns"]) == (0.0, 10_000.0)
    assert w.part("gpu_busy_ns") == w.busy_delta_ns == 10_000.0
    fusion = next(v for v in c.verdicts if v.kind == "fusion")
    assert fusion.evidence["gpu_busy_us_per_step"] == [30.0, 30.0]
    assert fusion.evidence["exposed_comm_us_per_step"] == [30.0, 40.0]
    assert fusion.status != "REGRESSION"  # GPU busy rose by exposed comm, not by compute


def test_waterfall_parts_add_up_with_the_split(tmp_path: Path) -> None:
    base = traceviz.analyze(one_step(tmp_path, compute=[(10_000, 40_000)],
                                     comm=[(30_000, 70_000, 20)], name="b", steps=2)).result
    mode = traceviz.analyze(one_step(tmp_path, compute=[(10_000, 20_000)], comm=[],
                                     name="m", steps=2)).result
    w = compare([ModeInput("eager", None, base), ModeInput("x", None, mode)],
                baseline="eager").waterfalls[0]
    assert w.units == "profiled" and w.comm
    assert [k for k, _ in w.components][:2] == ["compute_busy_ns", "exposed_comm_ns"]
    assert sum(w.parts.values()) == pytest.approx(w.delta_ns, abs=1e-6)
    assert w.parts["exposed_comm_ns"] == -30_000.0
