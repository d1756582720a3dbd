"""``traceviz report TRACE|RUN_DIR``: the single-trace report, or a run directory's comparison.

HTML is the default format (a self-contained page); ``json``, ``md`` and ``text`` go to stdout
unless ``-o`` is given.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from traceviz.cli.compare_cmd import (
    BaselineOpt,
    ForceOpt,
    Format,
    FormatOpt,
    OutOpt,
    PlotlyJs,
    PlotlyOpt,
    ThresholdFileOpt,
    ThresholdOpt,
    comparison_output,
    emit,
)
from traceviz.cli.errors import user_errors
from traceviz.cli.strict import StrictOpt, enforce_strict

if TYPE_CHECKING:
    from traceviz.analyze.model import HealthWarning, Totals


def _hta_sections(traces: list[Path], fmt: Format, payload: str,
                  known_totals: dict[Path, Totals]) -> str:
    """Add the Holistic Trace Analysis section(s) (``--hta``) to a rendered report.

    JSON gets key ``hta`` (one trace: the result; a run dir: ``{trace file: result}``); Markdown
    and text get the Markdown section appended; HTML gets the escaped section before ``</main>``.
    HTA failures are notes inside the section, never a failed report.
    """
    import json

    import traceviz
    from traceviz.holistic import run_hta
    from traceviz.report.hta_section import hta_html, hta_markdown

    results = []
    for path in traces:
        print(f"running HTA on {path.name} …", file=sys.stderr)
        totals = known_totals.get(path) or traceviz.analyze(traceviz.load(path)).totals
        results.append((path.name, run_hta(path, totals=totals)))
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
                   totals_out: dict[Path, Totals],
                   health_out: list[tuple[str, tuple[HealthWarning, ...]]]) -> str | None:
    """Render one trace; ``None`` when it was printed straight to the terminal (text).

    The trace's totals are left in ``totals_out`` so ``--hta`` need not analyze it again, its
    health warnings in ``health_out`` (for ``--strict``).
    """
    import traceviz
    from traceviz.cli.progress import load_progress

    with load_progress(trace) as progress:
        tr = traceviz.load(trace, progress=progress)
    analysis = traceviz.analyze(tr)
    totals_out[trace] = analysis.totals
    health_out.append((trace.name, analysis.health))
    if fmt is Format.text:
        from rich.console import Console

        from traceviz.report.text import render_text

        if to_terminal:
            Console(width=None if sys.stdout.isatty() else 140).print(render_text(tr, analysis))
            return None
        console = Console(record=True, width=140, file=io.StringIO())
        console.print(render_text(tr, analysis))
        return console.export_text()
    if fmt is Format.json:
        import msgspec

        from traceviz.report.jsonout import analysis_to_dict

        encoded = msgspec.json.encode(analysis_to_dict(tr, analysis))
        return msgspec.json.format(encoded, indent=2).decode() + "\n"
    from traceviz.report.model import build_trace_report

    model = build_trace_report(tr, analysis)
    if fmt is Format.md:
        from traceviz.report.markdown import render_markdown

        return render_markdown(model)
    from traceviz.report.html import render_html

    return render_html(model, plotlyjs)


@user_errors
def report(
    target: Annotated[
        Path, typer.Argument(help="A trace file (.json or .json.gz), or a run directory from "
                             "`traceviz profile` (then: the comparison report).")
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
    strict: StrictOpt = False,
) -> None:
    """Report on one trace (steps, timeline, gaps, kernels, graphs, compile) or a run dir."""
    from traceviz.report.compare_report import is_run_dir

    totals: dict[Path, Totals] = {}
    health: list[tuple[str, tuple[HealthWarning, ...]]] = []
    if is_run_dir(target):
        payload, default = comparison_output([target], baseline, threshold, thresholds_file,
                                             fmt.value, plotlyjs.value, health_out=health)
        traces = sorted(target.glob("*.pt.trace.json*"))
    else:
        rendered = _trace_payload(target, fmt, plotlyjs.value,
                                  to_terminal=out is None and not hta, totals_out=totals,
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
        payload = _hta_sections(traces, fmt, payload, totals)
    emit(payload, fmt.value, out, default, force)
    if strict:
        enforce_strict(health)
