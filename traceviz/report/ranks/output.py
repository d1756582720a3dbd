"""Which CLI targets are rank traces, and rendering the multi-rank report.

Entry points: :func:`rank_trace_paths` (which CLI targets are rank traces) and
:func:`render_loaded` (html / md / json / text of an already computed multi-rank analysis: the
cross-rank result, each rank's encoded single-trace document, the ranks that failed). Loading
and analysing the ranks is :mod:`traceviz.scale`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from traceviz.errors import UsageError
from traceviz.output_guard import rank_dir_members

if TYPE_CHECKING:
    from traceviz.analyze.distributed.model import FailedRank, RanksAnalysis

def rank_trace_paths(targets: list[Path], is_run_dir: bool) -> list[Path] | None:
    """The trace files to report together, or ``None`` for the single-trace / run-dir report.

    Several targets: each must be a trace file. One directory that is not a run directory:
    every ``*.json`` / ``*.json.gz`` in it (not recursive), except the reports and exports
    traceviz wrote there (:func:`~traceviz.output_guard.rank_dir_members`).
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
    found = rank_dir_members(target)
    if not found:
        raise UsageError(f"{target}: a directory with no .json / .json.gz traces")
    return found


def render_loaded(result: RanksAnalysis, documents: Sequence[bytes], fmt: str,
                  plotlyjs: str = "inline", failed: Sequence[FailedRank] = ()) -> str:
    """Render a multi-rank analysis (``documents``: each kept rank's encoded single-trace
    document, in the order of ``result.ranks``; ``failed``: the rank traces left out)."""
    if fmt == "json":
        import msgspec

        from traceviz.report.ranks.jsonout import ranks_to_dict

        # one big document (all ranks' documents inside): drop each stage as soon as the next
        # exists, so at most two copies are alive at once
        encoded = msgspec.json.encode(ranks_to_dict(result, documents, failed))
        formatted = msgspec.json.format(encoded, indent=2)
        del encoded
        text = formatted.decode()
        del formatted
        return text + "\n"
    from traceviz.report.ranks.build import build_ranks_report

    if fmt == "text":
        from traceviz.report.ranks.text import render_ranks_text

        return render_ranks_text(build_ranks_report(result, figures=False, failed=failed))
    model = build_ranks_report(result, failed=failed)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(model)
    from traceviz.report.html import render_html

    return render_html(model, plotlyjs)
