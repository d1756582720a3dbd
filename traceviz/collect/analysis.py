"""After the modes ran: analyze each trace and write the comparison report.

Both steps use other parts of traceviz through imports made here, inside functions, so a
missing or failing analyzer or report is recorded in the manifest instead of losing the run.
Nothing here imports torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def summarize_trace(path: Path) -> dict[str, Any]:
    """Per-step counts and times of one trace from ``traceviz.analyze`` (times in µs)."""
    from traceviz.analyze.analysis import analyze
    from traceviz.trace import load

    analysis = analyze(load(path))
    totals, per_step = analysis.totals, analysis.per_step
    return {
        "steps": totals.steps,
        "steps_with_gpu": totals.steps_with_gpu,
        "kernels_per_step": per_step.kernels,
        "launches_per_step": per_step.launches,
        "graph_launches_per_step": per_step.graph_launches,
        "activities_per_step": per_step.activities,
        "period_us_per_step": per_step.period_ns / 1000,
        "gpu_busy_us_per_step": per_step.gpu_busy_ns / 1000,
        "cpu_us_per_step": per_step.cpu_ns / 1000,
        "triton_kernels": totals.triton_kernels,
        "health": sorted({w.code for w in analysis.health}),
    }


def add_analysis_summaries(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Fill ``analysis_summary`` of every mode that left a trace; failures become
    ``{"error": ...}`` entries."""
    for entry in manifest["modes"].values():
        profiled = entry.get("profiled") or {}
        trace = profiled.get("trace")
        if not trace or not (run_dir / trace).is_file():
            continue
        try:
            entry["analysis_summary"] = summarize_trace(run_dir / trace)
        except Exception as exc:  # the analyzer's failure is a fact about this run, not fatal
            entry["analysis_summary"] = {"error": f"{type(exc).__name__}: {exc}"}


def write_comparison_report(run_dir: Path) -> tuple[Path | None, str, dict[str, str]]:
    """Write the comparison report into ``run_dir`` when the report module exists.

    Returns the report's path (or None), a one-line note saying what happened, and each
    compared mode's headline (``{mode: text}``; empty when the report failed).
    """
    try:
        from traceviz.report.compare_report import write_run_report
    except ImportError as exc:
        return None, f"comparison report skipped: compare_report is unavailable ({exc})", {}
    try:
        path, comparison = write_run_report(run_dir)
    except Exception as exc:
        return None, f"comparison report failed: {type(exc).__name__}: {exc}", {}
    headlines = {h.mode: h.text for h in comparison.headlines}
    return Path(path), f"comparison report: {path}", headlines
