"""The unprofiled host/GPU split: its definitions, the verdicts on it and every report format.

Paired blocks are written by hand, so each number is known by construction; every edge of a
definition ("at most", "at or above") is pinned with values that are exact in binary floating
point.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.synthetic_runs import COMPILED, EAGER, paired, paired_split, write_run_dir
from traceviz.analyze.compare.launch_unprofiled import launch_verdict
from traceviz.analyze.compare.unprofiled import (
    LAUNCH_QUEUE_DEPTH,
    Estimate,
    Side,
    UnprofiledSplit,
    split_from_paired,
)
from traceviz.analyze.stats import percentile_interval, resample_indices
from traceviz.analyze.verdicts import Thresholds, Verdict, VerdictInputs, fusion_verdict
from traceviz.report.compare_report import build, load_run_dir, load_traces, render

T = Thresholds()


def block(base, mode, base_issue, mode_issue, iters=4):
    return paired_split(list(base), list(mode), list(base_issue), list(mode_issue), iters)


# --- definitions ------------------------------------------------------------------------------


def test_a_gpu_that_ends_exactly_one_step_behind_the_host_is_host_bound():
    # lag = iters × (1 − issue / period) = 4 × (1 − 0.75) = 1 step; with no tail allowed for,
    # the lag beyond the tail is the lag: at most 1, so host-bound
    t = Thresholds(host_bound_max_lag_steps=1.0, block_tail_allowance_us=0.0)
    s = split_from_paired(block([1.0] * 3, [1.0] * 3, [0.75] * 3, [0.5] * 3), t)
    assert s is not None
    assert s.baseline.lag_steps.value == 1.0 and s.baseline.host_bound
    assert s.baseline.lag_beyond_tail_steps == s.baseline.lag_steps
    assert s.mode.lag_steps.value == 2.0 and not s.mode.host_bound


def test_the_lag_threshold_is_data():
    s = split_from_paired(block([1.0] * 3, [1.0] * 3, [0.75] * 3, [0.5] * 3), 2.0)
    assert s is not None and s.baseline.host_bound and s.mode.host_bound


def test_savings_are_medians_of_the_per_pair_differences():
    s = split_from_paired(block([1.0, 1.25, 1.5], [0.5, 0.5, 0.5], [1.0, 1.25, 1.25],
                                [0.5, 0.25, 0.5]), 1.0)
    assert s is not None
    assert s.saved_ms.value == 0.75  # differences 0.5, 0.75, 1.0
    assert s.issue_saved_ms.value == 0.75  # differences 0.5, 1.0, 0.75
    assert s.issue_share is not None and s.issue_share.value == 1.0
    assert (s.baseline.period_ms, s.mode.period_ms) == (1.25, 0.5)  # pair-level medians
    assert (s.baseline.issue_ms, s.mode.issue_ms) == (1.25, 0.5)


def test_the_cis_come_from_the_same_resamples_as_the_speed_up():
    rng = np.random.default_rng(7)
    base = (1.0 + 0.1 * rng.random(20)).tolist()
    mode = (0.5 + 0.1 * rng.random(20)).tolist()
    issue_b = [b * 0.98 for b in base]
    issue_m = [m * 0.9 for m in mode]
    p = block(base, mode, issue_b, issue_m)
    s = split_from_paired(p, 1.0)
    assert s is not None and (s.resamples, s.seed) == (p["resamples"], p["seed"])
    idx = resample_indices(20, p["resamples"], p["seed"])
    saved = np.asarray(base) - np.asarray(mode)
    issue = np.asarray(issue_b) - np.asarray(issue_m)
    want = percentile_interval(np.median(saved[idx], axis=1), 0.95)
    assert (s.saved_ms.low, s.saved_ms.high) == want
    ratio = np.median(issue[idx], axis=1) / np.median(saved[idx], axis=1)
    assert s.issue_share is not None
    assert (s.issue_share.low, s.issue_share.high) == percentile_interval(ratio, 0.95)


def test_no_share_when_the_saving_can_be_zero():
    s = split_from_paired(block([1.0, 1.0, 1.0], [0.5, 1.5, 1.0], [1.0] * 3, [0.5] * 3), 1.0)
    assert s is not None and s.issue_share is None


def test_paired_blocks_without_issue_times_give_no_split():
    assert split_from_paired(paired(2.0, 1.9, 2.1), 1.0) is None
    p = block([1.0] * 3, [0.5] * 3, [1.0] * 3, [0.5] * 2)
    assert split_from_paired(p, 1.0) is None
    assert split_from_paired({**p, "mode_issue_ms": [0.5, 0.5, -1.0]}, 1.0) is None


def test_on_the_cpu_the_host_is_the_device():
    s = split_from_paired(block([1.0] * 3, [0.5] * 3, [1.0] * 3, [0.5] * 3), 1.0)
    assert s is not None and s.host_is_device
    assert s.baseline.lag_steps.value == 0.0


# --- the launch verdict -----------------------------------------------------------------------


def est(v, lo=None, hi=None):
    return Estimate(v, v if lo is None else lo, v if hi is None else hi)


def side(period, issue, lag, host_bound):
    return Side(period, issue, 100, est(lag), host_bound)


def split(share=None, base_host=True, mode_host=True, saved=0.4):
    return UnprofiledSplit(
        baseline=side(1.0, 0.99, 0.5, base_host), mode=side(0.6, 0.59, 0.5, mode_host),
        saved_ms=est(saved), issue_saved_ms=est(0.4), issue_share=share, pairs=20,
        level=0.95, resamples=2000, seed=0, max_lag_steps=1.0, host_is_device=False)


def vin(name="m", kernels=20.0, busy=300_000.0, launches=20.0):
    return VerdictInputs(
        mode=name, kernels=kernels, activities=kernels, launches=launches, gpu_busy_ns=busy,
        busy_spread_ns=1_000.0, host_wait_ns=0.0, period_ns=1e6, cpu_ns=1e6, input_copies=0.0,
        input_copy_ns=0.0, correctness_ok=True, inflation=None, top_family=None,
        top_family_share=None)


def speed(status):
    return Verdict("m", "speed", status, {"evidence_source": "paired", "outcome": "x"}, {}, "")


@pytest.mark.parametrize(("share", "status"), [
    (est(0.75, 0.5, 0.9), "WIN"),  # the whole CI at or above 50 %: the edge is a WIN
    (est(0.3, 0.1, 0.4999), "NO_WIN"),
    (est(0.5, 0.4999, 0.6), "INCONCLUSIVE"),
])
def test_launch_win_needs_the_whole_share_ci_at_or_above_the_threshold(share, status):
    v = launch_verdict(vin(), vin("eager"), speed("WIN"), split(share), T)
    assert v.status == status, v.explanation
    assert v.evidence["rules"] == "unprofiled"
    assert v.evidence["issue_share"] == [share.value, share.low, share.high]
    if status == "INCONCLUSIVE":
        assert "cannot be told apart" in v.explanation and "50%" in v.explanation


def test_a_gpu_bound_baseline_is_no_launch_win_whatever_the_share():
    v = launch_verdict(vin(), vin("eager"), speed("WIN"), split(est(1.0), base_host=False), T)
    assert v.status == "NO_WIN" and "baseline GPU-bound" in v.explanation


def test_no_share_is_inconclusive_with_the_numbers():
    v = launch_verdict(vin(), vin("eager"), speed("WIN"), split(None), T)
    assert v.status == "INCONCLUSIVE" and "reaches zero" in v.explanation


def test_a_slower_host_bound_mode_is_a_launch_regression():
    s = split(est(0.9, 0.8, 1.0), saved=-0.4)
    assert launch_verdict(vin(), vin("eager"), speed("REGRESSION"), s, T).status == "REGRESSION"
    s = split(est(0.9, 0.8, 1.0), mode_host=False, saved=-0.4)
    v = launch_verdict(vin(), vin("eager"), speed("REGRESSION"), s, T)
    assert v.status == "NO_WIN" and "mode GPU-bound" in v.explanation


@pytest.mark.parametrize("status", ["NO_WIN", "INCONCLUSIVE"])
def test_no_speed_win_passes_through(status):
    assert launch_verdict(vin(), vin("eager"), speed(status), split(est(1.0)), T).status == status


@pytest.mark.parametrize(("launches", "noted"), [(LAUNCH_QUEUE_DEPTH, True),
                                                 (LAUNCH_QUEUE_DEPTH - 1, False)])
def test_a_host_bound_step_with_a_queue_full_of_launches_is_flagged(launches, noted):
    v = launch_verdict(vin(), vin("eager", launches=launches), speed("WIN"), split(est(1.0)), T)
    assert ("full queue" in v.explanation) is noted


# --- the fusion verdict -----------------------------------------------------------------------


@pytest.mark.parametrize(("saved_ns", "status"), [(800_000.0, "WIN"), (800_001.0, "NO_WIN")])
def test_fusion_win_needs_the_busy_saved_to_be_a_share_of_the_unprofiled_saving(saved_ns, status):
    # busy 1000 → 800 µs saves 200 µs: exactly 25 % of 800 µs (a WIN), just under of 800.001
    v = fusion_verdict(vin(kernels=5, busy=800_000.0), vin("eager", busy=1_000_000.0),
                       speed("WIN"), T, unprofiled_saved_ns=saved_ns)
    assert v.status == status, v.explanation
    assert v.evidence["rules"] == "unprofiled"


def test_fusion_without_a_measured_speed_up_is_inconclusive_on_the_split():
    v = fusion_verdict(vin(kernels=5, busy=800_000.0), vin("eager", busy=1_000_000.0),
                       speed("INCONCLUSIVE"), T, unprofiled_saved_ns=10_000.0)
    assert v.status == "INCONCLUSIVE"


# --- comparisons and reports ------------------------------------------------------------------


def _noisy(rng, value, n=20):
    return (value * (1 + 0.02 * rng.standard_normal(n))).tolist()


@pytest.fixture(scope="module")
def split_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """eager vs compile, both host-bound without the profiler: compile cuts issue time."""
    rng = np.random.default_rng(3)
    base, mode = _noisy(rng, 1.0), _noisy(rng, 0.5)
    # the GPU ends 0.1 step behind the host: 100 × 0.001 / 1.0 (baseline), 100 × 0.001 / 0.5
    p = block(base, mode, [b - 0.001 for b in base], [m - 0.001 for m in mode], iters=100)
    compiled = replace(COMPILED, paired=p, extra={
        "stack_profiled": {"status": "ok", "trace": "compile.pt.trace.json.gz",
                           "steps": 4, "step_ms": 2.0, "adjacent_unprofiled_ms": 0.5,
                           "inflation": 4.0}})
    return write_run_dir(tmp_path_factory.mktemp("split") / "run",
                         {"eager": EAGER, "compile": compiled})


def test_a_run_with_issue_times_is_judged_without_the_profiler(split_run):
    c, _ = build(load_run_dir(split_run))
    v = {(x.mode, x.kind): x for x in c.verdicts}
    assert v[("compile", "speed")].status == "WIN"
    assert v[("compile", "launch")].status == "WIN", v[("compile", "launch")].explanation
    assert v[("compile", "launch")].evidence["rules"] == "unprofiled"
    (w,) = c.waterfalls
    s = c.unprofiled["compile"]
    speedup = c.headline("compile").speedup
    assert w.units == "unprofiled"
    assert w.baseline_period_ns == pytest.approx(s.baseline.period_ms * 1e6)
    assert w.delta_ns == pytest.approx(s.baseline.period_ms * 1e6 * (1 / speedup - 1))
    assert sum(w.parts.values()) == pytest.approx(w.delta_ns)
    # the lean traces: 20 × 10 µs of GPU busy per step against 5 × 30 µs
    assert w.parts["gpu_busy_ns"] == pytest.approx(-50_000)
    assert "without the profiler" in c.headline("compile").text
    assert "step −" in c.headline("compile").text


def test_older_runs_and_trace_files_keep_the_profiled_trace_rules_and_say_so(split_run, tmp_path):
    old = write_run_dir(tmp_path / "old", {"eager": EAGER, "compile": replace(
        COMPILED, paired=paired(2.0, 1.9, 2.1))})
    c, _ = build(load_run_dir(old))
    launch = next(x for x in c.verdicts if x.kind == "launch")
    assert "profiled-trace rules" in launch.explanation and "schema 2" in launch.explanation
    assert c.waterfalls[0].units == "profiled" and not c.unprofiled
    c, _ = build(load_traces([split_run / "eager.pt.trace.json.gz",
                              split_run / "compile.pt.trace.json.gz"]))
    for x in c.verdicts:
        if x.kind in ("launch", "fusion"):
            assert "trace files carry no unprofiled timing" in x.explanation


@pytest.mark.parametrize("fmt", ["text", "md", "json", "html"])
def test_every_format_shows_the_split_and_the_pair_level_medians(split_run, fmt, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # text follows COLUMNS: wide enough not to wrap a cell
    c, report = build(load_run_dir(split_run))
    s = c.unprofiled["compile"]
    out = render(c, report, fmt, plotlyjs="cdn")
    pair_level = f"{s.baseline.period_ms:,.3f} → {s.mode.period_ms:,.3f}"
    own = "0.500 → 0.250"  # the separate-process medians of the two modes
    if fmt == "json":
        doc = json.loads(out)
        assert doc["unprofiled"]["compile"]["baseline"]["period_ms"] == s.baseline.period_ms
        assert doc["waterfalls"][0]["units"] == "unprofiled"
        assert "issue_delta" in doc["waterfalls"][0]["cross_check_us"]
        return
    assert pair_level in out and own in out
    assert "host issue" in out
    assert "4.00×" in out  # the stacked trace's inflation


def test_the_python_api_gives_the_split_and_the_waterfall_units(split_run):
    import traceviz

    c = traceviz.compare(split_run)
    row = c.unprofiled.set_index("mode").loc["compile"]
    assert row["baseline_host_bound"] and row["mode_host_bound"]
    assert row["issue_share_low"] >= 0.5
    w = c.waterfalls.iloc[0]
    assert w["units"] == "unprofiled"
    parts = ["gpu_busy_ns", "host_overhead_ns", "other_idle_ns"]
    assert sum(w[p] for p in parts) == pytest.approx(w["delta_ns"])
