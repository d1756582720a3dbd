"""A single-trace report of a CPU-only trace (no GPU activity, no launch call) lists each
step's time on the CPU and their median, in every format, instead of GPU tables of zeros; a
trace with GPU work keeps its GPU tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder

#: The ProfilerStep durations (ns) of the CPU-only trace: median 30 µs.
DURATIONS_NS = (10_000, 50_000, 30_000)


@pytest.fixture
def cpu_only(tmp_path: Path) -> traceviz.Analysis:
    b = TraceBuilder()
    for i, dur in enumerate(DURATIONS_NS):
        b.step(i + 1, i * 100_000, dur)
        b.cpu_op("aten::add", i * 100_000 + 1_000, 1_000)
    return traceviz.analyze(b.write(tmp_path / "cpu.json"))


@pytest.fixture
def with_gpu(tmp_path: Path) -> traceviz.Analysis:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.kernel(1_000, 2_000, 5_000, name="add_kernel")
    return traceviz.analyze(b.write(tmp_path / "gpu.json"))


def test_a_cpu_only_trace_is_known_as_one(cpu_only, with_gpu) -> None:
    assert cpu_only.result.cpu_only and not with_gpu.result.cpu_only


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_a_cpu_only_report_lists_cpu_time_per_step_and_no_gpu_table(cpu_only, fmt) -> None:
    out = cpu_only.render(fmt, "inline") if fmt == "html" else cpu_only.render(fmt)
    assert "CPU only" in out
    for value in ("10.0", "50.0", "30.0"):
        assert value in out
    assert "median (all steps)" in out
    for gpu_only in ("Top kernels by GPU time", "GPU busy", "Idle gaps", "host_wait"):
        assert gpu_only not in out
    assert "CPU-only run" in out  # the health note


def test_a_trace_with_gpu_work_keeps_its_gpu_tables(with_gpu) -> None:
    out = with_gpu.render("md")
    assert "Top kernels by GPU time" in out and "CPU only" not in out


def test_a_page_without_figures_carries_no_plotly(cpu_only, with_gpu) -> None:
    page = cpu_only.render("html", "inline")
    assert "plotly" not in page.lower() and len(page) < 100_000
    assert "plotly" in with_gpu.render("html", "cdn")
    with pytest.raises(ValueError, match="plotlyjs must be one of"):
        cpu_only.render("html", "neither")
