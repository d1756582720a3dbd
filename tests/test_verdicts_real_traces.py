"""Verdicts and --baseline on the committed H200 traces (tests/data/h200/<workload>/)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from traceviz.analyze.compare.modes import Comparison, compare
from traceviz.report.compare_report import load_run_dir, load_traces

REPORTS = Path(__file__).resolve().parent / "data" / "h200"
README = Path(__file__).resolve().parent.parent / "README.md"


def plain(workload: str, mode: str) -> Comparison:
    d = REPORTS / workload
    return compare(load_traces([d / "eager.pt.trace.json.gz",
                                d / f"{mode}.pt.trace.json.gz"]).modes)


def statuses(c: Comparison, mode: str) -> dict[str, str]:
    return {v.kind: v.status for v in c.verdicts if v.mode == mode}


def test_decode_loop_manual_cuda_graph_is_a_launch_win_from_the_traces_alone() -> None:
    c = plain("decode_loop", "cudagraph")
    v = {x.kind: x for x in c.verdicts}
    assert v["speed"].status == "WIN" and v["launch"].status == "WIN"
    assert v["launch"].evidence["evidence_source"] == "trace"
    assert v["speed"].evidence["speedup"] > 2  # beyond max_profiler_inflation
    assert v["launch"].evidence["wait_share_of_saved"] >= 0.5
    headline = c.headline("cudagraph")
    assert headline is not None and "(profiled)" in headline.text
    assert "(launch overhead)" in headline.text


@pytest.mark.parametrize(("workload", "mode"), [
    ("gemm_mlp", "max-autotune"), ("train_step", "compile"), ("branch", "compile"),
    ("rmsnorm_residual", "compile"),
])
def test_compiled_mode_that_is_not_faster_in_the_traces_never_wins(workload: str,
                                                                    mode: str) -> None:
    c = plain(workload, mode)
    base, row = c.rows
    assert row.period_ms > base.period_ms  # median profiled period: slower in the traces
    assert "WIN" not in statuses(c, mode).values()


def test_run_dir_without_paired_timing_uses_unpaired_medians_conservatively() -> None:
    c = compare(load_run_dir(REPORTS / "decode_loop").modes)
    ran = {r.mode for r in c.rows if r.status == "ok"}
    speed = {v.mode: v for v in c.verdicts if v.kind == "speed" and v.mode in ran}
    assert {v.evidence["evidence_source"] for v in speed.values()} == {"unpaired"}
    # reduce-overhead: 2.56 → 0.117 ms/step, its p90 far below eager's p10.
    assert speed["reduce-overhead"].status == "WIN"
    assert all("separate processes" in h.text for h in c.headlines if h.mode in ran)
    # Manual CUDA graph: more GPU busy (static-buffer copies) inside a step 7x faster.
    graph = {v.kind: v for v in c.verdicts if v.mode == "cudagraph"}
    assert (graph["speed"].status, graph["fusion"].status, graph["launch"].status) == (
        "WIN", "NO_WIN", "WIN")
    assert "3 more memcpy/memset activities per step than the baseline" in (
        graph["fusion"].explanation)
    assert "but the step is faster overall" in graph["fusion"].explanation


def readme_compare_command() -> str:
    lines = [ln.strip() for ln in README.read_text(encoding="utf-8").splitlines()]
    return next(ln for ln in lines if ln.startswith("traceviz compare eager.json.gz"))


def test_readme_compare_example_runs_verbatim(tmp_path: Path) -> None:
    command = readme_compare_command()
    assert command == ("traceviz compare eager.json.gz compiled.json.gz "
                       "--baseline eager.json.gz")
    shutil.copy(REPORTS / "decode_loop" / "eager.pt.trace.json.gz", tmp_path / "eager.json.gz")
    shutil.copy(REPORTS / "decode_loop" / "compile.pt.trace.json.gz",
                tmp_path / "compiled.json.gz")
    argv = shlex.split(command)
    done = subprocess.run([sys.executable, "-m", "traceviz", *argv[1:]], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "traceviz-compare.html").read_text(encoding="utf-8")
    assert "baseline</dt><dd>eager</dd>" in html


@pytest.mark.parametrize("given", ["eager", "eager.json.gz", "./eager.json.gz", "ABS"])
def test_baseline_is_a_mode_name_a_path_or_a_file_name(tmp_path: Path, given: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from traceviz.report.compare_report import resolve_baseline

    for name in ("eager.json.gz", "compiled.json.gz"):
        shutil.copy(REPORTS / "elementwise" / "triton.pt.trace.json.gz", tmp_path / name)
    monkeypatch.chdir(tmp_path)
    modes = load_traces([Path("compiled.json.gz"), Path("eager.json.gz")]).modes
    typed = str(tmp_path / "eager.json.gz") if given == "ABS" else given
    assert resolve_baseline(typed, modes) == "eager"


def test_unknown_baseline_lists_the_modes(tmp_path: Path) -> None:
    from traceviz.errors import UsageError
    from traceviz.report.compare_report import resolve_baseline

    modes = load_traces([REPORTS / "elementwise" / "eager.pt.trace.json.gz",
                         REPORTS / "elementwise" / "triton.pt.trace.json.gz"]).modes
    with pytest.raises(UsageError, match=r"'nope\.json\.gz' is not one of: eager, triton"):
        resolve_baseline("nope.json.gz", modes)
    assert resolve_baseline("triton.pt.trace.json.gz", modes) == "triton"


def test_compare_help_shows_the_thresholds_table_name() -> None:
    done = subprocess.run([sys.executable, "-m", "traceviz", "compare", "--help"],
                          capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert "TOML ([thresholds] table)" in done.stdout
