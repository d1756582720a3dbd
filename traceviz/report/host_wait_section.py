"""Host-wait sources in the reports: JSON, terminal table, report section, summary sentence.

Rows come from :class:`~traceviz.analyze.host_wait.HostWaitSources`; "host wait" here is
``host_wait + sync_wait`` (the CPU-bound idle time) and ``share`` is of that. Definitions:
``docs/metrics.md``, "Host-wait sources". plotly is imported only by :func:`icicle`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from traceviz.analyze.host_wait import (
    MIN_PHRASE_SHARE,
    HostWaitSources,
    SourceRow,
    display_name,
    informative_sources,
    profiler_step_ns,
    top_rows,
)
from traceviz.report.elements import Figure, Section, Table
from traceviz.report.units import pct, share, us

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from rich.table import Table as RichTable

    from traceviz.analyze.model import Analysis

#: Rows per view in JSON (plus one row for the rest).
JSON_ROWS = 20
#: Rows in the text and Markdown tables.
TABLE_ROWS = 10
#: Sources named in the summary sentence.
SUMMARY_SOURCES = 3
#: Call paths below this share of the trace's host wait are left out of the icicle.
MIN_PATH_SHARE = 0.001
#: Share of the host wait in the profiler's step() above which the section notes it.
PROFILER_NOTE_SHARE = 0.01
#: Levels of the icicle shown at once (click a box to zoom into deeper ones).
ICICLE_LEVELS = 10


def _rows(rows: tuple[SourceRow, ...], total_ns: int) -> list[dict[str, Any]]:
    return [{"source": r.source, "host_wait_us": us(r.host_wait_ns), "share": share(r.share),
             "gaps": r.gaps} for r in top_rows(rows, JSON_ROWS, total_ns)]


def host_wait_json(h: HostWaitSources, steps: Sequence[int] | None = None) -> dict[str, Any]:
    """``{trace: {inclusive, self}, steps: [{step, inclusive, self}]}``; rows sorted by
    ``host_wait_us``, the top 20 and one row for the rest. ``steps``: the indices of the steps
    listed (ascending; ``None``: all)."""
    t = h.table()
    inc = _step_rows(h, h.inclusive_ns, h.inclusive_gaps, steps)
    own = _step_rows(h, h.self_ns, h.self_gaps, steps)
    listed = range(len(h.step_names)) if steps is None else steps
    return {"trace": {"inclusive": _rows(t.inclusive, t.total_ns),
                      "self": _rows(t.self, t.total_ns)},
            "steps": [{"step": h.step_names[i], "inclusive": inc[i], "self": own[i]}
                      for i in listed]}


def _step_rows(h: HostWaitSources, ns: np.ndarray, gaps: np.ndarray,
               steps: Sequence[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    """Per step, the same rows as ``_rows(h.table(step).<view>)``, built for all steps at once
    (one sort instead of one table per step: traces have tens of thousands of steps); with
    ``steps``, only those steps' lists are filled (the others stay empty)."""
    n_steps = len(h.step_names)
    keep = ns > 0
    if steps is not None:
        wanted = np.zeros(n_steps, bool)
        wanted[np.asarray(steps, np.int64)] = True
        keep &= wanted[h.step]
    step, src, v, g = h.step[keep], h.source[keep], ns[keep], gaps[keep]
    o = np.lexsort((src, -v, step))  # per step: ns descending, then name (ids are in name order)
    step, src, v, g = step[o], src[o], v[o], g[o]
    first = np.searchsorted(step, np.arange(n_steps + 1))
    rank = np.arange(len(step)) - first[step]
    total = h.step_total_ns[step]
    out: dict[int, list[dict[str, Any]]] = {
        i: [] for i in (range(n_steps) if steps is None else steps)}
    top = rank < JSON_ROWS
    names = h.sources
    # ns / 1000 as float64 is already the value rounded to 3 decimals that ``us`` returns.
    for i, name, val_us, sh, gap in zip(step[top].tolist(), src[top].tolist(),
                                        (v[top] / 1000).tolist(), (v[top] / total[top]).tolist(),
                                        g[top].tolist(), strict=True):
        out[i].append({"source": names[name], "host_wait_us": val_us, "share": round(sh, 6),
                       "gaps": gap})
    rest = ~top
    if rest.any():
        r_step = step[rest]
        r_ns = np.zeros(n_steps, np.int64)
        np.add.at(r_ns, r_step, v[rest])
        r_count = np.bincount(r_step, minlength=n_steps)
        r_gaps = np.zeros(n_steps, np.int64)
        np.maximum.at(r_gaps, r_step, g[rest])
        for i in np.flatnonzero(r_count).tolist():
            out[i].append({"source": f"({int(r_count[i])} other sources)",
                           "host_wait_us": us(int(r_ns[i])),
                           "share": share(int(r_ns[i]) / int(h.step_total_ns[i])),
                           "gaps": int(r_gaps[i])})
    return out


def top_table_rows(h: HostWaitSources) -> list[tuple[str, str, str, str, str]]:
    """Top sources by inclusive host wait: (source, inclusive µs, share, self µs, gaps)."""
    t = h.table()
    self_ns = {r.source: r.host_wait_ns for r in t.self}
    return [(display_name(r.source), f"{r.host_wait_ns / 1000:,.1f}", pct(r.share),
             f"{self_ns.get(r.source, 0) / 1000:,.1f}", f"{r.gaps:,}")
            for r in t.inclusive[:TABLE_ROWS]]


COLUMNS = ("source", "inclusive µs", "share", "self µs", "gaps")


#: What a whole-trace share is over, as the reports label it.
WHOLE = "whole trace"


def summary_sentence(h: HostWaitSources, cpu_bound_share: float | None,
                     over: str = WHOLE) -> str | None:
    """"86% CPU-bound (whole trace): 31% of it in `A`, 18% in `B`, … (deepest call paths
    holding ≥ 10 % each, not the table's inclusive shares)" — the largest informative sources
    (:func:`~traceviz.analyze.host_wait.informative_sources`: the deepest call paths holding
    at least 10% of the host wait), by their display names; the sentence says what it counts,
    since a source's share here (its informative paths) can be far below its inclusive share
    in the table (every path through it). ``over`` says what ``cpu_bound_share`` is over (the
    trace's: :data:`WHOLE`)."""
    total = h.total_ns
    if total <= 0 or cpu_bound_share is None:
        return None
    named = informative_sources(h)[:SUMMARY_SOURCES]
    head = f"{pct(cpu_bound_share)} CPU-bound ({over})"
    if not named:
        return head
    parts = [f"{pct(ns / total)} {'of it ' if i == 0 else ''}in `{display_name(source)}`"
             for i, (source, ns) in enumerate(named)]
    return (f"{head}: " + ", ".join(parts) + f" (deepest call paths holding ≥ "
            f"{MIN_PHRASE_SHARE:.0%} each, not the table's inclusive shares)")


def text_table(h: HostWaitSources) -> RichTable:
    """The terminal table (rich), top sources by inclusive host wait (names inert:
    :mod:`traceviz.report.inert`)."""
    from rich.table import Table as RichTable

    from traceviz.report.inert import inert_text

    table = RichTable(title="Host wait by source (host + sync wait, whole trace, µs)",
                      title_justify="left", header_style="bold")
    for c in COLUMNS:
        table.add_column(c, justify="left" if c == "source" else "right", overflow="fold")
    for row in top_table_rows(h):
        table.add_row(*(inert_text(c) for c in row))
    return table


def icicle(h: HostWaitSources) -> go.Figure:
    """Icicle of inclusive host wait by call path (µs), root at the top; boxes show display
    names, the hover the full label; ``ICICLE_LEVELS`` levels at once."""
    import plotly.graph_objects as go

    inc = h.path_inclusive_ns()
    keep = inc >= max(1, MIN_PATH_SHARE * max(h.total_ns, 1))
    ids = [f"p{i}" for i in range(len(inc))]
    fig = go.Figure(go.Icicle(
        ids=[ids[i] for i in range(len(inc)) if keep[i]],
        labels=[html.escape(display_name(h.sources[h.path_source[i]]))
                for i in range(len(inc)) if keep[i]],
        customdata=[html.escape(h.sources[h.path_source[i]])
                    for i in range(len(inc)) if keep[i]],
        parents=[ids[h.path_parent[i]] if h.path_parent[i] >= 0 else ""
                 for i in range(len(inc)) if keep[i]],
        values=[inc[i] / 1000 for i in range(len(inc)) if keep[i]],
        branchvalues="total",
        hovertemplate="%{customdata}<br>%{value:,.1f} µs<br>%{percentRoot:.1%} of host wait"
                      "<extra></extra>",
        tiling={"orientation": "v"},
        maxdepth=ICICLE_LEVELS,
    ))
    fig.update_layout(title="Host wait by call path (inclusive µs, whole trace)", height=520,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def host_wait_section(analysis: Analysis) -> Section | None:
    """The report section: icicle and top-10 table; ``None`` when nothing was attributed."""

    h = analysis.host_wait_sources
    if h is None or h.total_ns <= 0:
        return None
    notes = []
    if not h.has_stacks:
        notes.append("The trace has no Python stacks (record with with_stack=True to see "
                     "Python frames); time outside every traced op is '(python / untraced)'.")
    if h.improperly_nested:
        notes.append(f"{h.improperly_nested:,} CPU events ended after their parent and were "
                     "clamped to it.")
    overhead = profiler_step_ns(h) / h.total_ns
    if overhead >= PROFILER_NOTE_SHARE:
        notes.append(f"{pct(overhead)} of the host wait is in the profiler's own step() call "
                     "between steps (measurement overhead, absent from unprofiled runs).")
    return Section(
        "host-wait", "Why the GPU waited: host wait by CPU source",
        "Each host-wait and sync-wait gap, up to the start of the launch call that ends it, is "
        "attributed to the CPU events open on that call's thread; the rest of the gap, to the "
        "launch call itself. inclusive: time with the source anywhere on the call chain; self: "
        "time with it innermost. Shares are of host + sync wait; self sums to it exactly. "
        + " ".join(notes),
        (Figure("fig-host-wait", icicle(h)),
         Table("tbl-host-wait", "Top sources (whole trace)", COLUMNS,
               tuple(top_table_rows(h)), (False, True, True, True, True),
               clip=(True, False, False, False, False))),
    )
