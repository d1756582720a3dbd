"""``traceviz profile`` end to end on the CPU: eager and compile run, CUDA-only modes skip.

Runs the real command in a subprocess on a tiny workload (Inductor's CPU backend compiles it
in seconds), then checks the manifest, the skip reasons, the traces and the analyzer's view of
them.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import traceviz
from traceviz.collect.mode_names import ALL_MODES, CUDA_ONLY_MODES

pytest.importorskip("torch")

WORKLOADS = Path(__file__).parent / "workloads_for_tests"


def profile(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", *args],
        capture_output=True, text=True, timeout=600, check=False,
    )


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("profile") / "tiny-run"
    proc = profile(str(WORKLOADS / "tiny.py"), "--modes", "all", "--out", str(run_dir),
                   "--device", "cpu", "--repeats", "3", "--min-repeat-ms", "5",
                   "--timing-budget-s", "3", "--stack")  # off by default on the CPU
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return run_dir, json.loads((run_dir / "manifest.json").read_text())


def test_manifest_describes_the_workload_and_environment(cpu_run):
    _, manifest = cpu_run
    assert manifest["workload"]["name"] == "tiny"
    assert manifest["workload"]["description"].startswith("tiny pointwise")
    assert manifest["environment"]["torch"]
    assert manifest["environment"]["cuda_available"] is False
    assert list(manifest["modes"]) == list(ALL_MODES)


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_cpu_modes_run_correctly_and_are_timed(cpu_run, mode):
    _, manifest = cpu_run
    entry = manifest["modes"][mode]
    assert entry["status"] == "ok", entry["reason"]
    assert entry["correctness"]["ok"]
    assert entry["first_call_s"] > 0
    timing = entry["timing"]
    assert timing["repeats"] == 3
    assert timing["p10_ms"] <= timing["median_ms"] <= timing["p90_ms"]
    profiled = entry["profiled"]
    assert profiled["steps"] == 5
    assert profiled["adjacent_unprofiled_ms"] > 0
    assert profiled["inflation"] == pytest.approx(
        profiled["step_ms"] / profiled["adjacent_unprofiled_ms"])


def test_compile_is_timed_in_alternation_with_eager_in_its_own_process(cpu_run):
    _, manifest = cpu_run
    assert manifest["schema"] == 3
    assert manifest["settings"]["timing_budget_s"] == 3
    assert manifest["modes"]["eager"]["paired"] is None
    paired = manifest["modes"]["compile"]["paired"]
    assert paired["baseline"] == "eager"
    assert paired["order"] == "ABBA"
    assert paired["pairs"] >= 2
    assert len(paired["baseline_block_ms"]) == len(paired["mode_block_ms"]) == paired["pairs"]
    assert min(paired["baseline_block_ms"] + paired["mode_block_ms"]) > 0
    # On the CPU the host is the device: issue time and block time are one measurement.
    assert paired["baseline_issue_ms"] == paired["baseline_block_ms"]
    assert paired["mode_issue_ms"] == paired["mode_block_ms"]
    assert paired["ci_low"] <= paired["speedup"] <= paired["ci_high"]
    assert paired["stopped"] in ("converged", "budget", "max_pairs")
    assert paired["level"] == 0.95 and paired["resamples"] >= 2000


def test_cuda_only_modes_are_skipped_with_their_reason(cpu_run):
    _, manifest = cpu_run
    for mode in CUDA_ONLY_MODES:
        entry = manifest["modes"][mode]
        assert entry["status"] == "skipped"
        assert "CUDA" in entry["reason"]


def test_compile_mode_records_its_graphs(cpu_run):
    _, manifest = cpu_run
    diag = manifest["modes"]["compile"]["compile"]
    assert diag["graphs"] == 1
    assert diag["graph_breaks"] == 0
    assert diag["recompiles"] == 0
    assert manifest["modes"]["eager"]["compile"] is None


def test_traces_are_stamped_and_read_by_the_analyzer(cpu_run):
    run_dir, manifest = cpu_run
    for mode in ("eager", "compile"):
        path = run_dir / manifest["modes"][mode]["profiled"]["trace"]
        with gzip.open(path, "rt") as fh:
            stamp = json.load(fh)["traceviz"]
        assert stamp["mode"] == mode
        assert stamp["workload"] == "tiny"
        analysis = traceviz.analyze(traceviz.load(path))
        assert analysis.totals.steps == 5
        summary = manifest["modes"][mode]["analysis_summary"]
        assert summary["steps"] == 5
        assert summary["kernels_per_step"] == 0  # CPU traces hold no GPU kernels
    compiled = traceviz.analyze(traceviz.load(run_dir / "compile.pt.trace.json.gz"))
    assert compiled.compile.compiled


def test_an_existing_run_directory_is_not_overwritten(cpu_run):
    run_dir, _ = cpu_run
    proc = profile(str(WORKLOADS / "tiny.py"), "--modes", "eager", "--out", str(run_dir))
    assert proc.returncode == 1
    assert "--force" in proc.stderr


def test_an_invalid_workload_is_a_usage_error(tmp_path):
    proc = profile(str(WORKLOADS / "not_a_workload.py"), "--out", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert "DESCRIPTION" in proc.stderr
    assert not (tmp_path / "r").exists()


def stamp_of(path: Path) -> dict:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)["traceviz"]


def python_function_events(path: Path) -> int:
    with gzip.open(path, "rt") as fh:
        return sum(1 for e in json.load(fh)["traceEvents"] if e.get("cat") == "python_function")


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_the_verdict_trace_is_lean_and_the_stacked_trace_is_recorded_beside_it(cpu_run, mode):
    run_dir, manifest = cpu_run
    entry = manifest["modes"][mode]
    lean = run_dir / entry["profiled"]["trace"]
    stacked = entry["stack_profiled"]
    assert stacked["status"] == "ok", stacked
    assert stacked["trace"] == f"{mode}.stack.pt.trace.json.gz"
    assert stamp_of(lean)["trace_kind"] == "lean"
    assert stamp_of(run_dir / stacked["trace"])["trace_kind"] == "stacked"
    assert python_function_events(lean) == 0
    assert python_function_events(run_dir / stacked["trace"]) > 0
    assert stacked["steps"] == 5
    assert stacked["adjacent_unprofiled_ms"] > 0
    assert stacked["inflation"] == pytest.approx(
        stacked["step_ms"] / stacked["adjacent_unprofiled_ms"])


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_the_stacked_trace_is_recorded_last_by_the_modes_own_child(cpu_run, mode):
    run_dir, manifest = cpu_run
    entry = manifest["modes"][mode]
    assert entry["stack_profiled"]["log"] == entry["log"] == f"logs/{mode}.log"
    assert list(entry["phase_s"])[-2:] == ["tracing", "stacks"]
    assert "wall_s" not in entry["stack_profiled"]  # its seconds are the phase's
    assert sorted(p.name for p in (run_dir / "logs").glob(f"{mode}.*")) == [f"{mode}.log"]
