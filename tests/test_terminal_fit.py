"""Terminal output fits 80 columns: columns are dropped or abbreviated, no word is broken
across lines; the profile progress display and small CLI fixes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

import traceviz
from traceviz.cli.display import SUMMARY_COLUMNS, mode_progress, profile_summary, summary_rows
from traceviz.report.fit import KEEP, Column, fit_table, fitted_columns

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "tests/data/gpu"
WIDTH = 80
MODES = ("eager", "compile", "max-autotune", "max-autotune-no-cudagraphs", "reduce-overhead",
         "cudagraph", "triton")


def render(renderable: Any, width: int = WIDTH) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def assert_words_whole(lines: list[str], cells: list[str]) -> None:
    """Each word of each cell is on one line, whole, or abbreviated to a prefix + "…" — never
    split across lines."""
    text = "\n".join(lines)
    for cell in cells:
        for word in cell.split():
            if word in text:
                continue
            assert any(word[:k] + "…" in text for k in range(1, len(word))), (word, text)


def manifest_modes(headline: bool = False) -> dict[str, dict[str, Any]]:
    modes: dict[str, dict[str, Any]] = {}
    for i, mode in enumerate(MODES):
        modes[mode] = {
            "status": "ok" if i != 2 else "mismatch",
            "first_call_s": 12.345 * i,
            "timing": {"median_ms": 1.2345 + i, "p10_ms": 1.2, "p90_ms": 1.3 + i,
                       "noisy": i == 3},
            "profiled": {"step_ms": 2.5, "inflation": 1.87},
            "analysis_summary": {"kernels_per_step": 19.0 - i, "launches_per_step": 19.0,
                                 "graph_launches_per_step": float(i % 2)},
            "peak_mem_bytes": 123_456_789,
        }
    if headline:
        modes["compile"]["headline"] = "kernels/step 19 → 3 (fusion WIN)"
    return modes


def test_profile_summary_at_80_columns_breaks_no_word_and_keeps_mode_names_whole() -> None:
    modes = manifest_modes()
    lines = render(profile_summary(modes, WIDTH))
    assert max(len(line) for line in lines) <= WIDTH
    text = "\n".join(lines)
    for mode in MODES:
        assert mode in text  # "max-autotune-no-cudagraphs" on one line, never folded
    rows = summary_rows(modes)
    kept, _ = fitted_columns(SUMMARY_COLUMNS, rows, WIDTH)
    assert len(kept) >= 5
    cells = [r[i] for r in rows for i in kept]
    assert_words_whole(lines, cells)
    assert "not shown at this width:" in text  # something had to give at 80 columns


def test_profile_summary_on_a_wide_terminal_shows_every_column() -> None:
    lines = render(profile_summary(manifest_modes(), 200), width=200)
    text = "\n".join(lines)
    assert "not shown" not in text
    assert all(c.name in text for c in SUMMARY_COLUMNS)


def test_mode_headlines_are_shown_when_the_modes_carry_them() -> None:
    text = "\n".join(render(profile_summary(manifest_modes(headline=True), WIDTH)))
    assert "compile: kernels/step 19 → 3 (fusion WIN)" in " ".join(text.split())
    plain = "\n".join(render(profile_summary(manifest_modes(), WIDTH)))
    assert "fusion WIN" not in plain


def test_fit_table_drops_the_lowest_priority_columns_first() -> None:
    cols = [Column("name", priority=KEEP), Column("a", True, 5), Column("b", True, 1),
            Column("c", True, 3)]
    rows = [("x" * 30, "1" * 12, "2" * 12, "3" * 12)]
    table = fit_table(cols, rows, 65)
    assert [c.header for c in table.columns] == ["name", "a", "c"]
    assert table.caption == "not shown at this width: b"
    assert [c.header for c in fit_table(cols, rows, None).columns] == ["name", "a", "b", "c"]


def test_text_report_fits_80_columns() -> None:
    a = traceviz.analyze(GPU / "elementwise_eager.pt.trace.json.gz")
    lines = render(a.text_renderable(WIDTH))
    assert max(len(line) for line in lines) <= WIDTH
    text = "\n".join(lines)
    assert all(s in text for s in a.steps["name"])
    assert_words_whole(lines, [f"{x / 1000:,.1f}" for x in a.steps["period_ns"]])


def test_comparison_text_fits_80_columns_with_whole_words() -> None:
    c = traceviz.compare(GPU / "elementwise_eager.pt.trace.json.gz",
                         GPU / "elementwise_reduce-overhead.pt.trace.json.gz")
    lines = render(c.text_renderable(WIDTH))
    assert max(len(line) for line in lines) <= WIDTH
    assert_words_whole(lines, [*c.modes, *c.verdicts["status"],
                               *c.verdicts["explanation"]])


def test_progress_shows_mode_phase_and_status() -> None:
    out = io.StringIO()
    console = Console(file=out, width=WIDTH, force_terminal=True, color_system=None)
    with mode_progress(console, 2) as progress:
        on_phase = progress.start("max-autotune-no-cudagraphs")
        on_phase("compiling")
        on_phase("timing")
        progress.finish("ok")
        progress.skip("triton", "no Triton step in this workload")
    text = out.getvalue()
    assert "max-autotune-no-cudagraphs" in text and "timing" in text and "ETA" in text
    assert "triton: skipped (no Triton step in this workload)" in text
    assert "2/2" in text


def run_cli(*args: str, pre: str = "") -> subprocess.CompletedProcess[str]:
    code = "; ".join(filter(None, [
        "import sys", pre, "from traceviz.cli.app import main",
        f"sys.argv = {['traceviz', *args]!r}", "main()"]))
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


def test_compare_help_shows_the_thresholds_table_name() -> None:
    r = run_cli("compare", "--help")
    assert r.returncode == 0
    assert "TOML ([thresholds] table)" in r.stdout


def test_report_hta_without_hta_prints_the_install_line_and_exits_1() -> None:
    trace = str(GPU / "elementwise_eager.pt.trace.json.gz")
    r = run_cli("report", trace, "--hta", "--format", "json", pre="sys.modules['hta'] = None")
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "traceviz: error: Holistic Trace Analysis is not installed; install it with: "
        "pip install 'traceviz[hta]'"]


def test_a_cpu_mode_shows_no_kernel_or_launch_counts_and_a_cuda_mode_keeps_its_zeros() -> None:
    modes = manifest_modes()
    cpu, cuda = MODES[0], MODES[1]
    modes[cpu]["profiled"]["gpu_activities"] = 0  # finished ok with no GPU activity: CPU
    modes[cuda]["profiled"] = {"step_ms": 2.5, "inflation": 1.87, "gpu_activities": 40}
    modes[cuda]["analysis_summary"]["graph_launches_per_step"] = 0.0
    rows = {r[0]: r for r in summary_rows(modes)}
    assert rows[cpu][6:9] == ("-", "-", "-")
    assert rows[cuda][6:9] == ("18.0", "19.0", "0.0")
