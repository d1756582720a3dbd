"""Verdicts: each status from data built to produce it, with evidence, thresholds, reasons."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from tests.synthetic_runs import (
    COMPILED,
    CUDAGRAPH,
    EAGER,
    gemm_run,
    standard_run,
    write_run_dir,
)
from traceviz.analyze.compare import compare
from traceviz.analyze.verdicts import Thresholds, parse_thresholds
from traceviz.errors import UsageError
from traceviz.report.compare_report import load_run_dir, load_traces


def verdicts(run: Path, **kw: object) -> dict[tuple[str, str], object]:
    comparison = compare(load_run_dir(run).modes, **kw)  # type: ignore[arg-type]
    return {(v.mode, v.kind): v for v in comparison.verdicts}


def test_fused_and_graphed_modes_win_with_their_evidence(tmp_path: Path) -> None:
    v = verdicts(standard_run(tmp_path))
    fusion = v["compile", "fusion"]
    assert fusion.status == "WIN"
    assert fusion.evidence["kernels_per_step"] == [20, 5]
    assert fusion.evidence["kernel_drop"] == pytest.approx(0.75)
    assert fusion.thresholds["fusion_min_kernel_drop"] == 0.2
    launch = v["cudagraph", "launch"]
    assert launch.status == "WIN"
    assert launch.evidence["launches_per_step"] == [20, 1]
    assert launch.evidence["time_gain_ms"] == pytest.approx(0.32)
    assert launch.thresholds["time_noise_k"] == 1.0


def test_gemm_bound_mode_is_no_win_and_says_why(tmp_path: Path) -> None:
    v = verdicts(gemm_run(tmp_path))
    fusion, launch = v["compile", "fusion"], v["compile", "launch"]
    assert (fusion.status, launch.status) == ("NO_WIN", "NO_WIN")
    assert "GPU-bound (gemm kernels take 100% of GPU time): GPU busy is 98% of the period" in (
        fusion.explanation)
    assert "cudagraphs skipped: skipping cudagraphs due to mutated inputs" in launch.explanation


def test_time_gain_within_noise_is_no_win(tmp_path: Path) -> None:
    noisy = dataclasses.replace(CUDAGRAPH, median_ms=0.49, spread_ms=0.05)
    v = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "cudagraph": noisy}))
    launch = v["cudagraph", "launch"]
    assert launch.status == "NO_WIN"
    assert "did not improve beyond its noise (it changed -0.010 ms; noise ±0.050 ms)" in (
        launch.explanation)


def test_output_mismatch_makes_both_verdicts_inconclusive(tmp_path: Path) -> None:
    wrong = dataclasses.replace(COMPILED, correct=False)
    v = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "compile": wrong}))
    assert v["compile", "fusion"].status == v["compile", "launch"].status == "INCONCLUSIVE"
    assert "outputs do not match" in v["compile", "fusion"].explanation


def flag_noisy(run: Path) -> Path:
    manifest = (run / "manifest.json").read_text().replace('"noisy": false', '"noisy": true')
    (run / "manifest.json").write_text(manifest)
    return run


def test_noisy_timing_is_inconclusive_unless_the_gain_clears_the_spread(tmp_path: Path) -> None:
    close = dataclasses.replace(CUDAGRAPH, median_ms=0.495)
    run = flag_noisy(write_run_dir(tmp_path / "close", {"eager": EAGER, "cudagraph": close}))
    assert verdicts(run)["cudagraph", "launch"].status == "INCONCLUSIVE"
    run = flag_noisy(write_run_dir(tmp_path / "far", {"eager": EAGER, "cudagraph": CUDAGRAPH}))
    launch = verdicts(run)["cudagraph", "launch"]
    assert launch.status == "WIN" and "flagged noisy" in launch.explanation


def test_slower_mode_is_a_regression(tmp_path: Path) -> None:
    slow = dataclasses.replace(CUDAGRAPH, median_ms=0.9)
    launch = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "cudagraph": slow}))[
        "cudagraph", "launch"]
    assert launch.status == "REGRESSION"
    assert "slower beyond its noise" in launch.explanation


def test_more_gpu_work_is_a_fusion_regression(tmp_path: Path) -> None:
    heavier = dataclasses.replace(EAGER, kernels=tuple((n, 12_000) for n, _ in EAGER.kernels))
    fusion = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "compile": heavier}))[
        "compile", "fusion"]
    assert fusion.status == "REGRESSION"


def test_without_a_manifest_a_launch_win_cannot_be_confirmed(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    loaded = load_traces([run / "eager.pt.trace.json.gz", run / "cudagraph.pt.trace.json.gz"])
    v = {(x.mode, x.kind): x for x in compare(loaded.modes).verdicts}
    launch = v["cudagraph", "launch"]
    assert launch.status == "INCONCLUSIVE"
    assert "no unprofiled step timing" in launch.explanation
    assert v["cudagraph", "fusion"].status == "WIN"
    assert "outputs not checked" in v["cudagraph", "fusion"].explanation


def test_threshold_override_changes_the_call(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    strict = parse_thresholds(["fusion_min_kernel_drop=0.9"])
    fusion = verdicts(run, thresholds=strict)["compile", "fusion"]
    assert fusion.status == "NO_WIN"
    assert fusion.thresholds["fusion_min_kernel_drop"] == 0.9
    assert "short of the 90% drop needed" in fusion.explanation


def test_thresholds_come_from_toml_or_json_then_overrides(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text("[thresholds]\nfusion_min_busy_drop = 0.1\ntime_noise_k = 2\n")
    t = parse_thresholds(["time_noise_k=3"], toml)
    assert (t.fusion_min_busy_drop, t.time_noise_k) == (0.1, 3.0)
    js = tmp_path / "t.json"
    js.write_text('{"launch_min_launch_drop": 0.7}')
    assert parse_thresholds(config=js).launch_min_launch_drop == 0.7
    assert parse_thresholds() == Thresholds()


@pytest.mark.parametrize("bad", ["nonsense=1", "fusion_min_kernel_drop", "time_noise_k=abc"])
def test_bad_threshold_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_thresholds([bad])


def test_traces_from_different_gpus_are_inconclusive(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    other = run / "other_gpu.json.gz"
    doc = json.loads(gzip.decompress((run / "compile.pt.trace.json.gz").read_bytes()))
    doc["deviceProperties"][0]["name"] = "Other GPU"
    other.write_bytes(gzip.compress(json.dumps(doc).encode()))
    loaded = load_traces([run / "eager.pt.trace.json.gz", other])
    (fusion, launch) = compare(loaded.modes).verdicts
    assert fusion.status == launch.status == "INCONCLUSIVE"
    assert "baseline ran on Test GPU, this mode on Other GPU" in fusion.explanation
    assert "it would be WIN" in fusion.explanation


def test_host_wait_inflated_by_the_profiler_makes_the_launch_verdict_inconclusive(
    tmp_path: Path,
) -> None:
    # One kernel per step with a long CPU gap: host wait per step rises under the profiler,
    # while launches fall 95% and the unprofiled step time improves 5x.
    sparse = dataclasses.replace(COMPILED, kernels=(("triton_poi_fused_0", 10_000),),
                                 launch_every_ns=200_000, median_ms=0.1)
    run = write_run_dir(tmp_path, {"eager": EAGER, "compile": sparse})
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["modes"]["compile"]["profiled"]["step_ms"] = 0.5  # 5x the unprofiled 0.1 ms
    (run / "manifest.json").write_text(json.dumps(manifest))
    launch = verdicts(run)["compile", "launch"]
    assert launch.status == "INCONCLUSIVE"
    assert "profiler inflated this mode's step 5.0×" in launch.explanation
    assert launch.evidence["profiler_inflation"] == pytest.approx(5.0)
    manifest["modes"]["compile"]["profiled"]["step_ms"] = 0.15  # 1.5x: trust the trace
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert verdicts(run)["compile", "launch"].status == "NO_WIN"
