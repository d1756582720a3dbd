"""``traceviz report TRACE|RUN_DIR|RANK_TRACES…``: the single-trace report, a run directory's
comparison, or the multi-rank report (several traces, or a directory of rank traces).

HTML is the default format (a self-contained page); ``json``, ``md`` and ``text`` go to stdout
unless ``-o`` is given.

Rank traces are analysed one task per rank (:mod:`traceviz.scale`): in ``--workers`` local
processes, or on Dask with ``--dask local`` / ``--dask tcp://HOST:PORT``. A rank trace that
cannot be analysed is listed in the report with its reason and the command exits 1, unless
``--allow-missing-ranks``. Rank traces that are not consistent as one run (world sizes, GPU
models or clocks disagree) are refused with one line and exit 1
(:class:`~traceviz.errors.InconsistentRanksError`), unless ``--force-ranks``: then the report
is written with the warnings, and the straggler and waits computed anyway.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from traceviz.cli.comparison_output import (
    comparison_default,
    comparison_output,
    print_fitted_comparison,
)
from traceviz.cli.errors import fail, user_errors
from traceviz.cli.options import (
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
    apply_max_memory,
)
from traceviz.cli.outputs import emit, output_path
from traceviz.cli.strict import StrictOpt, enforce_strict
from traceviz.cli.version import VersionOpt

if TYPE_CHECKING:
    from traceviz.analyze.model import HealthWarning
    from traceviz.api import Analysis

#: Width of the text report when stdout is not a terminal and ``COLUMNS`` is not set.
TEXT_WIDTH = 140

ReportWorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", "-j", min=1, metavar="N", help="Processes decoding a big trace and "
                 "analysing it (at most 12 analysing); for rank traces: rank worker processes, "
                 "each analysing one rank at a time (default: every usable core, decoding capped "
                 "by memory; small rank sets in-process)."),
]
DaskOpt = Annotated[
    str | None,
    typer.Option("--dask", metavar="local|tcp://HOST:PORT", help="Rank traces: analyse each "
                 "rank as a Dask task, on a LocalCluster of --workers processes ('local') or "
                 "on a running scheduler (workers must reach the trace paths or URLs). Needs "
                 "`pip install 'traceviz\\[dask]'`."),
]
AllowMissingOpt = Annotated[
    bool,
    typer.Option("--allow-missing-ranks", help="Rank traces: exit 0 even when some rank "
                 "traces could not be analysed (they are still listed in the report)."),
]
ForceRanksOpt = Annotated[
    bool,
    typer.Option("--force-ranks", help="Rank traces: report them as one run even when they "
                 "are not consistent as one (world sizes, GPU models or clocks disagree; "
                 "without it: exit 1). The warnings stay in the report."),
]

MaxStepRowsOpt = Annotated[
    int | None,
    typer.Option("--max-step-rows", min=0, metavar="N", help="One trace: list at most N steps "
                 "(default 1000; 0: none). A trace with more steps lists its first and last "
                 "N/2 and gives statistics over all steps (count, min, p10, median, p90, max, "
                 "mean of each per-step metric)."),
]


def _rank_set_payload(paths: list[str], fmt: Format, plotlyjs: str, workers: int | None,
                      dask: str | None, force_ranks: bool = False
                      ) -> tuple[str, set[str], dict[str, float]]:
    """Render the multi-rank report; also return the rank traces that failed and each rank
    trace's communication/computation overlap share (for ``--hta``'s note). Traces that
    are not one run: :class:`~traceviz.errors.InconsistentRanksError` (nothing rendered),
    unless ``force_ranks``."""
    import traceviz
    from traceviz.cli.progress import rank_progress
    from traceviz.errors import InconsistentRanksError
    from traceviz.trace.limits import max_memory_bytes

    limit, source = max_memory_bytes()
    with rank_progress(len(paths)) as progress:
        ranks = traceviz.Ranks.from_paths(
            paths, workers=workers, dask=dask, progress=progress,
            announce=lambda line: print(line, file=sys.stderr),
            max_memory_bytes=limit if source == "--max-memory" else None, force=force_ranks)
    for f in ranks.failed:
        print(f"traceviz: rank trace failed: {f.path}: {f.reason}", file=sys.stderr)
    if not ranks.consistent and not force_ranks:
        from traceviz.analyze.distributed import INCONSISTENT_CODES

        raise InconsistentRanksError.of(ranks.inconsistency, tuple(
            w.code for w in ranks.result.health if w.code in INCONSISTENT_CODES))
    from traceviz.analyze.distributed.overlap import overlap_by_path

    return (ranks.render(fmt.value, plotlyjs), {f.path for f in ranks.failed},
            overlap_by_path(ranks.result))


def _hta_sections(traces: list[Path], fmt: Format, payload: str,
                  known: dict[Path, Analysis], workers: int | None,
                  overlaps: dict[str, float] | None = None) -> str:
    """Add the Holistic Trace Analysis section(s) (``--hta``) to a rendered report.

    JSON gets key ``hta`` (one trace: the result; a run dir: ``{trace file: result}``); Markdown
    and text get the Markdown section appended; HTML gets the escaped section before ``</main>``.
    HTA not installed: :class:`~traceviz.api.HtaMissingError` (the install line, exit 1); HTA's
    own failures are notes inside the section, never a failed report. A trace not in
    ``known`` is analysed by ``workers``. ``overlaps``: rank trace path → traceviz's overlap
    share, beside HTA's in the notes.
    """
    import json

    import traceviz
    from traceviz.report.hta_section import hta_html, hta_markdown

    by_path = {str(Path(k)): v for k, v in (overlaps or {}).items()}
    results = []
    for path in traces:
        print(f"running HTA on {path.name} …", file=sys.stderr)
        analysis = known.get(path) or traceviz.analyze(path, workers=workers)
        results.append((path.name, analysis.hta(by_path.get(str(path)))))
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
                   health_out: list[tuple[str, tuple[HealthWarning, ...]]],
                   workers: int | None, max_step_rows: int | None = None) -> str | None:
    """Render one trace through the API (loaded and analysed by ``workers``); ``None`` when
    it was printed straight to the terminal (text, fitted to its width).

    The trace's analysis is left in ``analyses`` so ``--hta`` need not analyze it again, its
    health warnings in ``health_out`` (for ``--strict``).
    """
    import traceviz
    from traceviz.cli.progress import load_progress

    with load_progress(trace) as progress:
        analysis = traceviz.analyze(trace, progress=progress, workers=workers)
    analyses[trace] = analysis
    health_out.append((trace.name, analysis.result.health))
    from traceviz.report.text_width import text_width

    if fmt is Format.text and to_terminal:
        from rich.console import Console

        console = Console(width=None if sys.stdout.isatty() else text_width(TEXT_WIDTH))
        console.print(analysis.text_renderable(console.width, max_step_rows=max_step_rows))
        return None
    return analysis.render(fmt.value, plotlyjs, text_width(TEXT_WIDTH),
                           max_step_rows=max_step_rows)


@user_errors
def report(
    target_args: Annotated[
        list[str], typer.Argument(metavar="TARGET...", help="A trace file (.json or "
                                  ".json.gz), or a run directory from `traceviz profile` "
                                  "(then: the comparison report), or the traces of a "
                                  "distributed run's ranks (several files or fsspec URLs, or "
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
        "`pip install 'traceviz\\[hta]'`).")] = False,
    max_memory: MaxMemoryOpt = None,
    workers: ReportWorkersOpt = None,
    dask: DaskOpt = None,
    allow_missing_ranks: AllowMissingOpt = False,
    force_ranks: ForceRanksOpt = False,
    strict: StrictOpt = False,
    max_step_rows: MaxStepRowsOpt = None,
    version: VersionOpt = False,
) -> None:
    """Report on one trace (steps, timeline, gaps, kernels, graphs, compile) or a run dir."""
    apply_max_memory(max_memory)
    from traceviz.analyze.verdicts import parse_thresholds
    from traceviz.errors import NoRankAnalysedError, UsageError
    from traceviz.output_guard import preflight
    from traceviz.report.ranks.output import rank_trace_paths
    from traceviz.report.run_dir import MANIFEST, is_run_dir
    from traceviz.trace.source import is_url

    thresholds = parse_thresholds(threshold, thresholds_file)  # fails before any reading
    if hta:
        from traceviz.api import HtaMissingError
        from traceviz.holistic import hta_available

        if not hta_available():
            raise HtaMissingError()
    if dask is not None:
        from traceviz.scale.dask_cluster import DaskMissingError, dask_available

        if not dask_available():
            raise DaskMissingError()
    analyses: dict[Path, Analysis] = {}
    health: list[tuple[str, tuple[HealthWarning, ...]]] = []
    failed: set[str] = set()
    urls = [t for t in target_args if is_url(t)]
    if urls and len(target_args) < 2:
        raise UsageError(f"{urls[0]}: a URL is read only as one of several rank traces")
    targets = [Path(t) for t in target_args]
    target = targets[0]
    run_dir = is_run_dir(target)
    rank_traces: list[str] | None = (
        list(target_args) if urls
        else [str(p) for p in rank_trace_paths(targets, run_dir) or []] or None)
    if rank_traces is None and (dask is not None or allow_missing_ranks or force_ranks):
        raise UsageError("--dask, --allow-missing-ranks and --force-ranks apply to rank "
                         "traces only (several trace files, or one directory of them)")
    stem = target.name.removesuffix(".gz").removesuffix(".json")
    default = (Path("traceviz-ranks.report.html") if rank_traces is not None
               else comparison_default([target]) if run_dir
               else Path(f"{stem}.report.html"))
    preflight(output_path(fmt.value, out, default), [*target_args, thresholds_file],
              force=force)
    overlaps: dict[str, float] = {}
    if rank_traces is not None:
        if hta and urls:
            raise UsageError("--hta reads local trace files, not URLs")
        try:
            payload, failed, overlaps = _rank_set_payload(rank_traces, fmt, plotlyjs.value,
                                                          workers, dask, force_ranks)
        except NoRankAnalysedError as exc:
            if len(targets) == 1 and target.is_dir():  # say how the directory was read
                raise NoRankAnalysedError(f"{target}: not a run directory (no {MANIFEST}), "
                                          f"read as a directory of rank traces: {exc}") from None
            raise
        traces = [Path(t) for t in rank_traces if t not in failed]  # --hta: the analysed ones
    elif run_dir:
        if fmt is Format.text and out is None and not hta and sys.stdout.isatty():
            print_fitted_comparison([target], baseline, thresholds, workers, health)
            if strict:
                enforce_strict(health)
            return
        payload = comparison_output([target], baseline, thresholds, fmt.value, plotlyjs.value,
                                    workers, health_out=health)
        traces = sorted(target.glob("*.pt.trace.json*"))
    else:
        rendered = _trace_payload(target, fmt, plotlyjs.value,
                                  to_terminal=out is None and not hta, analyses=analyses,
                                  health_out=health, workers=workers,
                                  max_step_rows=max_step_rows)
        if rendered is None:
            if strict:
                enforce_strict(health)
            return
        payload = rendered
        traces = [target]
    if hta:
        payload = _hta_sections(traces, fmt, payload, analyses, workers, overlaps)
    emit(payload, fmt.value, out, default, force)
    if failed and not allow_missing_ranks:
        raise fail(f"{len(failed)} of {len(rank_traces or ())} "
                   "rank traces could not be analysed (listed in the report); "
                   "--allow-missing-ranks accepts a partial result", 1)
    if strict:
        enforce_strict(health)
