"""Load the rank traces of one run, analyze them together and render the multi-rank report.

Entry points: :func:`rank_trace_paths` (which CLI targets are rank traces) and
:func:`render_ranks` (html / md / json / text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceviz.errors import UsageError

TRACE_GLOBS = ("*.json", "*.json.gz")


def rank_trace_paths(targets: list[Path], is_run_dir: bool) -> list[Path] | None:
    """The trace files to report together, or ``None`` for the single-trace / run-dir report.

    Several targets: each must be a trace file. One directory that is not a run directory:
    every ``*.json`` / ``*.json.gz`` in it (not recursive).
    """
    if len(targets) > 1:
        dirs = [p for p in targets if p.is_dir()]
        if dirs:
            raise UsageError(f"{dirs[0]}: a directory among several targets; pass trace files, "
                             "or one directory of rank traces")
        return targets
    (target,) = targets
    if not target.is_dir() or is_run_dir:
        return None
    found = sorted({p for g in TRACE_GLOBS for p in target.glob(g) if p.is_file()})
    if not found:
        raise UsageError(f"{target}: a directory with no .json / .json.gz traces")
    return found


def load_ranks(paths: list[Path]) -> tuple[Any, list[Any]]:
    """The :class:`~traceviz.analyze.distributed.model.RanksAnalysis` of the traces, and the
    traces it kept (in rank order)."""
    import traceviz
    from traceviz.analyze.distributed import analyze_ranks

    traces = [traceviz.load(p) for p in paths]
    analyses = [traceviz.analyze(t) for t in traces]
    result = analyze_ranks(list(zip(traces, analyses, strict=True)))
    by_path = {t.meta.path: t for t in traces}
    return result, [by_path[i.path] for i in result.ranks]


def render_ranks(paths: list[Path], fmt: str, plotlyjs: str = "inline") -> str:
    """Load and analyze every rank trace, then render the multi-rank report in ``fmt``."""
    result, kept = load_ranks(paths)
    return render_loaded(result, kept, fmt, plotlyjs)


def render_loaded(result: Any, kept: list[Any], fmt: str, plotlyjs: str = "inline") -> str:
    """Render an already computed multi-rank analysis (``kept``: its traces, rank order)."""
    if fmt == "json":
        import msgspec

        from traceviz.report.ranks_json import ranks_to_dict

        encoded = msgspec.json.encode(ranks_to_dict(result, kept))
        return msgspec.json.format(encoded, indent=2).decode() + "\n"
    from traceviz.report.ranks_report import build_ranks_report

    if fmt == "text":
        from traceviz.report.ranks_text import render_ranks_text

        return render_ranks_text(build_ranks_report(result, figures=False))
    model = build_ranks_report(result)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(model)
    from traceviz.report.html import render_html

    return render_html(model, plotlyjs)
