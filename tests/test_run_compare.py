"""Two runs compared (``traceviz compare RUN_A RUN_B``) and the regression gate (``check
--against``): hand-edited copies of a committed run dir with known answers, and real runs."""

from __future__ import annotations

import gzip
import json
import shutil
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from traceviz.analyze.review.kernel_diff import KernelChange, KernelDiff
from traceviz.analyze.review.run_diff import Pair, RunModeDiff, compare_runs, host_only_note
from traceviz.analyze.review.run_gate import mode_failures, parse_slowdown
from traceviz.analyze.review.run_speed import (
    Interval,
    ModeTiming,
    RunSpeedChange,
    mode_timing,
    run_speed_change,
    run_status,
)
from traceviz.analyze.stats import paired_speedup
from traceviz.cli.app import app
from traceviz.report import run_compare_report

REPORTS = Path(__file__).resolve().parent.parent / "reports"
RMS = REPORTS / "rmsnorm_residual"
needs_runs = pytest.mark.skipif(not RMS.is_dir(), reason="committed runs absent")


def edited_copy(src: Path, dst: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of run ``src`` whose manifest ``edit`` changed in place."""
    shutil.copytree(src, dst)
    m = json.loads((dst / "manifest.json").read_text())
    edit(m)
    (dst / "manifest.json").write_text(json.dumps(m))
    return dst


def _scale(entry: dict[str, Any], key: str, k: float) -> None:
    """Scale one side's paired blocks by ``k``; the estimate re-recorded from them (as the
    runner records it: the manifest check recomputes it)."""
    p = entry["paired"]
    p[key] = [v * k for v in p[key]]
    p.update(paired_speedup(p["baseline_block_ms"], p["mode_block_ms"]).as_dict())


def test_run_status_is_the_paired_rule_with_edges_unchanged() -> None:
    assert run_status(1.031, 1.2, 0.03) == "faster"
    assert run_status(0.8, 0.969, 0.03) == "slower"
    assert run_status(0.97, 1.03, 0.03) == "unchanged"  # both edges inside
    assert run_status(0.96, 1.01, 0.03) == "inconclusive"


def test_baseline_timing_is_one_median_per_process_and_factors_their_spread() -> None:
    modes = {"eager": {"status": "ok"},
             "x": {"paired": {"baseline": "eager", "baseline_block_ms": [1.0, 1.0, 3.0],
                              "mode_block_ms": [0.5, 0.5, 1.5]}},
             "y": {"paired": {"baseline": "eager", "baseline_block_ms": [2.0, 2.0],
                              "mode_block_ms": [1.0, 4.0]}},
             "z": {"paired": {"baseline": "other", "baseline_block_ms": [9.0],
                              "mode_block_ms": [9.0]}}}
    base = mode_timing(modes, "eager", "eager")
    assert base is not None and base.baseline and base.blocks == (1.0, 2.0)
    assert base.factors == pytest.approx((1.0 / 1.5, 2.0 / 1.5))
    x = mode_timing(modes, "x", "eager")
    assert x is not None and x.blocks == (0.5, 0.5, 1.5) and x.pair_ratios == (2.0, 2.0, 2.0)
    assert mode_timing(modes, "z", "eager") is None  # paired against another baseline
    one = mode_timing({"eager": {}, "x": modes["x"]}, "eager", "eager")
    assert one is not None and one.factors == (1.0,) and one.blocks == (1.0, 1.0, 3.0)


def test_a_uniformly_slower_machine_changes_step_time_but_not_the_paired_ratio() -> None:
    a = ModeTiming((1.0, 1.01, 0.99, 1.0), (0.99, 1.0, 1.01), (2.0, 2.02, 1.98, 2.0))
    b = ModeTiming(tuple(v * 1.1 for v in a.blocks), a.factors, a.pair_ratios)
    c = run_speed_change(a, b, 0.03)
    assert c.speedup.value == pytest.approx(1 / 1.1) and c.change == pytest.approx(0.1)
    assert c.status == "slower"
    assert c.ratio is not None and c.ratio.value == pytest.approx(1.0)
    assert c.ratio.low <= 1.0 <= c.ratio.high


def _rms_b(tmp: Path) -> Path:
    """rmsnorm_residual with: compile 1.2× slower (its blocks), its Triton kernel renamed _0 →
    _7, torch changed, a graph break added to max-autotune, reduce-overhead's outputs wrong."""
    def edit(m: dict[str, Any]) -> None:
        m["environment"]["torch"] = "2.12.0+cu130"
        _scale(m["modes"]["compile"], "mode_block_ms", 1.2)
        mx = m["modes"]["max-autotune"]["compile"]
        mx["graph_breaks"], mx["break_reasons"] = 1, ["Unsupported: call_function print"]
        m["modes"]["reduce-overhead"]["correctness"]["ok"] = False
    run = edited_copy(RMS, tmp / "B", edit)
    trace = run / "compile.pt.trace.json.gz"
    text = gzip.decompress(trace.read_bytes()).replace(
        b"triton_red_fused_add_mean_mul_pow_rsqrt_0", b"triton_red_fused_add_mean_mul_pow_rsqrt_7")
    trace.write_bytes(gzip.compress(text))
    return run


@needs_runs
def test_a_real_run_compared_with_itself_is_unchanged_with_empty_kernel_diffs() -> None:
    c, _ = run_compare_report.build(RMS, RMS)
    assert c.same_recording and not any(f.changed for f in c.environment)
    for d in c.modes:
        assert d.verdict == "unchanged", d
        assert d.kernel_diff is not None and d.kernel_diff.changes == ()
        assert d.messages == ()


@needs_runs
def test_an_edited_run_b_has_the_known_answers(tmp_path: Path) -> None:
    c, _ = run_compare_report.build(RMS, _rms_b(tmp_path))
    assert not c.same_recording
    assert [f.name for f in c.environment if f.changed] == ["torch"]
    comp = c.mode("compile")
    assert comp is not None and comp.speed is not None
    assert comp.speed.status == "slower" and comp.speed.speedup.value == pytest.approx(1 / 1.2)
    assert comp.speed.ratio is not None and comp.speed.ratio.value == pytest.approx(1 / 1.2)
    assert comp.kernel_diff is not None and comp.kernel_diff.changes == ()  # renamed, matched
    # Only the blocks were slowed, the trace kept: its kernels match with +0.0 µs/step, so the
    # 20 % is host time, which separate processes cannot pin on the code (host-only rule).
    assert comp.verdict == "inconclusive"
    assert comp.note.startswith("the two runs' kernels match (none added or removed)")
    assert "profile NEW --against OLD" in comp.note
    eager = c.mode("eager")
    assert eager is not None and eager.verdict == "unchanged"
    mx = c.mode("max-autotune")
    assert mx is not None and [(m.what, m.side) for m in mx.messages] == [
        ("graph break", "added")]
    ro = c.mode("reduce-overhead")
    assert ro is not None and ro.correctness == (True, False)


@needs_runs
def test_check_against_fails_on_the_slowdown_the_mismatch_and_the_new_graph_break(
        tmp_path: Path) -> None:
    b = _rms_b(tmp_path)
    res = CliRunner().invoke(app, ["check", str(b), "--against", str(RMS)])
    assert res.exit_code == 3, res.output
    fails = [line for line in res.output.splitlines() if line.startswith("FAIL")]
    assert [f.split(":")[0] for f in fails] == ["FAIL slower", "FAIL mismatch",
                                                "FAIL graph break"]
    # compile's blocks were slowed with its trace kept: host time per step, failed like any
    # slowdown beyond the runs' between-process spread (eager's paired medians: under 5 %)
    blocks = json.loads((RMS / "manifest.json").read_text())["modes"]["compile"]["paired"][
        "mode_block_ms"]
    med = statistics.median(blocks)
    assert fails[0].startswith("FAIL slower: compile: fastest block ")
    assert f"median {med:.4g} → {med * 1.2:.4g} ms/step, +20.0 %" in fails[0]
    assert not [line for line in res.output.splitlines() if line.startswith("WARN")]
    assert "reduce-overhead" in fails[1] and "max-autotune: graph breaks 0 → 1" in fails[2]
    ok = CliRunner().invoke(app, ["check", str(RMS), "--against", str(RMS)])
    assert ok.exit_code == 0, ok.output
    loose = CliRunner().invoke(app, ["check", str(RMS), "--against", str(RMS),
                                     "--max-slowdown", "lots"])
    assert loose.exit_code == 2


@needs_runs
def test_a_mode_that_no_longer_runs_fails_the_gate_with_its_reason(tmp_path: Path) -> None:
    def edit(m: dict[str, Any]) -> None:
        m["modes"]["cudagraph"].update(status="failed", reason="capture failed: illegal sync")
    b = edited_copy(RMS, tmp_path / "B", edit)
    res = CliRunner().invoke(app, ["check", str(b), "--against", str(RMS)])
    assert res.exit_code == 3
    assert "FAIL did not run: cudagraph: ran in the baseline run, not in this one (failed: " \
        "capture failed: illegal sync)" in res.output


def _diff(ci: tuple[float, float]) -> RunModeDiff:
    speed = RunSpeedChange(1.0, 1.5, Interval(2 / 3, *ci), "slower", None, (20, 20), (5, 5),
                           0.95, 2000, 0, 0.03)
    none = Pair(None, None)
    return RunModeDiff("m", "ok", "ok", speed, "slower", "", none, none, none, none, none, none,
                       (True, True), Pair(0, 0), none, (), None)


def test_gate_slowdown_edge_exactly_at_the_limit_passes() -> None:
    assert mode_failures(_diff((0.4, 0.5)), 1.0) == []  # 1 / 0.5 − 1 == 1.0: not beyond
    assert [f.rule for f in mode_failures(_diff((0.4, 0.49)), 1.0)] == ["slower"]
    assert parse_slowdown("5%") == 0.05 and parse_slowdown("0.1") == 0.1


@needs_runs
@pytest.mark.parametrize("fmt", ["text", "md", "json", "html"])
def test_compare_two_run_dirs_renders_every_format(tmp_path: Path, fmt: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # text follows COLUMNS: wide enough not to wrap a cell
    b = _rms_b(tmp_path)
    out = tmp_path / f"runs.{fmt}"
    res = CliRunner().invoke(app, ["compare", str(RMS), str(b), "-f", fmt, "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    if fmt == "json":
        doc = json.loads(text)
        modes = {m["mode"]: m for m in doc["modes"]}
        assert modes["compile"]["speed"]["status"] == "slower"
        assert modes["compile"]["verdict"] == "inconclusive"
        assert doc["environment"][3] == {"name": "torch", "a": "2.11.0+cu130",
                                         "b": "2.12.0+cu130", "changed": True}
    else:
        assert "inconclusive (host-only change)" in text and "2.12.0+cu130" in text
    if fmt == "html":
        assert 'class="sortable"' in text


def _kd(*changes: tuple[str, float, float]) -> KernelDiff:
    return KernelDiff(5, 5, 0.05, tuple(KernelChange(k, "triton", st, (k,), (k,), 1.0, 1.0, a, b)
                                        for k, (st, a, b) in enumerate(changes)))


def _slower(step_a_ms: float, step_b_ms: float) -> RunSpeedChange:
    return RunSpeedChange(step_a_ms, step_b_ms, Interval(step_a_ms / step_b_ms, 0.7, 0.8),
                          "slower", None, (20, 20), (5, 5), 0.95, 2000, 0, 0.03)


def test_host_only_rule_edges() -> None:
    slower = _slower(0.5, 0.75)  # step +250 µs (exact in binary floating point)
    # GPU time per step +124.999 µs: under half of the change → host-only
    assert host_only_note(slower, _kd(("slower", 40_000.0, 164_999.0))) is not None
    # exactly half (+125 µs): the kernels explain enough → judged
    assert host_only_note(slower, _kd(("slower", 40_000.0, 165_000.0))) is None
    # a kernel group added, however small → judged
    assert host_only_note(slower, _kd(("unchanged", 40_000.0, 40_000.0),
                                      ("added", 0.0, 1.0))) is None
    # no kernel diff, or no call → nothing to say
    assert host_only_note(slower, None) is None
    unchanged = RunSpeedChange(0.049, 0.049, Interval(1.0, 0.99, 1.01), "unchanged", None,
                               (20, 20), (5, 5), 0.95, 2000, 0, 0.03)
    assert host_only_note(unchanged, _kd(("unchanged", 1.0, 1.0))) is None


REVIEWS = REPORTS / "reviews"
needs_reviews = pytest.mark.skipif(not (REVIEWS / "rmsnorm_scaled_vs_base").is_dir(),
                                   reason="committed --against runs absent")


@needs_reviews
def test_real_against_runs_and_two_run_comparison_agree_on_every_direction() -> None:
    """H100, ``profile rmsnorm_residual_scaled.py --against rmsnorm_residual.py``: the paired
    old → new verdict and ``compare RUN/old RUN`` never point opposite ways, and the eager
    mode's extra multiply is the first kernel change on both."""
    from traceviz.report.compare_report import load_run_dir, versions_of

    for name in ("rmsnorm_scaled_vs_base", "rmsnorm_same_code"):
        run = REVIEWS / name
        vc = versions_of(load_run_dir(run))
        two, _ = run_compare_report.build(run / "old", run)
        assert vc is not None
        for d in vc.modes:
            other = two.mode(d.mode)
            assert other is not None
            pair = {d.verdict, other.verdict}
            assert pair != {"faster", "slower"}, (name, d.mode, pair)
            if name == "rmsnorm_same_code":
                assert d.verdict in ("unchanged", "inconclusive"), d
                assert other.verdict in ("unchanged", "inconclusive"), other
    vc = versions_of(load_run_dir(REVIEWS / "rmsnorm_scaled_vs_base"))
    assert vc is not None and vc.mode("eager").verdict == "slower"
    kd = vc.mode("eager").why.kernel_diff
    first = next(r for r in kd.changes if r.status in ("added", "removed"))
    assert "MulFunctor" in first.key and first.count_b - first.count_a == 1


@needs_reviews
def test_gate_fails_the_variant_and_passes_identical_code() -> None:
    run = REVIEWS / "rmsnorm_scaled_vs_base"
    res = CliRunner().invoke(app, ["check", str(run), "--against", str(run / "old")])
    assert res.exit_code == 3, res.output
    fails = [line.split(":")[1].strip() for line in res.output.splitlines()
             if line.startswith("FAIL slower")]
    # compile and reduce-overhead are host-bound here: their host time per step differs
    # between processes by more than eager's (1.4 %) shows, and the gate fails them too
    assert fails == ["eager", "compile", "reduce-overhead", "cudagraph"]
    for a, b in (("rmsnorm_same_code/old", "rmsnorm_same_code"),
                 ("rmsnorm_warm1", "rmsnorm_warm2")):
        ok = CliRunner().invoke(app, ["check", str(REVIEWS / b), "--against", str(REVIEWS / a)])
        assert ok.exit_code == 0, ok.output


def test_two_distributed_runs_count_compute_kernels_without_the_communication_ones() -> None:
    # reports/ddp_mlp: 65 kernels per step on the slowest rank, of which 6 are NCCL kernels
    a = run_compare_report.load_run(REPORTS / "ddp_mlp", workers=1)
    b = run_compare_report.load_run(REPORTS / "ddp_mlp_straggler", workers=1)
    eager_a = next(m for m in a.modes if m.mode == "eager")
    assert eager_a.per_step is not None and eager_a.per_step.kernels == 65
    assert eager_a.compute_kernels == 59
    c = compare_runs(a, b)
    eager = next(d for d in c.modes if d.mode == "eager")
    assert eager.kernels == Pair(59.0, 59.0)
    single = run_compare_report.load_run(REPORTS / "reviews" / "rmsnorm_base", workers=1)
    assert {m.mode: m.compute_kernels for m in single.modes} == {"eager": None, "compile": None}
