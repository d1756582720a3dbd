"""A trace of a step that ran on the CPU (no GPU activity, no launch call) is named a CPU-only
run, and a comparison of CPU runs keeps its speed verdicts and says why kernel, launch and
fusion evidence are absent, instead of calling its traces unusable. A CUDA trace whose GPU
activity CUPTI lost (launch calls, no activity) keeps the old reading."""

from __future__ import annotations

from pathlib import Path

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.compare.modes import CPU_RUN, ModeInput, compare
from traceviz.analyze.model import CPU_ONLY, Analysis


def cpu_trace(tmp_path: Path, name: str, op_ns: int) -> Analysis:
    b = TraceBuilder()
    for i in range(3):
        b.step(i, i * 100_000, 90_000)
        b.cpu_op("aten::add", i * 100_000 + 1_000, op_ns)
    return traceviz.analyze(b.write(tmp_path / f"{name}.json")).result


def cupti_lost_trace(tmp_path: Path, name: str) -> Analysis:
    b = TraceBuilder()
    for i in range(3):
        b.step(i, i * 100_000, 90_000)
        b.launch(i * 100_000 + 1_000)  # a kernel launch whose kernel CUPTI never recorded
        b.runtime("cudaStreamSynchronize", i * 100_000 + 5_000, 1_000)  # not a launch
    return traceviz.analyze(b.write(tmp_path / f"{name}.json")).result


def manifest(median_ms: float) -> dict:
    return {"status": "ok", "timing": {"median_ms": median_ms, "p10_ms": median_ms,
                                       "p90_ms": median_ms, "noisy": False}}


def test_a_trace_without_gpu_activity_or_launch_calls_is_a_cpu_only_run(tmp_path):
    health = cpu_trace(tmp_path, "cpu", 50_000).health
    assert [h.code for h in health] == [CPU_ONLY]
    assert "CPU-only run" in health[0].message
    assert not health[0].strict


def test_a_cuda_trace_whose_activity_was_lost_counts_its_launch_calls(tmp_path):
    health = cupti_lost_trace(tmp_path, "lost").health
    lost = [h for h in health if h.code == "no_gpu_activity"]
    assert len(lost) == 1 and lost[0].count == 3  # the synchronizes are not launches
    assert "3 launch calls: CUPTI did not record" in lost[0].message
    assert CPU_ONLY not in [h.code for h in health]


def test_cpu_runs_are_compared_on_speed_and_say_why_the_gpu_evidence_is_absent(tmp_path):
    c = compare([ModeInput("eager", None, cpu_trace(tmp_path, "eager", 80_000), manifest(8.0)),
                 ModeInput("compile", None, cpu_trace(tmp_path, "compile", 20_000),
                           manifest(2.0))])
    verdicts = {v.kind: v for v in c.verdicts if v.mode == "compile"}
    assert verdicts["speed"].status == "WIN"
    for kind in ("fusion", "launch"):
        assert verdicts[kind].status == "INCONCLUSIVE"
        assert verdicts[kind].explanation == CPU_RUN
    for row in c.rows:
        assert row.kernels is None and row.launches is None and row.gpu_busy_ms is None
    headline = c.headline("compile")
    assert headline is not None and CPU_RUN in headline.text
    assert "launches" not in headline.text.replace(CPU_RUN, "")
    assert c.notes == (f"baseline 'eager': {CPU_RUN}",)


def test_a_cuda_baseline_without_gpu_activity_is_still_an_unusable_trace(tmp_path):
    c = compare([ModeInput("eager", None, cupti_lost_trace(tmp_path, "eager"), manifest(8.0)),
                 ModeInput("compile", None, cpu_trace(tmp_path, "compile", 20_000),
                           manifest(2.0))])
    fusion = next(v for v in c.verdicts if v.mode == "compile" and v.kind == "fusion")
    assert fusion.explanation.startswith("baseline 'eager' has no usable trace")
    assert "no analysed step with GPU work" in c.notes[0]
