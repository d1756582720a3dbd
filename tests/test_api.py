"""The Python API: traceviz.analyze / load_run / compare, their DataFrames and their agreement
with the CLI's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze import model
from traceviz.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
EAGER = ROOT / "tests/data/gpu/elementwise_eager.pt.trace.json.gz"
CUDAGRAPH = ROOT / "tests/data/gpu/elementwise_cudagraph.pt.trace.json.gz"
COMPILE = ROOT / "tests/data/gpu/elementwise_compile.pt.trace.json.gz"
RUN_DIR = ROOT / "tests/data/h200/elementwise"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def handbuilt(tmp_path: Path) -> Path:
    """Step 1: A 10-15 µs, B queued 20-25 (other_idle 15-20), C launched at 30 runs 40-45
    (host_wait 25-40), tail 45-120 (host_wait, ended by D); step 2: D 120-130 on stream 18."""
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000, name="A")
    b.kernel(launch_ts=2_000, ts=20_000, dur=5_000, name="B")
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000, name="C")
    b.step(2, 100_000, 100_000)
    b.kernel(launch_ts=110_000, ts=120_000, dur=10_000, name="D", stream=18)
    return b.write(tmp_path / "t.json")


def test_analyze_path_gives_documented_frames_that_match_the_cli_json() -> None:
    a = traceviz.analyze(str(EAGER))
    assert isinstance(a, traceviz.Analysis)
    r = cli("report", str(EAGER), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert a.to_json() == r.stdout
    doc = json.loads(r.stdout)
    assert a.steps["name"].tolist() == [s["name"] for s in doc["steps"]]
    assert (a.steps["period_ns"] / 1000).tolist() == [s["period_us"] for s in doc["steps"]]
    assert a.steps["kernels"].tolist() == [s["kernels"] for s in doc["steps"]]
    gap_count = sum(g["count"] for g in doc["gap_stats"] if g["scope"] == "all")
    assert len(a.gaps) == gap_count > 0
    by_class = a.gaps["class"].value_counts()
    for g in doc["gap_stats"]:
        if g["scope"] == "all":
            assert by_class[g["class"]] == g["count"]
            assert a.gaps.loc[a.gaps["class"] == g["class"], "duration_ns"].sum() / 1000 == \
                g["sum_us"]
    assert a.summary.kernels_per_step == doc["per_step"]["kernels"]
    assert a.summary.gaps == len(a.gaps)


def test_frames_have_the_documented_columns_and_dtypes() -> None:
    a = traceviz.analyze(EAGER)
    assert a.steps.dtypes["period_ns"] == np.int64
    assert str(a.steps.dtypes["gpu_start_ns"]) == "Int64"
    assert a.steps.dtypes["cpu_bound_share"] == np.float64
    assert a.gaps.columns.tolist() == [
        "step", "step_name", "device", "stream", "start_ns", "end_ns", "duration_ns", "class",
        "tail", "ending_activity", "activity_row"]
    assert list(a.gaps["class"].cat.categories) == list(model.GAP_CLASS_NAMES)
    assert a.kernels.columns.tolist() == ["name", "category", "family", "count", "total_ns",
                                          "mean_ns", "min_ns", "max_ns", "share"]
    assert a.kernel_families.columns.tolist() == ["family", "count", "total_ns", "share"]
    assert a.health.columns.tolist() == ["code", "message", "count"]
    assert a.graph_replays.empty and "span_ns" in a.graph_replays.columns


def test_gaps_frame_is_known_by_construction(tmp_path: Path) -> None:
    a = traceviz.analyze(handbuilt(tmp_path))
    g = a.gaps
    assert g[["start_ns", "end_ns"]].to_numpy().tolist() == [
        [15_000, 20_000], [25_000, 40_000], [45_000, 120_000]]
    assert g["class"].tolist() == ["other_idle", "host_wait", "host_wait"]
    assert g["ending_activity"].tolist() == ["B", "C", "D"]
    assert g["tail"].tolist() == [False, False, True]
    assert g["stream"].tolist() == [7, 7, 18]
    assert g["step_name"].tolist() == ["ProfilerStep#1"] * 3
    assert (g["duration_ns"] == g["end_ns"] - g["start_ns"]).all()
    s = a.steps
    assert s["period_ns"].tolist() == [110_000, 10_000]
    assert s["gpu_start_ns"].tolist() == [10_000, 120_000]
    k = a.kernels.set_index("name")
    assert k.loc["D", "total_ns"] == 10_000 and k.loc["A", "count"] == 1
    assert a.kernels["name"].iloc[0] == "D"  # most GPU time first
    assert a.kernels["share"].sum() == pytest.approx(1.0)


def test_kernels_frame_starts_with_the_reports_top_kernels() -> None:
    a = traceviz.analyze(COMPILE)
    top = a.result.top_kernels
    head = a.kernels.head(len(top))
    assert head["name"].tolist() == [k.name for k in top]
    assert head["total_ns"].tolist() == [k.total_ns for k in top]
    assert head["mean_ns"].tolist() == [k.mean_ns for k in top]
    assert a.kernels["count"].sum() == a.result.totals.activities


def test_graph_replays_frame_matches_the_frozen_replays() -> None:
    a = traceviz.analyze(CUDAGRAPH)
    assert len(a.graph_replays) == len(a.result.graph_replays) > 0
    first = a.result.graph_replays[0]
    row = a.graph_replays.iloc[0]
    assert (row["nodes"], row["span_ns"], row["internal_gap_ns"]) == (
        first.nodes, first.span_ns, first.internal_gap_ns)


def test_analyze_of_a_loaded_trace_still_returns_the_frozen_result() -> None:
    trace = traceviz.load(EAGER)
    result = traceviz.analyze(trace)
    assert isinstance(result, model.Analysis)
    wrapped = traceviz.Analysis.from_trace(trace)
    assert wrapped.result.totals == result.totals and wrapped.trace is trace


def test_a_list_of_one_path_is_that_trace_and_several_are_rank_traces() -> None:
    assert traceviz.analyze([EAGER]).summary == traceviz.analyze(EAGER).summary
    with pytest.raises(UsageError, match="empty"):
        traceviz.analyze([])
    with pytest.raises(UsageError, match="workers"):
        traceviz.analyze(EAGER, workers=0)
    with pytest.raises(UsageError):
        traceviz.analyze(42)  # type: ignore[call-overload]


def test_rank_traces_give_the_joint_analysis_the_cli_prints() -> None:
    run = ROOT / "reports/ddp_mlp_straggler"
    paths = [run / "eager.rank0.pt.trace.json.gz", run / "eager.rank1.pt.trace.json.gz"]
    r = traceviz.analyze(paths)
    assert isinstance(r, traceviz.Ranks)
    assert r.straggler is not None and r.straggler.rank == 1 and r.straggler.cause == "host"
    assert r.per_rank["rank"].tolist() == [0, 1]
    assert r.per_rank.loc[0, "comm_wait_ns_median"] > r.per_rank.loc[1, "comm_wait_ns_median"]
    assert set(r.rank_steps["rank"]) == {0, 1}
    assert r.analysis(1).summary.steps == 5
    cli_json = cli("report", *map(str, paths), "--format", "json")
    assert cli_json.returncode == 0, cli_json.stderr
    assert r.to_json() == cli_json.stdout
    with pytest.raises(UsageError, match="no rank 7"):
        r.analysis(7)


def test_compare_of_traces_matches_the_cli_json() -> None:
    c = traceviz.compare(EAGER, COMPILE)
    assert c.baseline == "elementwise_eager"
    r = cli("compare", str(EAGER), str(COMPILE), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert c.to_json() == r.stdout
    assert set(c.verdicts["kind"]) == {"speed", "fusion", "launch"}
    assert c.rows["mode"].tolist() == ["elementwise_eager", "elementwise_compile"]
    w = c.waterfalls.iloc[0]
    parts = ["gpu_busy_ns", "host_wait_ns", "sync_wait_ns", "graph_internal_ns",
             "other_idle_ns"]
    assert sum(w[p] for p in parts) == pytest.approx(w["delta_ns"])


def test_compare_thresholds_mapping_overrides_and_rejects_unknown_names() -> None:
    c = traceviz.compare(EAGER, COMPILE, thresholds={"fusion_min_kernel_drop": 0.5})
    assert c.result.thresholds.fusion_min_kernel_drop == 0.5
    with pytest.raises(UsageError, match="unknown threshold"):
        traceviz.compare(EAGER, COMPILE, thresholds={"no_such_threshold": 1})


def test_load_run_reads_the_manifest_and_compares_its_modes() -> None:
    run = traceviz.load_run(RUN_DIR)
    assert "eager" in run.modes and run.comparison.baseline == "eager"
    assert set(run.traced_modes) <= set(run.modes)
    assert run.comparison.to_json() == traceviz.compare(RUN_DIR).to_json()
    eager = run.analysis("eager")
    assert eager.summary.steps == eager.result.totals.steps > 0
    with pytest.raises(UsageError, match="no mode"):
        run.analysis("nope")
    page = run._repr_html_()
    assert "traceviz run elementwise" in page and "max-autotune-no-cudagraphs" in page


def test_headlines_come_from_the_comparison_and_the_manifest() -> None:
    from traceviz.report.headlines import manifest_headlines

    assert manifest_headlines({"a": {"analysis_summary": {"headline": "x"}}, "b": {}}) == {
        "a": "x"}
    assert manifest_headlines({"a": {"headline": "y"}}) == {"a": "y"}
    headlines = traceviz.compare(EAGER, COMPILE).headlines()
    assert list(headlines) == ["elementwise_compile"]
    assert "(profiled)" in headlines["elementwise_compile"]


def test_notebook_html_shows_summary_verdicts_and_a_figure() -> None:
    a = traceviz.analyze(EAGER)
    page = a._repr_html_()
    assert "kernels / step" in page and "plotly" in page.lower()
    c = traceviz.compare(EAGER, COMPILE)
    html = c._repr_html_()
    assert all(v in html for v in c.verdicts["status"])
    assert "<table>" in html and "plotly" in html.lower()


def test_to_html_writes_the_report_with_the_perfetto_hint(tmp_path: Path) -> None:
    a = traceviz.analyze(handbuilt(tmp_path))
    out = a.to_html(tmp_path / "r.html", plotlyjs="cdn")
    page = out.read_text()
    assert "Open this in Perfetto" in page and "traceviz export t.json" in page
    assert "An overlay was exported" not in page
    a.export_perfetto(tmp_path / "t.traceviz.json.gz")
    page = a.render("html", "cdn")
    assert "An overlay was exported" in page and "t.traceviz.json.gz</a>" in page


def test_importing_traceviz_loads_neither_plotly_nor_torch() -> None:
    code = (f"import sys, traceviz; a = traceviz.analyze({str(EAGER)!r}); a.steps; a.gaps; "
            "a.to_json(); print(sorted(m for m in ('plotly', 'torch', 'hta') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
