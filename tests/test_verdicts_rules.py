"""Verdicts: each status from data built to produce it, with evidence, thresholds, reasons."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.synthetic_runs import (
    COMPILED,
    CUDAGRAPH,
    EAGER,
    GEMM_COMPILED,
    GEMM_EAGER,
    paired,
    standard_run,
    write_run_dir,
)
from traceviz.analyze.compare.modes import Comparison, compare
from traceviz.analyze.compare.speed import paired_status
from traceviz.analyze.verdicts import Thresholds, parse_thresholds
from traceviz.errors import UsageError
from traceviz.report.compare_report import load_run_dir, load_traces


def comparison(run: Path, **kw: Any) -> Comparison:
    return compare(load_run_dir(run).modes, **kw)


def verdicts(run: Path, **kw: Any) -> dict[tuple[str, str], Any]:
    return {(v.mode, v.kind): v for v in comparison(run, **kw).verdicts}


def test_fused_and_graphed_modes_win_with_their_evidence(tmp_path: Path) -> None:
    v = verdicts(standard_run(tmp_path))
    speed = v["compile", "speed"]
    assert speed.status == "WIN"
    assert speed.evidence["evidence_source"] == "unpaired"
    assert speed.evidence["speedup"] == pytest.approx(2.0)
    assert "separate processes minutes apart" in speed.explanation
    fusion = v["compile", "fusion"]
    assert fusion.status == "WIN"
    assert fusion.evidence["kernels_per_step"] == [20, 5]
    assert fusion.evidence["kernel_drop"] == pytest.approx(0.75)
    assert fusion.thresholds["fusion_min_kernel_drop"] == 0.2
    launch = v["cudagraph", "launch"]
    assert launch.status == "WIN"
    assert launch.evidence["launches_per_step"] == [20, 1]
    # Waterfall attribution: at least half of the mean period saved is host + sync wait.
    assert launch.evidence["wait_share_of_saved"] >= 0.5
    assert launch.evidence["wait_saved_us"] == pytest.approx(
        launch.evidence["wait_share_of_saved"] * launch.evidence["period_saved_us"])
    assert launch.thresholds["launch_min_wait_share"] == 0.5


@pytest.mark.parametrize(("low", "high", "status"), [
    (1.05, 1.10, "WIN"),
    (1.03, 1.10, "INCONCLUSIVE"),  # the lower bound must be *above* 1 + 3 %
    (0.90, 0.95, "REGRESSION"),
    (0.90, 0.97, "INCONCLUSIVE"),  # the upper bound must be *below* 1 − 3 %
    (0.97, 1.03, "NO_WIN"),  # the whole CI within ±3 %, both edges included
    (0.99, 1.02, "NO_WIN"),
    (0.98, 1.10, "INCONCLUSIVE"),
])
def test_paired_speed_rule_at_every_edge(low: float, high: float, status: str) -> None:
    assert paired_status(low, high, 0.03) == status


def paired_run(tmp: Path, mode: Any, block: dict[str, Any], base: Any = EAGER) -> Path:
    return write_run_dir(tmp, {"eager": base, "compile": dataclasses.replace(mode, paired=block)})


def test_paired_timing_decides_speed_and_is_printed_with_its_ci(tmp_path: Path) -> None:
    # The unpaired medians (0.50 vs 0.49) would never call this; the paired CI does.
    close = dataclasses.replace(COMPILED, median_ms=0.49, spread_ms=0.2)
    speed = verdicts(paired_run(tmp_path, close, paired(1.08, 1.05, 1.11)))["compile", "speed"]
    assert speed.status == "WIN"
    assert speed.evidence["evidence_source"] == "paired"
    assert (speed.evidence["ci_low"], speed.evidence["ci_high"]) == (1.05, 1.11)
    assert speed.explanation.startswith("1.08× faster (95 % CI 1.05–1.11, 23 pairs)")


def test_paired_block_without_its_summary_is_estimated_from_the_block_times(
    tmp_path: Path,
) -> None:
    from traceviz.analyze.stats import paired_speedup

    base = [1.0, 1.1, 0.9, 1.05, 0.95] * 4
    mode = [0.5, 0.6, 0.45, 0.5, 0.5] * 4
    block = {"baseline": "eager", "baseline_block_ms": base, "mode_block_ms": mode}
    speed = verdicts(paired_run(tmp_path, COMPILED, block))["compile", "speed"]
    est = paired_speedup(base, mode)
    assert speed.evidence["evidence_source"] == "paired"
    assert (speed.evidence["speedup"], speed.evidence["ci_low"], speed.evidence["ci_high"]) == (
        est.speedup, est.ci_low, est.ci_high)
    assert speed.evidence["pairs"] == 20 and speed.status == "WIN"


def test_pairing_cut_short_by_its_budget_says_so(tmp_path: Path) -> None:
    block = {**paired(1.1, 0.95, 1.3, pairs=15), "stopped": "budget"}
    speed = verdicts(paired_run(tmp_path, COMPILED, block))["compile", "speed"]
    assert speed.status == "INCONCLUSIVE"
    assert speed.evidence["stopped"] == "budget"
    assert "pairing stopped at its time budget before the CI narrowed" in speed.explanation


def test_significant_but_tiny_change_is_no_win_and_says_so(tmp_path: Path) -> None:
    speed = verdicts(paired_run(tmp_path, COMPILED, paired(1.015, 1.01, 1.02)))[
        "compile", "speed"]
    assert speed.status == "NO_WIN"
    assert "statistically different from 1 but within ±3 %" in speed.explanation
    launch = verdicts(tmp_path)["compile", "launch"]
    assert launch.status == "NO_WIN"
    assert "host wait fell 79% under the profiler, which the stopwatch does not confirm" in (
        launch.explanation)


def test_paired_regression_is_a_speed_regression(tmp_path: Path) -> None:
    speed = verdicts(paired_run(tmp_path, COMPILED, paired(0.8, 0.78, 0.82)))["compile", "speed"]
    assert speed.status == "REGRESSION"
    assert speed.explanation.startswith("1.25× slower (speed-up 0.80, 95 % CI 0.78–0.82")


def test_paired_error_or_other_baseline_falls_back_to_unpaired_and_says_why(
    tmp_path: Path,
) -> None:
    broken = {"error": "eager step raised RuntimeError"}
    v = verdicts(paired_run(tmp_path / "a", COMPILED, broken))
    assert v["compile", "speed"].evidence["evidence_source"] == "unpaired"
    assert "paired timing failed (eager step raised RuntimeError)" in (
        v["compile", "speed"].explanation)
    run = write_run_dir(tmp_path / "b", {"eager": EAGER,
                                         "compile": dataclasses.replace(
                                             COMPILED, paired=paired(2.0, 1.9, 2.1)),
                                         "cudagraph": CUDAGRAPH})
    speed = verdicts(run, baseline="cudagraph")["compile", "speed"]
    assert speed.evidence["evidence_source"] == "unpaired"
    assert "paired timing was against 'eager', not the baseline 'cudagraph'" in speed.explanation


def test_fewer_launches_and_a_real_speed_up_is_a_launch_win_without_a_fixed_drop(
    tmp_path: Path,
) -> None:
    # The case: launches fall only 40 % (the old rule wanted 50 %), GPU busy rises a
    # little, the stopwatch says 1.7x. Launch WIN (host wait explains the time), fusion NO_WIN.
    mode = dataclasses.replace(COMPILED, kernels=tuple((f"triton_{i}", 17_000)
                                                       for i in range(12)))
    run = paired_run(tmp_path, mode, paired(1.71, 1.62, 1.80))
    c = comparison(run)
    v = {(x.mode, x.kind): x for x in c.verdicts}
    assert v["compile", "speed"].status == "WIN"
    launch, fusion = v["compile", "launch"], v["compile", "fusion"]
    assert launch.evidence["launch_drop"] == pytest.approx(0.4)
    assert launch.status == "WIN"
    assert fusion.status == "NO_WIN"
    assert "fused 20 → 12 kernels but GPU busy rose 2%" in fusion.explanation
    headline = c.headline("compile")
    assert headline is not None and headline.speedup == 1.71
    # the fixture's paired baseline blocks (1.71 ms) lie far from eager's own 0.5 ms: the
    # headline says which of the two the speed-up rests on
    assert headline.text.startswith(
        "1.71× faster (95 % CI 1.62–1.80, 23 pairs), against eager as timed beside it, 1.710 "
        "ms/step (0.500 in its own process); profiled, mean over steps: period −91.0 µs/step: "
        "host wait −")
    assert "(launch overhead)" in headline.text and "20 → 12 launches" in headline.text


def test_speed_win_not_explained_by_host_wait_is_no_launch_win(tmp_path: Path) -> None:
    # GPU-bound GEMMs that got 25 % shorter: the period saved is all GPU busy.
    faster = dataclasses.replace(GEMM_COMPILED, kernels=tuple((n, 375_000) for n, _ in
                                                              GEMM_EAGER.kernels))
    v = verdicts(paired_run(tmp_path, faster, paired(1.3, 1.25, 1.35), base=GEMM_EAGER))
    assert v["compile", "speed"].status == "WIN"
    launch = v["compile", "launch"]
    assert launch.status == "NO_WIN"
    assert "host + sync wait explain only 0% of the period saved" in launch.explanation
    assert "baseline GPU-bound" in launch.explanation


def test_gemm_bound_mode_is_no_win_and_says_why_in_every_verdict(tmp_path: Path) -> None:
    v = verdicts(paired_run(tmp_path, GEMM_COMPILED, paired(1.005, 0.99, 1.02), base=GEMM_EAGER))
    speed, fusion, launch = (v["compile", k] for k in ("speed", "fusion", "launch"))
    assert (speed.status, fusion.status, launch.status) == ("NO_WIN", "NO_WIN", "NO_WIN")
    assert "GPU-bound (gemm kernels take 100% of GPU time): GPU busy is 98% of the period" in (
        fusion.explanation)
    assert "baseline GPU-bound" in launch.explanation
    skip = "cudagraphs skipped: skipping cudagraphs due to mutated inputs"
    assert all(skip in x.explanation for x in (speed, fusion, launch))


def test_unpaired_timing_needs_separated_ranges(tmp_path: Path) -> None:
    overlap = dataclasses.replace(CUDAGRAPH, median_ms=0.45, spread_ms=0.2)
    speed = verdicts(write_run_dir(tmp_path / "a", {"eager": EAGER, "cudagraph": overlap}))[
        "cudagraph", "speed"]
    assert speed.status == "INCONCLUSIVE"
    assert "p10–p90 ranges overlap" in speed.explanation
    slow = dataclasses.replace(CUDAGRAPH, median_ms=0.9)
    v = verdicts(write_run_dir(tmp_path / "b", {"eager": EAGER, "cudagraph": slow}))
    assert v["cudagraph", "speed"].status == "REGRESSION"
    assert v["cudagraph", "launch"].status != "WIN"


def test_output_mismatch_makes_fusion_and_launch_inconclusive(tmp_path: Path) -> None:
    wrong = dataclasses.replace(COMPILED, correct=False)
    v = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "compile": wrong}))
    assert v["compile", "fusion"].status == v["compile", "launch"].status == "INCONCLUSIVE"
    assert "outputs do not match" in v["compile", "fusion"].explanation


def test_more_gpu_work_without_fusion_is_a_fusion_regression(tmp_path: Path) -> None:
    heavier = dataclasses.replace(EAGER, kernels=tuple((n, 12_000) for n, _ in EAGER.kernels))
    fusion = verdicts(write_run_dir(tmp_path, {"eager": EAGER, "compile": heavier}))[
        "compile", "fusion"]
    assert fusion.status == "REGRESSION"
    assert "kernel count not lower" in fusion.explanation
    # Inside a step that the stopwatch calls faster, more GPU work is a cost, not a regression.
    faster = dataclasses.replace(heavier, paired=paired(1.5, 1.4, 1.6))
    fusion = verdicts(write_run_dir(tmp_path / "b", {"eager": EAGER, "compile": faster}))[
        "compile", "fusion"]
    assert fusion.status == "NO_WIN"
    assert "but the step is faster overall (speed WIN: 1.50× faster" in fusion.explanation


def test_fused_but_not_faster_is_no_fusion_win(tmp_path: Path) -> None:
    v = verdicts(paired_run(tmp_path, COMPILED, paired(1.0, 0.99, 1.01)))
    assert v["compile", "fusion"].status == "NO_WIN"
    assert "but the step did not get faster (speed NO_WIN" in v["compile", "fusion"].explanation


def test_fusion_needs_a_shorter_profiled_period_only_without_a_stopwatch_win(
    tmp_path: Path,
) -> None:
    # Fewer kernels and less GPU busy, but launched slowly: the profiled period rises.
    slow = dataclasses.replace(COMPILED, launch_every_ns=100_000)
    won = verdicts(write_run_dir(tmp_path / "a", {"eager": EAGER, "compile": slow}))
    assert won["compile", "speed"].status == "WIN"  # unpaired 0.50 → 0.25 ms
    assert won["compile", "fusion"].status == "WIN"
    unsure = verdicts(paired_run(tmp_path / "b", slow, paired(1.05, 0.9, 1.2)))
    assert unsure["compile", "speed"].status == "INCONCLUSIVE"
    fusion = unsure["compile", "fusion"]
    assert fusion.status == "NO_WIN"
    assert "but the profiled period did not fall (320.0 → 520.0 µs)" in fusion.explanation


def plain(run: Path, *modes: str, **kw: Any) -> dict[tuple[str, str], Any]:
    loaded = load_traces([run / f"{m}.pt.trace.json.gz" for m in modes])
    return {(x.mode, x.kind): x for x in compare(loaded.modes, **kw).verdicts}


def test_plain_traces_use_the_profiled_period_and_say_so(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    v = plain(run, "eager", "cudagraph")  # profiled period 320 → 182.5 µs: 1.75x < 2x
    speed, launch = v["cudagraph", "speed"], v["cudagraph", "launch"]
    assert speed.evidence["evidence_source"] == launch.evidence["evidence_source"] == "trace"
    assert speed.evidence["profiled_period_ms"] == [pytest.approx(0.32), pytest.approx(0.1825)]
    assert speed.status == launch.status == "INCONCLUSIVE"
    assert "(profiled)" in speed.explanation and "profiler" in speed.explanation
    assert v["cudagraph", "fusion"].status == "WIN"
    assert "outputs not checked" in v["cudagraph", "fusion"].explanation
    looser = plain(run, "eager", "cudagraph", thresholds=Thresholds(max_profiler_inflation=1.7))
    assert looser["cudagraph", "speed"].status == looser["cudagraph", "launch"].status == "WIN"


def test_plain_trace_mode_that_is_not_faster_never_wins(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    v = plain(run, "cudagraph", "eager", baseline="cudagraph")  # eager: slower in the trace
    assert all(v["eager", k].status != "WIN" for k in ("speed", "fusion", "launch"))
    v = plain(run, "cudagraph", "eager", baseline="cudagraph",  # the loosest valid value
              thresholds=Thresholds(max_profiler_inflation=1.0))
    assert all(v["eager", k].status != "WIN" for k in ("speed", "fusion", "launch"))


def test_threshold_override_changes_the_call(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    strict = parse_thresholds(["fusion_min_kernel_drop=0.9"])
    fusion = verdicts(run, thresholds=strict)["compile", "fusion"]
    assert fusion.status == "NO_WIN"
    assert fusion.thresholds["fusion_min_kernel_drop"] == 0.9
    assert "short of the 90% drop that fusion needs" in fusion.explanation


def test_thresholds_come_from_toml_or_json_then_overrides(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text("[thresholds]\nmin_speedup = 0.05\nlaunch_min_wait_share = 0.6\n")
    t = parse_thresholds(["launch_min_wait_share=0.7"], toml)
    assert (t.min_speedup, t.launch_min_wait_share) == (0.05, 0.7)
    js = tmp_path / "t.json"
    js.write_text('{"max_profiler_inflation": 3}')
    assert parse_thresholds(config=js).max_profiler_inflation == 3.0
    assert parse_thresholds() == Thresholds()


@pytest.mark.parametrize("bad", ["nonsense=1", "fusion_min_kernel_drop", "min_speedup=abc"])
def test_bad_threshold_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_thresholds([bad])


def test_removed_threshold_in_a_file_fails_with_what_replaced_it(tmp_path: Path) -> None:
    toml = tmp_path / "old.toml"
    toml.write_text("[thresholds]\nlaunch_min_launch_drop = 0.5\n")
    with pytest.raises(UsageError, match="launch_min_launch_drop no longer exists: the launch "
                       "count is evidence, not a gate"):
        parse_thresholds(config=toml)


def test_traces_from_different_gpus_are_inconclusive(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    other = run / "other_gpu.json.gz"
    doc = json.loads(gzip.decompress((run / "compile.pt.trace.json.gz").read_bytes()))
    doc["deviceProperties"][0]["name"] = "Other GPU"
    other.write_bytes(gzip.compress(json.dumps(doc).encode()))
    loaded = load_traces([run / "eager.pt.trace.json.gz", other])
    speed, fusion, launch = compare(loaded.modes).verdicts
    assert speed.status == fusion.status == launch.status == "INCONCLUSIVE"
    assert "baseline ran on Test GPU, this mode on Other GPU" in fusion.explanation
    assert "it would be WIN" in fusion.explanation


def test_faster_stopwatch_but_longer_profiled_period_cannot_attribute(tmp_path: Path) -> None:
    # One kernel per step behind a long CPU gap: the profiled period rises while the unprofiled
    # step is 5x faster; the trace cannot say where the time went.
    sparse = dataclasses.replace(COMPILED, kernels=(("triton_poi_fused_0", 10_000),),
                                 launch_every_ns=400_000, median_ms=0.1)
    run = write_run_dir(tmp_path, {"eager": EAGER, "compile": sparse})
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["modes"]["compile"]["profiled"]["step_ms"] = 0.5  # 5x the unprofiled 0.1 ms
    (run / "manifest.json").write_text(json.dumps(manifest))
    v = verdicts(run)
    assert v["compile", "speed"].status == "WIN"
    launch = v["compile", "launch"]
    assert launch.status == "INCONCLUSIVE"
    assert "profiled period did not fall (profiler inflation 5.0×)" in launch.explanation
    assert launch.evidence["profiler_inflation"] == pytest.approx(5.0)


def test_context_appears_in_every_verdict_and_the_headline(tmp_path: Path) -> None:
    diag = {"graphs": 3, "graph_breaks": 2, "break_reasons": ["print()"], "recompiles": 1,
            "cudagraph_skips": ["skipping cudagraphs due to mutated inputs (1 instances). "
                                "Found from :"]}
    mode = dataclasses.replace(COMPILED, compile=diag)
    c = comparison(write_run_dir(tmp_path, {"eager": EAGER, "compile": mode}))
    expected = ["cudagraphs skipped: skipping cudagraphs due to mutated inputs (1 instances)",
                "2 graph breaks (print())", "1 recompile"]
    for v in c.verdicts:
        assert v.evidence["context"] == expected
        assert all(e in v.explanation for e in expected)
        assert "Found from" not in v.explanation
    headline = c.headline("compile")
    assert headline is not None and headline.text.endswith("; ".join(expected))
