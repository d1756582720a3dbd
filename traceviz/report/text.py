"""Compact terminal rendering of one analysis (rich tables)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text

from traceviz.analyze.model import Analysis
from traceviz.report.comm_section import comm_text
from traceviz.report.fit import KEEP, Column, fit_table
from traceviz.report.host_wait_section import WHOLE, summary_sentence, text_table
from traceviz.report.inert import inert_text, visible
from traceviz.report.model import compile_parts, gap_table, graph_table, kernel_tables
from traceviz.report.step_rows import (
    capped,
    capped_note,
    resolve_cap,
    shown_steps,
    stats_rows,
    step_summary,
)
from traceviz.report.text_tables import rich_table
from traceviz.report.units import pct
from traceviz.trace import Trace


def _us(ns: int | float | None) -> str:
    return "–" if ns is None else f"{ns / 1000:,.1f}"


#: The per-step table's columns; when the terminal is narrow the lowest priorities go first.
STEP_COLUMNS = (
    Column("step", priority=KEEP), Column("kernels", True, 8), Column("launches", True, 7),
    Column("graphs", True, 2), Column("period", True, 9), Column("busy", True, 6),
    Column("host_wait", True, 5), Column("sync_wait", True, 3), Column("queued", True, 3),
    Column("graph_int", True, 1), Column("other", True, 0), Column("cpu_bound", True, 4),
)


def render_text(trace: Trace, a: Analysis, width: int | None = None,
                max_step_rows: int | None = None) -> Group:
    """A rich renderable: header, per-step table, totals, host-wait sources, the gap, kernel,
    CUDA-graph and torch.compile tables (as in Markdown / HTML), health. ``width``: fit the per-step
    table to this many columns (dropping the least important ones; ``None``: all columns).
    At most ``max_step_rows`` steps are listed (``None``: the default, 1000; the first and
    last halves, :func:`~traceviz.report.step_rows.shown_steps`), then statistics over all."""
    m = trace.meta
    devices = ", ".join(sorted({d.name for d in m.devices})) or "no device properties"
    head = Text.assemble(
        (visible(Path(m.path).name), "bold"),
        f"  ({m.events:,} events, {len(a.steps)} steps, {visible(devices)})\n",
    )
    if a.cpu_only:
        return Group(head, *_cpu_only_parts(a, max_step_rows))
    rows = [
        (s.name, str(s.kernels), str(s.launches), str(s.graph_launches), _us(s.period_ns),
         _us(s.gpu_busy_ns), _us(s.host_wait_ns), _us(s.sync_wait_ns), _us(s.queued_ns),
         _us(s.graph_internal_ns), _us(s.other_idle_ns), pct(s.cpu_bound_share, 1))
        for s in a.steps.take(shown_steps(len(a.steps), max_step_rows))
    ]
    steps = fit_table(STEP_COLUMNS, rows, width, title="Per step (µs)", header_style="bold")
    t, p = a.totals, a.per_step
    summary = Table(
        title="Per step (median over steps with GPU work)", title_justify="left", show_header=False
    )
    summary.add_column(justify="left")
    summary.add_column(justify="right")
    kpl = "–" if p.kernels_per_launch is None else f"{p.kernels_per_launch:.2f}"
    for label, value in (
        ("kernels / step", f"{p.kernels:g}"),
        ("launch calls / step", f"{p.launches:g}"),
        ("GPU activities per launch", kpl),
        ("GPU period / step (µs)", _us(p.period_ns)),
        ("GPU busy / step (µs)", _us(p.gpu_busy_ns)),
        ("host wait / step (µs)", _us(p.host_wait_ns)),
        ("CPU-bound share (median step)", pct(p.cpu_bound_share, 1)),
        ("CPU-bound share (whole trace)", pct(t.cpu_bound_share, 1)),
        ("activities attributed / total", f"{t.attributed:,} / {t.activities:,}"),
        ("Triton kernels / graph launches", f"{t.triton_kernels:,} / {t.graph_launches:,}"),
    ):
        summary.add_row(label, value)
    parts: list = [head, steps]
    if capped(len(a.steps), max_step_rows):
        parts += [Text(capped_note(len(rows), len(a.steps), resolve_cap(max_step_rows)),
                       style="italic"), _stats_table(a)]
    parts.append(summary)
    parts += comm_text(a, shown_steps(len(a.steps), max_step_rows))
    hw = a.host_wait_sources
    if hw is not None and hw.total_ns > 0:
        parts += [text_table(hw), inert_text(summary_sentence(hw, t.cpu_bound_share, WHOLE) or "")]
    parts += _detail_tables(a, width)
    if a.health:
        parts.append(_health_text(a))
    return Group(*parts)


def _health_text(a: Analysis) -> Text:
    """The trace's health notes, one line each."""
    health = Text("Trace health\n", style="bold yellow")
    for h in a.health:
        health.append(f"  ! {visible(h.message)}\n", style="yellow")
    return health


def _cpu_only_parts(a: Analysis, max_step_rows: int | None) -> list:
    """A CPU-only trace (:attr:`Analysis.cpu_only`): each step's ProfilerStep duration, their
    median, the torch.compile summary and the health note; no GPU tables."""
    steps = Table(title="Per step, CPU only (µs: the ProfilerStep's duration)",
                  title_justify="left", header_style="bold")
    steps.add_column("step")
    steps.add_column("CPU µs", justify="right")
    shown = shown_steps(len(a.steps), max_step_rows)
    for s in a.steps.take(shown):
        steps.add_row(inert_text(s.name), _us(s.cpu_ns))
    if a.median_step_cpu_ns is not None:
        steps.add_row("median (all steps)", _us(a.median_step_cpu_ns), style="bold")
    parts: list = [steps]
    if capped(len(a.steps), max_step_rows):
        parts.append(Text(capped_note(len(shown), len(a.steps), resolve_cap(max_step_rows)),
                          style="italic"))
    intro, _ = compile_parts(a)
    return [*parts, inert_text(f"torch.compile: {intro}"), _health_text(a)]


def _detail_tables(a: Analysis, width: int | None) -> list:
    """The gap, kernel, CUDA-graph and torch.compile tables of the Markdown / HTML report."""
    gaps = gap_table(a)
    out: list = [rich_table(gaps, width)] if gaps.rows else []
    out += [rich_table(k, width) for k in kernel_tables(a)]
    graphs = graph_table(a)
    if graphs is not None:
        out.append(rich_table(graphs, width))
    intro, per_step = compile_parts(a)
    out.append(inert_text(f"torch.compile: {intro}"))
    if per_step is not None:
        out.append(rich_table(per_step, width))
    return out


def _stats_table(a: Analysis) -> Table:
    """Count, min, p10, median, p90, max, mean of each per-step metric over all steps."""
    out = Table(title=f"Per-step statistics over all {len(a.steps):,} steps", title_justify="left",
                header_style="bold")
    out.add_column("metric")
    for c in ("count", "min", "p10", "median", "p90", "max", "mean"):
        out.add_column(c, justify="right")
    for row in stats_rows(step_summary(a.steps)):
        out.add_row(*row)
    return out
