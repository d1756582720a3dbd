"""The report model: what a report says, already formatted, independent of the output format.

:func:`build_trace_report` (one trace) and
:func:`traceviz.report.comparison_model.build_comparison_report` (several modes) turn analysis
results into a :class:`Report` of sections holding tables (formatted strings),
figures (plotly, built by :mod:`traceviz.report.figures`) and verdicts. Renderers
(:mod:`~traceviz.report.html`, :mod:`~traceviz.report.markdown`) only lay it out and escape it.
Display units: µs for per-step times (``ns / 1000``), ms for step times and whole-trace sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.model import Analysis
from traceviz.analyze.verdicts import Verdict
from traceviz.report import figures
from traceviz.report.comm_section import comm_section
from traceviz.report.elements import Figure, Section, Table
from traceviz.report.host_wait_section import WHOLE, host_wait_section, summary_sentence
from traceviz.report.step_rows import (
    capped,
    capped_note,
    resolve_cap,
    shown_steps,
    stats_rows,
    step_summary,
)
from traceviz.report.units import pct
from traceviz.trace.tables import Trace

#: Rows shown in long tables before the rest are summarised.
MAX_TABLE_ROWS = 50


@dataclass(frozen=True)
class Report:
    """A whole report: header facts, warnings, verdicts (comparison only) and sections."""

    kind: str  # "trace" or "comparison"
    title: str
    facts: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]
    sections: tuple[Section, ...]
    verdicts: tuple[Verdict, ...] = ()

    def figures(self) -> list[Figure]:
        return [i for s in self.sections for i in s.items if isinstance(i, Figure)]


# --- formatting ------------------------------------------------------------------------------


def us(ns: float | None, digits: int = 1) -> str:
    """Nanoseconds as microseconds with thousands separators; "–" for unknown."""
    return "–" if ns is None else f"{ns / 1000:,.{digits}f}"


def ms(value_ms: float | None, digits: int = 3) -> str:
    return "–" if value_ms is None else f"{value_ms:,.{digits}f}"


def num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}" if digits or value != int(value) else f"{int(value):,}"


def mib(value: int | None) -> str:
    return "–" if value is None else f"{value / 2**20:,.0f} MiB"


def table(id_: str, title: str, columns: list[tuple[str, bool]], rows: list[tuple[str, ...]],
           note: str = "", clip: tuple[bool, ...] = (), max_rows: int = MAX_TABLE_ROWS,
           total_rows: int | None = None) -> Table:
    """A table of the first ``max_rows`` of ``rows``; ``total_rows``: how many rows the whole
    table has when ``rows`` holds only its first ones (``None``: ``len(rows)``)."""
    shown = rows[:max_rows]
    total = len(rows) if total_rows is None else total_rows
    if total > len(shown):
        note = (note + " " if note else "") + f"Showing {len(shown)} of {total:,} rows."
    return Table(id_, title, tuple(c for c, _ in columns), tuple(shown),
                 tuple(n for _, n in columns), note,
                 clip + (False,) * (len(columns) - len(clip)) if clip else ())


# --- single trace ----------------------------------------------------------------------------


def _trace_facts(trace: Trace, analysis: Analysis) -> list[tuple[str, str]]:
    m = trace.meta
    t = analysis.totals
    names = [d.name for d in m.devices]
    devices = ", ".join(
        f"{names.count(n)} × {n}" if names.count(n) > 1 else n for n in dict.fromkeys(names)
    ) or "not recorded"
    facts = [
        ("trace", m.path),
        ("size", f"{m.size_bytes / 2**20:,.1f} MiB on disk, {m.events:,} events"),
        ("device", devices + (f" (rank {m.rank})" if m.rank is not None else "")),
    ]
    versions = {k: v for k, v in m.metadata.items() if "version" in k.lower()}
    if m.schema_version is not None:
        versions["schemaVersion"] = m.schema_version
    if versions:
        facts.append(("versions", ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))))
    facts += [
        ("steps", f"{t.steps} found, {t.steps_with_gpu} with GPU work"),
        ("GPU activities", f"{t.activities:,} ({t.kernels:,} kernels, {t.memcpys:,} memcpy, "
                           f"{t.memsets:,} memset); {t.unattributed:,} outside every step"),
        ("launch calls", f"{t.launches:,} ({t.graph_launches:,} CUDA-graph launches)"),
        ("cpu_bound_share (whole trace)", pct(t.cpu_bound_share) + ": host + sync wait over "
         "the summed step periods"),
        ("cpu_bound_share (median step)", pct(analysis.per_step.cpu_bound_share)
         + ": the median over the steps with GPU work"),
    ]
    sentence = analysis.host_wait_sources and summary_sentence(analysis.host_wait_sources,
                                                               t.cpu_bound_share, WHOLE)
    if sentence:
        facts.append(("host wait by source", sentence))
    return facts


def _listed_steps(analysis: Analysis, max_step_rows: int | None) -> list[int]:
    """The indexes of the steps a per-step table lists (all, or the capped halves)."""
    total = len(analysis.steps)
    if not capped(total, max_step_rows):
        return list(range(total))
    return list(shown_steps(total, min(resolve_cap(max_step_rows), MAX_TABLE_ROWS)))


def _per_step_section(analysis: Analysis, max_step_rows: int | None = None) -> Section:
    """The per-step figure and table. With more steps than ``max_step_rows`` (default 1000):
    the table lists the first and last halves of ``min(max_step_rows, MAX_TABLE_ROWS)`` steps,
    the figure those of ``max_step_rows``, and a table of statistics over all steps follows."""
    ps = analysis.per_step
    steps = analysis.steps
    total = len(steps)
    is_capped = capped(total, max_step_rows)
    cap = resolve_cap(max_step_rows)
    listed = steps.take(shown_steps(total, min(cap, MAX_TABLE_ROWS))) if is_capped else steps
    cols = [("step", False), ("period µs", True), ("GPU busy µs", True), ("host wait µs", True),
            ("sync wait µs", True), ("queued µs", True), ("in-graph µs", True),
            ("other idle µs", True), ("kernels", True), ("launches", True), ("CPU µs", True),
            ("cpu_bound_share", True)]
    rows = [
        (s.name, us(s.period_ns), us(s.gpu_busy_ns), us(s.host_wait_ns), us(s.sync_wait_ns),
         us(s.queued_ns), us(s.graph_internal_ns), us(s.other_idle_ns), num(s.kernels),
         num(s.launches), us(s.cpu_ns), pct(s.cpu_bound_share))
        for s in (listed if is_capped else listed[:MAX_TABLE_ROWS])
    ]
    shown_rows = len(rows)
    rows.append(
        ("median (steps with GPU work)", us(ps.period_ns), us(ps.gpu_busy_ns),
         us(ps.host_wait_ns), us(ps.sync_wait_ns), us(ps.queued_ns), us(ps.graph_internal_ns),
         us(ps.other_idle_ns), num(ps.kernels, 1 if ps.kernels % 1 else 0),
         num(ps.launches, 1 if ps.launches % 1 else 0), us(ps.cpu_ns), pct(ps.cpu_bound_share))
    )
    items: list[Table | Figure] = []
    note = "Each step's period = GPU busy + the five idle classes."
    limit = figures.MAX_FIGURE_STEPS
    drawn = np.asarray(shown_steps(total, min(cap, limit)), np.int64)
    figure_note = ""
    if len(drawn) < total:
        why = (f"--max-step-rows {cap}" if cap <= limit
               else f"a figure draws at most {limit:,} steps")
        figure_note = f"{len(drawn):,} of {total:,} steps: the first and last halves ({why})."
    if (steps.column("period_ns")[drawn] > 0).any():
        items.append(Figure("fig-steps", figures.step_breakdown(analysis, drawn), figure_note))
    if not is_capped:
        items.append(table("tbl-steps", "Per step", cols, rows, note,
                           total_rows=total + 1 if total > shown_rows else None))
    else:
        items.append(table("tbl-steps", "Per step", cols, rows,
                           note + " " + capped_note(len(listed), total, cap),
                           max_rows=len(rows)))
        items.append(table(
            "tbl-step-stats", f"Per-step statistics over all {total:,} steps",
            [("metric", False), ("count", True), ("min", True), ("p10", True),
             ("median", True), ("p90", True), ("max", True), ("mean", True)],
            stats_rows(step_summary(steps)),
            "Times in µs; p10, median, p90: nearest rank (an actual step's value); "
            "cpu_bound_share over the steps with GPU work."))
    return Section(
        "steps", "Steps",
        "The GPU period of a step runs from its first to its last GPU activity; idle time "
        "inside it is classed as host wait (the GPU waited for a launch), sync wait, time "
        "inside a CUDA graph, or other. cpu_bound_share = (host wait + sync wait) / period.",
        tuple(items),
    )


def _cpu_steps_section(analysis: Analysis, max_step_rows: int | None = None) -> Section:
    """The steps of a CPU-only trace (:attr:`Analysis.cpu_only`): each ``ProfilerStep``'s
    duration on the CPU (the first and last halves when capped, with a note) and the median
    over all steps."""
    steps = analysis.steps
    listed = steps.take(shown_steps(len(steps), min(resolve_cap(max_step_rows),
                                                    MAX_TABLE_ROWS)))
    rows = [(s.name, us(s.cpu_ns)) for s in listed]
    if analysis.median_step_cpu_ns is not None:
        rows.append(("median (all steps)", us(analysis.median_step_cpu_ns)))
    note = ""
    if capped(len(steps), max_step_rows):
        note = capped_note(len(listed), len(steps), resolve_cap(max_step_rows))
    return Section(
        "steps", "Steps (CPU only)",
        "The trace holds no GPU activity and no launch call: the steps ran on the CPU, so the "
        "GPU period, idle classes, kernels and launches do not apply. CPU µs is the "
        "ProfilerStep's duration.",
        (table("tbl-steps", "Per step", [("step", False), ("CPU µs", True)], rows, note,
               max_rows=len(rows)),),
    )


def kernel_tables(analysis: Analysis) -> tuple[Table, ...]:
    """The top kernels by GPU time and, when there are any, the Triton kernels with what
    Inductor fused into them (every format shows them)."""
    tables = [table(
        "tbl-kernels", "Top kernels by GPU time",
        [("kernel", False), ("family", False), ("count", True), ("total ms", True),
         ("mean µs", True), ("min µs", True), ("max µs", True)],
        [(k.name, k.family, num(k.count), f"{k.total_ns / 1e6:,.3f}", us(k.mean_ns, 2),
          us(k.min_ns, 2), us(k.max_ns, 2)) for k in analysis.top_kernels],
        clip=(True,),
    )]
    if analysis.triton_kernels:
        tables.append(table(
            "tbl-triton", "Triton kernels and what Inductor fused into them",
            [("kernel", False), ("kind", False), ("fused ops", False), ("count", True),
             ("total ms", True)],
            [(k.name, k.kind, ", ".join(k.fused_ops) or "–", num(k.count),
              f"{k.total_ns / 1e6:,.3f}") for k in analysis.triton_kernels],
            clip=(True,),
        ))
    return tuple(tables)


def _kernel_section(analysis: Analysis) -> Section:
    items: list[Table | Figure] = []
    if analysis.kernel_families:
        items.append(Figure("fig-families", figures.kernel_families(analysis)))
    items.extend(kernel_tables(analysis))
    return Section("kernels", "Kernels", "Whole-trace GPU time per kernel family and kernel.",
                   tuple(items))


#: The graph-replay section's introduction.
GRAPHS_INTRO = ("Each graph launch call and the activities it replayed; in-graph gaps are idle "
                "time between a graph's own nodes.")


def graph_table(analysis: Analysis) -> Table | None:
    """One row per CUDA-graph replay (``None``: the trace has none)."""
    if not analysis.graph_replays:
        return None
    rows = [
        (r.step or "outside steps", r.launch_name, num(r.nodes), num(r.kernels), us(r.launch_ns),
         us(r.launch_to_first_ns), us(r.span_ns), us(r.busy_ns), us(r.internal_gap_ns))
        for r in analysis.graph_replays
    ]
    return table("tbl-graphs", "Graph replays",
                 [("step", False), ("launch", False), ("nodes", True), ("kernels", True),
                  ("launch call µs", True), ("launch → first µs", True), ("span µs", True),
                  ("busy µs", True), ("in-graph gaps µs", True)], rows)


def _graph_section(analysis: Analysis) -> Section | None:
    graphs = graph_table(analysis)
    if graphs is None:
        return None
    return Section("graphs", "CUDA graph replays", GRAPHS_INTRO, (graphs,))


def compile_parts(analysis: Analysis) -> tuple[str, Table | None]:
    """The torch.compile section's introduction and its per-step table (``None``: no
    torch.compile markers in the trace)."""
    c = analysis.compile
    if not c.compiled:
        return ("No torch.compile markers (compiled regions, CompiledFxGraph calls) in this "
                "trace.", None)
    rows = [
        (s.step, num(s.regions), str(len(s.frames)), num(s.graph_breaks), us(s.cache_lookup_ns),
         num(s.compiled_graph_calls), num(s.input_copies), num(s.in_window_compiles))
        for s in c.steps[:MAX_TABLE_ROWS]
    ]
    intro = (f"{c.triton_kernels:,} Triton kernel activities. Recompiled regions: "
             f"{', '.join(c.recompiled_regions) or 'none'}. " + " ".join(c.notes))
    return intro.strip(), table(
        "tbl-compile", "Per step",
        [("step", False), ("compiled regions", True), ("frames", True),
         ("graph breaks", True), ("cache lookup µs", True), ("CompiledFxGraph calls", True),
         ("cudagraph input copies", True), ("compiles in window", True)], rows,
        total_rows=len(c.steps))


def _compile_section(analysis: Analysis) -> Section:
    intro, per_step = compile_parts(analysis)
    if per_step is None:
        return Section("compile", "torch.compile", intro, ())
    return Section("compile", "torch.compile structure", intro, (per_step,))


def gap_table(analysis: Analysis) -> Table:
    """Idle-gap statistics per class over all steps."""
    stats = analysis.gap_stats
    rows = [
        (g.gap_class, num(g.count), us(g.p50_ns, 2), us(g.p90_ns, 2), us(g.max_ns, 2),
         us(g.sum_ns))
        for g in stats.take(stats.column("scope") == "all")
    ]
    return table("tbl-gaps", "Gap statistics (all steps)",
                 [("class", False), ("gaps", True), ("p50 µs", True), ("p90 µs", True),
                  ("max µs", True), ("sum µs", True)], rows)


def _gap_section(analysis: Analysis) -> Section:
    items: list[Table | Figure] = []
    if len(analysis.gaps):
        items.append(Figure("fig-gaps", figures.gap_histogram(analysis)))
    items.append(gap_table(analysis))
    return Section("gaps", "Idle gaps", "Every idle hole inside a step's GPU period, by class.",
                   tuple(items))


def build_trace_report(trace: Trace, analysis: Analysis, max_step_rows: int | None = None
                       ) -> Report:
    """The single-trace report: health, steps, timeline, gaps, kernels, graphs, compile (a
    CPU-only trace: health, its steps' CPU times, compile).
    ``max_step_rows``: see :func:`_per_step_section` (``None``: the default, 1000)."""
    sections = ([_cpu_steps_section(analysis, max_step_rows), _compile_section(analysis)]
                if analysis.cpu_only else _gpu_sections(trace, analysis, max_step_rows))
    return Report(
        kind="trace",
        title=f"traceviz report: {trace.meta.path.rsplit('/', 1)[-1]}",
        facts=tuple(_trace_facts(trace, analysis)),
        warnings=tuple(w.message + (f" ({w.count:,})" if w.count else "")
                       for w in analysis.health),
        sections=tuple(sections),
    )


def _gpu_sections(trace: Trace, analysis: Analysis, max_step_rows: int | None
                  ) -> list[Section]:
    tl, tl_note = figures.timeline(trace, analysis)
    rep = analysis.representative_step()
    timeline = Section(
        "timeline", "Representative step",
        "The step whose GPU period is the median: CPU launch calls, graph replays, GPU "
        "activities per stream and idle gaps coloured by class. Drag to zoom, double-click to "
        "reset.",
        (Figure("fig-timeline", tl, (tl_note + ".") if tl_note else ""),) if rep else (),
    )
    sections = [_per_step_section(analysis, max_step_rows), timeline, _gap_section(analysis),
                _kernel_section(analysis)]
    host_wait = host_wait_section(analysis)
    if host_wait:
        sections.insert(3, host_wait)
    comm = comm_section(analysis, _listed_steps(analysis, max_step_rows))
    if comm:
        sections.insert(1, comm)
    graphs = _graph_section(analysis)
    if graphs:
        sections.append(graphs)
    sections.append(_compile_section(analysis))
    return sections
