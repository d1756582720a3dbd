"""``traceviz report TRACE|RUN_DIR|RANK_TRACES…``: the single-trace report, a run directory's
comparison, or the multi-rank report (several traces, or a directory of rank traces).

HTML is the default format (a self-contained page); ``json``, ``md`` and ``text`` go to stdout
unless ``-o`` is given.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from traceviz.cli.compare_cmd import (
    BaselineOpt,
    ForceOpt,
    Format,
    FormatOpt,
    MaxMemoryOpt,
    OutOpt,
    PlotlyJs,
    PlotlyOpt,
    ThresholdFileOpt,
    ThresholdOpt,
    WorkersOpt,
    apply_max_memory,
    apply_workers,
    comparison_output,
    emit,
    print_fitted_comparison,
)
from traceviz.cli.errors import user_errors
from traceviz.cli.strict import StrictOpt, enforce_strict

if TYPE_CHECKING:
    from traceviz.analyze.model import HealthWarning
    from traceviz.api import Analysis

#: Width of the text report when stdout is not a terminal.
TEXT_WIDTH = 140


def _hta_sections(traces: list[Path], fmt: Format, payload: str,
                  known: dict[Path, Analysis]) -> str:
    """Add the Holistic Trace Analysis section(s) (``--hta``) to a rendered report.

    JSON gets key ``hta`` (one trace: the result; a run dir: ``{trace file: result}``); Markdown
    and text get the Markdown section appended; HTML gets the escaped section before ``</main>``.
    HTA not installed: :class:`~traceviz.api.HtaMissingError` (the install line, exit 1); HTA's
    own failures are notes inside the section, never a failed report.
    """
    import json

    import traceviz
    from traceviz.report.hta_section import hta_html, hta_markdown

    results = []
    for path in traces:
        print(f"running HTA on {path.name} …", file=sys.stderr)
        analysis = known.get(path) or traceviz.analyze(path)
        results.append((path.name, analysis.hta()))
    if fmt is Format.json:
        doc = json.loads(payload)
        doc["hta"] = (results[0][1].to_dict() if len(results) == 1
                      else {name: r.to_dict() for name, r in results})
        from traceviz.report.jsonout import dumps

        return dumps(doc)
    if fmt is Format.html:
        fragments = "".join(hta_html(r) for _, r in results)
        return payload.replace("</main>", fragments + "</main>", 1)
    return payload + "".join("\n" + hta_markdown(r) for _, r in results)


def _trace_payload(trace: Path, fmt: Format, plotlyjs: str, to_terminal: bool,
                   analyses: dict[Path, Analysis],
                   health_out: list[tuple[str, tuple[HealthWarning, ...]]]) -> str | None:
    """Render one trace through the API; ``None`` when it was printed straight to the
    terminal (text, fitted to its width).

    The trace's analysis is left in ``analyses`` so ``--hta`` need not analyze it again, its
    health warnings in ``health_out`` (for ``--strict``).
    """
    import traceviz
    from traceviz.cli.progress import load_progress

    with load_progress(trace) as progress:
        analysis = traceviz.analyze(trace, progress=progress)
    analyses[trace] = analysis
    health_out.append((trace.name, analysis.result.health))
    if fmt is Format.text and to_terminal:
        from rich.console import Console

        console = Console(width=None if sys.stdout.isatty() else TEXT_WIDTH)
        console.print(analysis.text_renderable(console.width))
        return None
    return analysis.render(fmt.value, plotlyjs)


@user_errors
def report(
    targets: Annotated[
        list[Path], typer.Argument(help="A trace file (.json or .json.gz), or a run directory "
                                   "from `traceviz profile` (then: the comparison report), or "
                                   "the traces of a distributed run's ranks (several files or "
                                   "one directory: the multi-rank report).")
    ],
    fmt: FormatOpt = Format.html,
    out: OutOpt = None,
    force: ForceOpt = False,
    plotlyjs: PlotlyOpt = PlotlyJs.inline,
    baseline: BaselineOpt = None,
    threshold: ThresholdOpt = None,
    thresholds_file: ThresholdFileOpt = None,
    hta: Annotated[bool, typer.Option(
        "--hta", help="Add Holistic Trace Analysis's breakdowns and launch stats (needs "
        "`pip install traceviz[hta]`).")] = False,
    max_memory: MaxMemoryOpt = None,
    workers: WorkersOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Report on one trace (steps, timeline, gaps, kernels, graphs, compile) or a run dir."""
    apply_max_memory(max_memory)
    apply_workers(workers)
    from traceviz.report.compare_report import is_run_dir
    from traceviz.report.ranks_output import rank_trace_paths, render_ranks

    if hta:
        from traceviz.api import HtaMissingError
        from traceviz.holistic import hta_available

        if not hta_available():
            raise HtaMissingError()
    analyses: dict[Path, Analysis] = {}
    health: list[tuple[str, tuple[HealthWarning, ...]]] = []
    target = targets[0]
    rank_traces = rank_trace_paths(targets, is_run_dir(target))
    if rank_traces is not None:
        payload = render_ranks(rank_traces, fmt.value, plotlyjs.value)
        traces = rank_traces
        default = Path("traceviz-ranks.report.html")
    elif is_run_dir(target):
        if fmt is Format.text and out is None and not hta and sys.stdout.isatty():
            print_fitted_comparison([target], baseline, threshold, thresholds_file, health)
            if strict:
                enforce_strict(health)
            return
        payload, default = comparison_output([target], baseline, threshold, thresholds_file,
                                             fmt.value, plotlyjs.value, health_out=health)
        traces = sorted(target.glob("*.pt.trace.json*"))
    else:
        rendered = _trace_payload(target, fmt, plotlyjs.value,
                                  to_terminal=out is None and not hta, analyses=analyses,
                                  health_out=health)
        if rendered is None:
            if strict:
                enforce_strict(health)
            return
        payload = rendered
        traces = [target]
        stem = target.name.removesuffix(".gz").removesuffix(".json")
        default = Path(f"{stem}.report.html")
    if hta:
        payload = _hta_sections(traces, fmt, payload, analyses)
    emit(payload, fmt.value, out, default, force)
    if strict:
        enforce_strict(health)
