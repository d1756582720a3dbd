"""Compact terminal rendering of one analysis (rich tables)."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from traceviz.analyze.model import Analysis
from traceviz.report.host_wait_section import summary_sentence, text_table
from traceviz.trace import Trace


def _us(ns: int | float | None) -> str:
    return "–" if ns is None else f"{ns / 1000:,.1f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def render_text(trace: Trace, a: Analysis) -> Group:
    """A rich renderable: header, per-step table, totals, health."""
    m = trace.meta
    devices = ", ".join(sorted({d.name for d in m.devices})) or "no device properties"
    head = Text.assemble(
        (m.path, "bold"),
        f"  ({m.events:,} events, {len(a.steps)} steps, {devices})\n",
    )
    steps = Table(title="Per step (µs)", title_justify="left", header_style="bold")
    for col in (
        "step",
        "kernels",
        "launches",
        "graphs",
        "period",
        "busy",
        "host_wait",
        "sync_wait",
        "graph_int",
        "other",
        "cpu_bound",
    ):
        steps.add_column(col, justify="left" if col == "step" else "right")
    for s in a.steps:
        steps.add_row(
            s.name,
            str(s.kernels),
            str(s.launches),
            str(s.graph_launches),
            _us(s.period_ns),
            _us(s.gpu_busy_ns),
            _us(s.host_wait_ns),
            _us(s.sync_wait_ns),
            _us(s.graph_internal_ns),
            _us(s.other_idle_ns),
            _pct(s.cpu_bound_share),
        )
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
        ("CPU-bound share", _pct(p.cpu_bound_share)),
        ("activities attributed / total", f"{t.attributed:,} / {t.activities:,}"),
        ("Triton kernels / graph launches", f"{t.triton_kernels:,} / {t.graph_launches:,}"),
    ):
        summary.add_row(label, value)
    parts: list = [head, steps, summary]
    hw = a.host_wait_sources
    if hw is not None and hw.total_ns > 0:
        parts += [text_table(hw), Text(summary_sentence(hw, t.cpu_bound_share) or "")]
    if a.health:
        health = Text("Trace health\n", style="bold yellow")
        for h in a.health:
            health.append(f"  ! {h.message}\n", style="yellow")
        parts.append(health)
    return Group(*parts)


def print_text(trace: Trace, a: Analysis, console: Console | None = None) -> None:
    (console or Console()).print(render_text(trace, a))
