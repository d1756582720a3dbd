"""Comparison rows and the GPU-period waterfall on hand-built run directories."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from tests.synthetic_runs import standard_run
from traceviz.analyze.compare.modes import compare
from traceviz.analyze.compare.waterfall import COMPONENTS
from traceviz.report.compare_report import load_run_dir, load_traces


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return standard_run(tmp_path_factory.mktemp("run"))


def test_waterfall_parts_add_up_exactly_to_the_change_in_mean_period(run_dir: Path) -> None:
    inputs = load_run_dir(run_dir).modes
    comparison = compare(inputs)
    analyses = {i.mode: i.analysis for i in inputs}
    for w in comparison.waterfalls:
        assert set(w.parts) == {k for k, _ in COMPONENTS}
        exact = []
        for key, _ in COMPONENTS:
            means = []
            for mode in (w.mode, w.baseline):
                steps = [s for s in analyses[mode].steps if s.period_ns > 0]
                means.append(Fraction(sum(getattr(s, key) for s in steps), len(steps)))
            exact.append(means[0] - means[1])
            assert w.parts[key] == float(exact[-1])
        assert sum(exact) == Fraction(w.period_ns) - Fraction(w.baseline_period_ns)
    compile_w = next(w for w in comparison.waterfalls if w.mode == "compile")
    assert compile_w.parts["gpu_busy_ns"] == -50_000  # 20 x 10 µs -> 5 x 30 µs per step


def test_rows_carry_manifest_timing_and_trace_medians(run_dir: Path) -> None:
    rows = {r.mode: r for r in compare(load_run_dir(run_dir).modes).rows}
    eager, comp = rows["eager"], rows["compile"]
    assert (eager.kernels, eager.launches, comp.kernels, comp.launches) == (20, 20, 5, 5)
    assert eager.time_median_ms == 0.5 and eager.time_p10_ms == pytest.approx(0.495)
    assert comp.inflation == pytest.approx(comp.period_ms / 0.25)
    assert rows["cudagraph"].kernels_per_launch == 5
    assert eager.correctness_ok is True and eager.peak_mem_bytes == 64 * 2**20
    broken = rows["broken"]
    assert broken.status == "failed" and "out of memory" in (broken.reason or "")
    assert broken.kernels is None and broken.period_ms is None


def test_baseline_defaults_to_eager_and_can_be_chosen(run_dir: Path) -> None:
    inputs = load_run_dir(run_dir).modes
    assert compare(inputs).baseline == "eager"
    chosen = compare(inputs, baseline="compile")
    assert chosen.baseline == "compile"
    assert {v.mode for v in chosen.verdicts} == {"eager", "cudagraph", "broken"}


def test_mode_that_did_not_run_gets_inconclusive_verdicts_and_no_waterfall(run_dir: Path) -> None:
    comparison = compare(load_run_dir(run_dir).modes)
    assert "broken" not in {w.mode for w in comparison.waterfalls}
    broken = [v for v in comparison.verdicts if v.mode == "broken"]
    assert [(v.kind, v.status) for v in broken] == [
        ("speed", "INCONCLUSIVE"), ("fusion", "INCONCLUSIVE"), ("launch", "INCONCLUSIVE")]
    assert all("out of memory" in v.explanation for v in broken)
    headline = comparison.headline("broken")
    assert headline is not None
    assert headline.text == "not measured: failed: RuntimeError: CUDA out of memory"


def test_plain_traces_are_named_after_their_files(run_dir: Path) -> None:
    loaded = load_traces([run_dir / "eager.pt.trace.json.gz", run_dir / "compile.pt.trace.json.gz",
                          run_dir / "compile.pt.trace.json.gz"])
    assert [m.mode for m in loaded.modes] == ["eager", "compile", "compile#2"]
    assert all(m.manifest is None for m in loaded.modes)


def test_inflation_is_the_manifests_adjacent_ratio_when_recorded_else_over_the_timing_median():
    from traceviz.analyze.compare.modes import ModeInput, build_row

    timing = {"median_ms": 0.5}
    adjacent = {"step_ms": 1.2, "adjacent_unprofiled_ms": 0.4, "inflation": 3.0}
    row = build_row(ModeInput("eager", None, None, manifest={
        "status": "ok", "timing": timing, "profiled": adjacent,
        "stack_profiled": {"step_ms": 2.0, "adjacent_unprofiled_ms": 0.5, "inflation": 4.0}}))
    assert (row.inflation, row.stack_inflation) == (3.0, 4.0)
    older = build_row(ModeInput("eager", None, None, manifest={
        "status": "ok", "timing": timing, "profiled": {"step_ms": 1.2, "inflation": 9.9},
        "stack_profiled": {"step_ms": 2.0, "inflation": 9.9}}))
    assert older.inflation == pytest.approx(1.2 / 0.5)
    assert older.stack_inflation == pytest.approx(2.0 / 0.5)
