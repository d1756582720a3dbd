"""``traceviz kernel-diff A B``: load two traces (or one mode of two run directories), diff
their kernels (:mod:`traceviz.analyze.review.kernel_diff`), render html / md / json / text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceviz.analyze.review.kernel_diff import (
    KernelDiff,
    KernelProfile,
    kernel_diff,
    kernel_profile,
)
from traceviz.errors import UsageError
from traceviz.report.kernel_diff_section import kernel_table
from traceviz.report.model import Report, Section
from traceviz.report.run_dir import MANIFEST, is_run_dir, read_run_manifest

SCHEMA = "traceviz.kernel-diff/1"


def trace_of(path: Path, mode: str | None) -> Path:
    """The trace to read: ``path`` itself, or for a run directory the lean trace of ``mode``."""
    if not is_run_dir(path):
        if path.is_dir():
            raise UsageError(f"{path}: not a run directory (no {MANIFEST}) and not a trace")
        return path
    if mode is None:
        raise UsageError(f"{path} is a run directory: name the mode to diff with --mode")
    _, modes = read_run_manifest(path)
    entry = modes.get(mode)
    trace = ((entry or {}).get("profiled") or {}).get("trace") if isinstance(entry, dict) else None
    if not trace or not (path / str(trace)).is_file():
        raise UsageError(f"{path}: mode {mode!r} left no trace (modes: {', '.join(modes)})")
    return path / str(trace)


def labels(a: Path, b: Path, ta: Path, tb: Path, mode: str | None) -> tuple[str, str]:
    """What the title calls A and B: a trace by its file name, one mode of a run directory as
    ``RUN (mode)``; paths as given when the names alone are the same."""
    def label(given: Path, trace: Path, whole: bool) -> str:
        name = str(given) if whole else given.name
        return f"{name} ({mode})" if trace != given else name

    la, lb = label(a, ta, False), label(b, tb, False)
    return (la, lb) if la != lb else (label(a, ta, True), label(b, tb, True))


def load_profile(path: Path, *, workers: int | None = None) -> KernelProfile:
    """The kernel profile of one trace file (loaded and analysed by ``workers``, ``None``:
    every usable core; then released)."""
    from traceviz.analyze.analysis import analyze
    from traceviz.trace import load

    trace = load(path, workers=workers)
    return kernel_profile(trace, analyze(trace, workers=workers))


def build(a: Path, b: Path, mode: str | None = None, min_change: float | None = None, *,
          workers: int | None = None) -> tuple[KernelDiff, Report]:
    """The diff of ``a`` → ``b`` (traces, or ``mode`` of two run directories; loaded and
    analysed by ``workers``) and its report."""
    ta, tb = trace_of(a, mode), trace_of(b, mode)
    diff = kernel_diff(load_profile(ta, workers=workers), load_profile(tb, workers=workers),
                       *(() if min_change is None else (min_change,)))
    facts = [("A", str(ta)), ("B", str(tb))] + ([("mode", mode)] if mode else [])
    la, lb = labels(a, b, ta, tb, mode)
    empty = tuple(f"{side}: {label} has no step with GPU work, so no kernel of it is "
                  "compared (a CPU run, or CUPTI did not record: `traceviz report` on it says "
                  "which)" for side, label, steps in (("A", la, diff.steps_a),
                                                     ("B", lb, diff.steps_b)) if steps == 0)
    report = Report(
        kind="kernel-diff", title=f"traceviz kernel diff: {la} → {lb}",
        facts=tuple(facts), warnings=empty,
        sections=(Section(
            "kernels", "Kernel diff",
            "Kernels grouped by family and name, matched across A and B, sorted by their impact "
            "on the step (Δ GPU time per step, B − A). Unchanged groups are not listed.",
            (kernel_table(diff, "tbl-kernel-diff", "Changed kernels"),)),),
    )
    return diff, report


def document(diff: KernelDiff, report: Report) -> dict[str, Any]:
    """The JSON document (``--format json``)."""
    return {"schema": SCHEMA, "title": report.title, "facts": dict(report.facts),
            "warnings": list(report.warnings), **diff.as_dict()}


def render(diff: KernelDiff, report: Report, fmt: str, plotlyjs: str = "inline") -> str:
    """The kernel diff as ``html``, ``md``, ``json`` or ``text``."""
    if fmt == "html":
        from traceviz.report.html import render_html

        return render_html(report, plotlyjs)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from traceviz.report.jsonout import dumps

        return dumps(document(diff, report))
    if fmt == "text":
        from traceviz.report.report_text import render_report_text

        return render_report_text(report)
    raise UsageError(f"unknown format {fmt!r}; one of html, json, md, text")
