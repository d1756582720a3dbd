"""The comparison report: load a run directory or a set of traces, compare, render.

Entry points: :func:`load_inputs` (run dir or trace files → :class:`ModeInput` list),
:func:`build` (→ comparison + report model), :func:`render` (html / md / json / text), and
:func:`write_run_report`, which ``traceviz profile`` calls at the end of a run.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.analyze.compare.modes import Comparison, ModeInput, compare
from traceviz.analyze.distributed.rank_input import RankFacts
from traceviz.analyze.verdicts import Thresholds
from traceviz.errors import UsageError
from traceviz.report.comparison_model import build_comparison_report
from traceviz.report.model import Report
from traceviz.report.ranks.compare_inputs import RankSetInput
from traceviz.report.run_dir import MANIFEST, is_run_dir, read_run_manifest

if TYPE_CHECKING:
    from traceviz.analyze.review.run_diff import RunData
    from traceviz.analyze.review.version_diff import VersionComparison

FORMATS = ("html", "json", "md", "text")
SCHEMA = "traceviz.compare/1"
#: Width of the text comparison (characters) unless ``COLUMNS`` says otherwise
#: (:mod:`traceviz.report.text_width`).
TEXT_WIDTH = 200
_TRACE_SUFFIX = re.compile(r"(\.pt\.trace)?\.json(\.gz)?$")


@dataclass(frozen=True)
class Inputs:
    """What is being compared and where it came from."""

    modes: list[ModeInput]
    source: str  # the run dir, or the trace paths joined
    manifest: dict[str, Any] | None  # the whole run manifest, if any
    rank_facts: dict[str, RankFacts] = field(default_factory=dict)  # single rank traces
    rank_sets: tuple[RankSetInput, ...] = ()  # rank directories, one per mode
    versions: tuple[RunData, RunData] | None = None  # ``profile --against``: (old, new) runs


def _analyze(path: Path, workers: int | None, keep: dict[Path, Any] | None = None
             ) -> tuple[Any, str | None]:
    """The analysis and device names of one trace, loaded and analysed by ``workers``
    (``None``: :func:`~traceviz.trace.parallel.worker_count`'s default). With ``keep``, the
    analysis and the trace's kernel profile are also kept there under ``path``
    (:data:`traceviz.report.run_compare_report.Analysed`), for a later reader of the same file."""
    from traceviz.analyze.analysis import analyze
    from traceviz.trace import load

    trace = load(path, workers=workers)
    device = ", ".join(sorted({d.name for d in trace.meta.devices})) or None
    analysis = analyze(trace, workers=workers)
    if keep is not None:
        from traceviz.analyze.review.kernel_diff import kernel_profile

        keep[path] = (analysis, kernel_profile(trace, analysis))
    return analysis, device


def _slowest_rank(run_dir: Path, names: list[str], straggler: int | None,
                  workers: int | None) -> tuple[Path | None, Any, str | None, Any]:
    """The trace, analysis and device of a distributed mode's slowest rank (its step time is
    the mode's: :mod:`traceviz.analyze.distributed.slowest`), and the mode's bounding rank
    (``straggler`` from its ``ranks_summary``, else the slowest:
    :mod:`traceviz.analyze.distributed.bounding`)."""
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.distributed.bounding import bounding_rank
    from traceviz.analyze.distributed.discover import rank_info
    from traceviz.analyze.distributed.slowest import slowest_rank_index
    from traceviz.trace import load

    found = [run_dir / n for n in names if (run_dir / n).is_file()]
    if not found:
        return None, None, None, None
    traces = [load(p, workers=workers) for p in found]
    analyses = [analyze(t, workers=workers) for t in traces]
    i = slowest_rank_index(analyses)
    device = ", ".join(sorted({d.name for d in traces[i].meta.devices})) or None
    ranked = [(rank_info(t)[0], a) for t, a in zip(traces, analyses, strict=True)]
    return found[i], analyses[i], device, bounding_rank(ranked, straggler)


def _stack_analysis(run_dir: Path, entry: Any, workers: int | None) -> Any:
    """The analysis of a mode's stacked trace (``stack_profiled``), when it was recorded."""
    stacked = entry.get("stack_profiled") if isinstance(entry, dict) else None
    if not isinstance(stacked, dict) or stacked.get("status") != "ok" or not stacked.get("trace"):
        return None
    path = run_dir / str(stacked["trace"])
    return _analyze(path, workers)[0] if path.is_file() else None


def load_run_dir(run_dir: Path, *, workers: int | None = None) -> Inputs:
    """Every mode of a run directory's manifest, with the analysis of its trace if it has one
    (for ``profile --nproc``: its slowest rank's, plus the straggler evidence of its
    ``ranks_summary``) and of its stacked trace (host-wait sources) when recorded. Each trace
    is loaded and analysed by ``workers`` (``None``: the default count)."""
    from traceviz.analyze.distributed.launch import launch_evidence_from_summary

    manifest, modes = read_run_manifest(run_dir)
    against = isinstance(manifest.get("against"), dict)  # profile --against: lead with old → new
    analysed: dict[Path, Any] | None = {} if against else None  # NEW's traces, read once
    inputs = []
    for mode, entry in modes.items():
        trace_name = (entry.get("profiled") or {}).get("trace") if isinstance(entry, dict) else None
        analysis = device = bounding = None
        path = run_dir / trace_name if trace_name else None
        rank_traces = (entry.get("profiled") or {}).get("traces") if isinstance(entry, dict) \
            else None
        ranks = (launch_evidence_from_summary(entry.get("ranks_summary"))
                 if isinstance(entry, dict) else None)
        if isinstance(rank_traces, list) and len(rank_traces) > 1:  # profile --nproc
            path, analysis, device, bounding = _slowest_rank(
                run_dir, rank_traces, ranks.straggler_rank if ranks is not None else None,
                workers)
        elif path is not None and path.is_file():
            analysis, device = _analyze(path, workers, analysed)
        inputs.append(ModeInput(str(mode), str(path) if path else None, analysis,
                                entry if isinstance(entry, dict) else None, device, ranks,
                                _stack_analysis(run_dir, entry, workers), bounding))
    versions = None
    if against:
        from traceviz.report.version_report import load_version_runs

        versions = load_version_runs(run_dir, manifest, workers=workers, analysed=analysed)
    return Inputs(inputs, str(run_dir), manifest, versions=versions)


def versions_of(inputs: Inputs, thresholds: Thresholds | None = None
                ) -> VersionComparison | None:
    """The old → new comparison of a ``profile --against`` run (``None`` for other inputs)."""
    if inputs.versions is None:
        return None
    from traceviz.analyze.review.version_diff import compare_versions

    return compare_versions(*inputs.versions, thresholds)


def trace_labels(paths: list[Path]) -> list[str]:
    """One mode name per trace file, after the file (``eager.pt.trace.json.gz`` → ``eager``);
    files of one name in different folders (``a/rank0.json``, ``b/rank0.json``) are named
    ``folder/name``; ``#2``, ``#3`` tell apart any still equal."""
    labels = [_TRACE_SUFFIX.sub("", p.name) or p.name for p in paths]
    folders = [p.absolute().parent for p in paths]
    for label in set(labels):
        same = [i for i, x in enumerate(labels) if x == label]
        if len({folders[i] for i in same}) > 1:
            for i in same:
                labels[i] = f"{folders[i].name}/{label}"
    out: list[str] = []
    for label in labels:
        shown, n = label, 2
        while shown in out:
            shown, n = f"{label}#{n}", n + 1
        out.append(shown)
    return out


def load_traces(paths: list[Path], *, workers: int | None = None) -> Inputs:
    """One mode per trace file (:func:`trace_labels`), loaded and analysed by ``workers``; the
    rank and NCCL share of each trace that is a rank of a distributed run (warned about:
    :mod:`traceviz.report.ranks.compare_inputs`)."""
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.distributed.rank_input import rank_facts
    from traceviz.trace import load

    inputs: list[ModeInput] = []
    facts: dict[str, RankFacts] = {}
    for label, p in zip(trace_labels(paths), paths, strict=True):
        trace = load(p, workers=workers)
        analysis = analyze(trace, workers=workers)
        device = ", ".join(sorted({d.name for d in trace.meta.devices})) or None
        found = rank_facts(trace, analysis)
        if found is not None:
            facts[label] = found
        inputs.append(ModeInput(label, str(p), analysis, None, device))
    return Inputs(inputs, ", ".join(str(p) for p in paths), None, facts)


def load_rank_dirs(folders: list[Path], *, workers: int | None = None) -> Inputs:
    """One mode per directory of rank traces, through the multi-rank analysis
    (:mod:`traceviz.report.ranks.compare_inputs`; each rank loaded and analysed by ``workers``)."""
    from traceviz.analyze.distributed.launch import launch_evidence
    from traceviz.report.ranks.compare_inputs import folder_labels, load_rank_set

    sets = tuple(load_rank_set(mode, f, workers=workers)
                 for mode, f in zip(folder_labels(folders), folders, strict=True))
    modes = [ModeInput(s.mode, str(s.slowest_path), s.slowest_analysis, None, s.device,
                       launch_evidence(s.ranks), bounding=s.bounding) for s in sets]
    return Inputs(modes, ", ".join(str(f) for f in folders), None, rank_sets=sets)


def load_inputs(paths: list[Path], *, workers: int | None = None) -> Inputs:
    """A single run directory, two or more trace files, or two or more directories of rank
    traces (one mode each); every trace loaded and analysed by ``workers`` (``None``: every
    usable core, :func:`~traceviz.trace.parallel.worker_count`)."""
    from traceviz.report.ranks.compare_inputs import rank_traces

    if len(paths) == 1 and is_run_dir(paths[0]):
        return load_run_dir(paths[0], workers=workers)
    dirs = [p for p in paths if p.is_dir()]
    if len(paths) == 2 and all(is_run_dir(p) for p in paths):
        raise UsageError("two run directories compare run with run, not as modes: "
                         "traceviz compare RUN_A RUN_B (traceviz.report.run_compare_report)")
    if dirs and len(dirs) == len(paths) >= 2 and all(rank_traces(d) and not is_run_dir(d)
                                                     for d in dirs):
        return load_rank_dirs(dirs, workers=workers)
    if dirs:
        raise UsageError(f"{dirs[0]}: not a run directory (no {MANIFEST}) nor, with another "
                         "such directory, a directory of rank traces (rank<N> in the file "
                         "names); pass trace files, one run directory, or two or more rank "
                         "directories")
    if len(paths) < 2:
        raise UsageError("compare needs a run directory or at least two traces")
    return load_traces(paths, workers=workers)


def _facts(inputs: Inputs, comparison: Comparison) -> list[tuple[str, str]]:
    m = inputs.manifest or {}
    facts: list[tuple[str, str]] = [("source", inputs.source)]
    wl = m.get("workload") or {}
    if wl.get("name"):
        desc = f" — {wl['description']}" if wl.get("description") else ""
        facts.append(("workload", f"{wl['name']}{desc}"))
    env = m.get("environment") or {}
    if env:
        labels = (("gpu", ""), ("torch", "torch "), ("triton", "triton "), ("cuda", "CUDA "),
                  ("driver", "driver "), ("python", "Python "))
        facts.append(("environment", " · ".join(f"{label}{env[k]}" for k, label in labels
                                                 if env.get(k))))
    else:
        devices = sorted({i.device for i in inputs.modes if i.device})
        facts.append(("device", ", ".join(devices) or "not recorded"))
    if m.get("created"):
        facts.append(("run started", str(m["created"])))
    facts.append(("baseline", comparison.baseline))
    if inputs.rank_sets:
        from traceviz.report.ranks.compare_inputs import rank_set_fact

        facts += [rank_set_fact(r) for r in inputs.rank_sets]
    for i in inputs.modes:  # profile --nproc: each mode's straggler, from its ranks report
        summary = (i.manifest or {}).get("ranks_summary") or {}
        sentence = (summary.get("straggler") or {}).get("sentence")
        if sentence:
            facts.append((f"{i.mode} ranks", f"{sentence} (slowest rank's step time compared; "
                          f"{(i.manifest or {}).get('ranks_report')})"))
    return facts


def _warnings(inputs: Inputs) -> list[str]:
    from traceviz.analyze.review.manifest_check import manifest_warnings
    from traceviz.report.ranks.compare_inputs import rank_warnings

    out = rank_warnings(inputs.rank_facts)
    if inputs.manifest is not None:
        out += manifest_warnings(inputs.manifest)
    devices = {i.device for i in inputs.modes if i.device}
    if len(devices) > 1:
        out.append("the traces come from different GPUs (" + ", ".join(sorted(devices))
                   + "): differences are not only due to the mode")
    for i in inputs.modes:
        if i.analysis is not None:
            out += [f"{i.mode}: {w.message}" for w in i.analysis.health if w.code != "format"]
    return out


def _resolved(path: str) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return None


def resolve_baseline(baseline: str | None, modes: list[ModeInput]) -> str | None:
    """The mode named by ``--baseline``: a mode name, a trace path (exact or resolving to the
    same file), or a trace's file name as typed (``eager.json.gz``). ``None`` stays ``None``."""
    names = [i.mode for i in modes]
    if baseline is None or baseline in names:
        return baseline
    traced = [i for i in modes if i.trace_path]
    found = [i.mode for i in traced if i.trace_path == baseline]
    if not found:
        want = _resolved(baseline)
        found = [i.mode for i in traced
                 if want is not None and _resolved(i.trace_path or "") == want]
    if not found:
        found = [i.mode for i in traced if Path(i.trace_path or "").name == baseline]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise UsageError(f"--baseline {baseline!r} matches several inputs ({', '.join(found)}); "
                         "pass its path or mode name")
    raise UsageError(f"--baseline {baseline!r} is not one of: {', '.join(names)} (a mode name, "
                     "a trace path or a trace's file name)")


def build(
    inputs: Inputs, baseline: str | None = None, thresholds: Thresholds | None = None
) -> tuple[Comparison, Report]:
    """Compare the inputs and build the report model (``baseline``: see
    :func:`resolve_baseline`)."""
    names = [i.mode for i in inputs.modes]
    comparison = compare(inputs.modes, resolve_baseline(baseline, inputs.modes), thresholds)
    wl = (inputs.manifest or {}).get("workload") or {}
    if wl.get("name"):
        subject = str(wl["name"])
    elif len(names) <= 3:
        subject = " vs ".join(names)
    else:
        subject = f"{len(names)} traces"
    title = f"traceviz comparison: {subject}"
    report = build_comparison_report(comparison, title, _facts(inputs, comparison),
                                     _warnings(inputs))
    versions = versions_of(inputs, thresholds)
    if versions is not None:
        from traceviz.report.version_report import version_facts, version_sections

        report = replace(report, facts=version_facts(versions) + report.facts,
                         sections=version_sections(versions) + report.sections)
    return comparison, report


#: What a waterfall's numbers are, by its units (traceviz.analyze.compare.waterfall).
_WATERFALL_STATISTIC = {
    "unprofiled": "pair-level median baseline step, mode = baseline / speed-up; GPU busy and "
    "other idle: mean changes of the lean traces; host overhead: the rest",
    "profiled": "mean over the profiled steps with GPU work",
}


def comparison_to_dict(comparison: Comparison, report: Report,
                       versions: VersionComparison | None = None) -> dict[str, Any]:
    """The comparison JSON: rows, waterfalls (µs), verdicts, thresholds and every figure; with
    ``versions`` (``profile --against``), its old → new comparison first, as ``against``."""
    from traceviz.report.badges import badge, not_run_badges

    figures = {f.id: json.loads(f.figure.to_json()) for f in report.figures()}
    not_run = not_run_badges(comparison.rows)
    lead = {}
    if versions is not None:
        from traceviz.report.version_report import version_document

        lead = {"against": version_document(versions)}
    return {
        "schema": SCHEMA,
        **lead,
        "title": report.title,
        "facts": dict(report.facts),
        "warnings": list(report.warnings),
        "baseline": comparison.baseline,
        "rows": [asdict(r) for r in comparison.rows],
        "waterfalls": [
            {"mode": w.mode, "baseline": w.baseline, "units": w.units,
             "statistic": _WATERFALL_STATISTIC[w.units],
             "baseline_period_us": w.baseline_period_ns / 1000, "period_us": w.period_ns / 1000,
             "delta_us": w.delta_ns / 1000,
             "parts_us": {k.removesuffix("_ns"): v / 1000 for k, v in w.parts.items()},
             "cross_check_us": {k.removesuffix("_ns"): v / 1000
                                for k, v in w.cross_check.items()}}
            for w in comparison.waterfalls
        ],
        "unprofiled": {mode: s.as_dict() for mode, s in comparison.unprofiled.items()},
        "headline": {h.mode: {**h.as_dict(), "badge": badge(h.speed_status, h.mode, not_run)}
                     for h in comparison.headlines},
        "verdicts": [{**v.as_dict(), "badge": badge(v.status, v.mode, not_run)}
                     for v in comparison.verdicts],
        "thresholds": comparison.thresholds.as_dict(),
        "notes": list(comparison.notes),
        "figures": figures,
    }


#: Priorities of the comparison table's columns in a narrow terminal (higher stays longer).
_ROW_PRIORITY = {"mode": 1000, "status": 9, "step ms (p10–p90)": 8, "kernels/step": 7,
                 "launches/step": 6, "busy ms/step": 5, "cpu-bound (median step)": 4,
                 "profiled ms": 3,
                 "outputs": 2, "first call": 1, "kernels/launch": 1, "inflation": 0,
                 "stacked": 0, "peak mem": 0}


def render_text(comparison: Comparison, width: int | None = None,
                versions: VersionComparison | None = None) -> Any:
    """A rich renderable: the per-mode headlines, the comparison table, the verdicts and the
    comparison's notes (``! …``), fitted to ``width`` columns (``None``: every column); led by
    the old → new table when ``versions`` is given (``profile --against``)."""
    from rich.console import Group
    from rich.text import Text

    from traceviz.report.comparison_model import (
        ROW_COLUMNS,
        noisy_note,
        row_cells,
        speedup_cell,
    )
    from traceviz.report.fit import KEEP, Column, fit_table
    from traceviz.report.inert import inert_text

    # "kernels/step" → "kernels /step": a narrow column may wrap its header at the slash.
    columns = [Column(name.replace("/", " /"), numeric, _ROW_PRIORITY.get(name, 0),
                      None if name == "mode" or numeric else 12)
               for name, numeric in ROW_COLUMNS]
    rows = fit_table(columns, [row_cells(r) for r in comparison.rows], width,
                     title=f"Modes (baseline {comparison.baseline})")
    from traceviz.report.badges import badge, not_run_badges

    style = {"WIN": "bold green", "NO_WIN": "bold", "REGRESSION": "bold red",
             "INCONCLUSIVE": "bold yellow", "SKIPPED": "bold blue", "FAILED": "bold magenta"}
    not_run = not_run_badges(comparison.rows)

    def status_cell(status: str, mode: str) -> Text:
        shown = badge(status, mode, not_run)
        return Text(shown, style=style[shown])

    heads = fit_table(
        [Column("mode", priority=KEEP), Column("speed", priority=KEEP),
         Column("speed-up", priority=5), Column("headline", priority=KEEP, abbreviate_to=20)],
        [(h.mode, status_cell(h.speed_status, h.mode), speedup_cell(h), h.text)
         for h in comparison.headlines], width,
        title=f"Headline (baseline {comparison.baseline})")
    evidence = {h.mode: h.evidence_source or "–" for h in comparison.headlines}
    verdicts = fit_table(
        [Column("mode", priority=KEEP), Column("verdict", priority=KEEP),
         Column("status", priority=KEEP), Column("evidence", priority=1),
         Column("why", priority=KEEP, abbreviate_to=20)],
        [(v.mode, v.kind, status_cell(v.status, v.mode),
          str(v.evidence.get("evidence_source") or evidence.get(v.mode, "–")), v.explanation)
         for v in comparison.verdicts], width, title="Verdicts")
    legend = noisy_note(comparison.rows)
    parts = [heads, rows, *([Text(legend, style="dim")] if legend else [])]
    if versions is not None:
        from traceviz.report.version_report import version_text

        parts.insert(0, version_text(versions, width))
    if comparison.unprofiled:
        from traceviz.report.unprofiled_section import SPLIT_COLUMNS, split_rows

        parts.append(fit_table(
            [Column(name, numeric, 1000 if name == "mode" else 1) for name, numeric
             in SPLIT_COLUMNS], split_rows(comparison), width,
            title="Without the profiler (baseline → mode, ms per step; pairs in the mode's "
            "process)"))
    notes = [inert_text(f"! {n}", "yellow") for n in comparison.notes]
    return Group(*parts, verdicts, *notes)


def render(comparison: Comparison, report: Report, fmt: str, plotlyjs: str = "inline",
           versions: VersionComparison | None = None) -> str:
    """The comparison in one of :data:`FORMATS` as a string (``versions``: the old → new
    comparison of a ``profile --against`` run, which JSON and text lead with; HTML and
    Markdown have it in ``report`` already)."""
    if fmt == "html":
        from traceviz.report.html import render_html

        return render_html(report, plotlyjs)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from traceviz.report.jsonout import dumps

        return dumps(comparison_to_dict(comparison, report, versions))
    if fmt == "text":
        import io

        from rich.console import Console

        from traceviz.report.text_width import text_width

        width = text_width(TEXT_WIDTH)
        console = Console(record=True, width=width, file=io.StringIO())
        console.print(render_text(comparison, width=width, versions=versions))
        return console.export_text()
    raise UsageError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def write_run_report(
    run_dir: Path, *, plotlyjs: str = "inline", force: bool = True,
    thresholds: Thresholds | None = None,
) -> tuple[Path, Comparison]:
    """Write ``RUN_DIR/report.html`` (the comparison of every mode); return its path and the
    comparison (``traceviz profile`` prints its headlines).

    Called by ``traceviz profile`` at the end of a run; the run directory is its own, so an
    earlier report there is replaced unless ``force`` is false.
    """
    from traceviz.report.output import write_atomic

    inputs = load_run_dir(run_dir)
    comparison, report = build(inputs, thresholds=thresholds)
    path = write_atomic(run_dir / "report.html",
                        render(comparison, report, "html", plotlyjs),
                        force=force)
    return path, comparison
