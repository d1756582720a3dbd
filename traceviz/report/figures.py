"""Plotly figure builders for the reports (plotly is imported here, lazily by callers).

Every figure takes analysis results and returns a ``plotly.graph_objects.Figure`` in
microseconds (``ns / 1000``). Strings that come from a trace are HTML-escaped before they go
into a figure, because plotly renders a subset of HTML in labels and hover text.
Large inputs are reduced (:data:`MAX_BARS`); the builder says how in its returned note.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from traceviz.analyze.compare.modes import CPU_RUN, Comparison
from traceviz.analyze.compare.waterfall import UNPROFILED, Waterfall
from traceviz.analyze.model import Analysis
from traceviz.report.step_rows import DEFAULT_MAX_STEP_ROWS, shown_steps
from traceviz.trace.tables import Trace
from traceviz.vocab import GAP_CLASS_NAMES, Category, LaunchKind

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: Bars per timeline lane before adjacent ones are merged.
MAX_BARS = 3000
#: Steps the per-step figure draws at most (the first and last halves of this many when a
#: trace has more; ``--max-step-rows`` below it draws fewer): its points are embedded in the
#: HTML, so it stays this size whatever the step count and the cap.
MAX_FIGURE_STEPS = DEFAULT_MAX_STEP_ROWS
#: Colours: GPU busy and the five gap classes (colour-blind-safe Tableau 10 subset).
COLORS = {
    "gpu_busy": "#4C78A8",
    "host_wait": "#F58518",
    "sync_wait": "#E45756",
    "graph_internal": "#72B7B2",
    "other_idle": "#BAB0AC",
    "queued": "#FF9DA6",
    "compute_busy": "#4C78A8",
    "exposed_comm": "#B279A2",
}
_LABELS = {
    "gpu_busy": "GPU busy",
    "host_wait": "host wait (launch overhead)",
    "sync_wait": "sync wait",
    "graph_internal": "inside CUDA graph",
    "other_idle": "other idle",
    "queued": "queued (launched, not started)",
    "compute_busy": "compute busy",
    "exposed_comm": "exposed communication",
}
_FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    fig.update_layout(
        template="plotly_white",
        title={"text": html.escape(title), "x": 0.0, "xanchor": "left", "font": {"size": 15}},
        height=height,
        margin={"l": 70, "r": 20, "t": 60, "b": 50},
        font=_FONT,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1},
        hoverlabel={"namelength": -1},
    )
    return fig


def _esc(names: list[str] | np.ndarray) -> list[str]:
    return [html.escape(str(n)) for n in names]


#: What the title of a figure that draws nothing says before why (a page shows that line in
#: the figure's place: :func:`not_drawn_line`).
NOT_DRAWN = "not drawn"


def _not_drawn(fig: go.Figure, title: str, why: str) -> go.Figure:
    """``fig`` (no trace with data) titled "``title``: not drawn, ``why``"."""
    return _layout(fig, f"{title}: {NOT_DRAWN}, {why}")


def _values(trace: dict[str, object]) -> list[object]:
    """The values a trace draws (bars, points, cells, slices), flattened: ``y`` (``x`` for a
    horizontal bar), else ``z``, else ``values``, else ``labels``."""
    key = "x" if trace.get("orientation") == "h" else "y"
    for name in (key, "z", "values", "labels"):
        if trace.get(name) is not None:
            flat = np.asarray(trace[name], dtype=object).ravel()
            return list(flat)
    return []


def drawn(fig: go.Figure) -> bool:
    """Whether ``fig`` draws anything: a trace with at least one value that is not missing
    (``None`` or NaN)."""
    return any(v is not None and not (isinstance(v, float) and np.isnan(v))
               for t in fig.data for v in _values(t.to_plotly_json()))


def not_drawn_line(fig: go.Figure) -> str:
    """The line shown in place of a figure that draws nothing (plain text): its title, which
    says why when its builder knew (:data:`NOT_DRAWN`), else the title and "nothing to plot"."""
    title = html.unescape(str(fig.layout.title.text or "figure"))
    return title if f": {NOT_DRAWN}," in title else f"{title}: {NOT_DRAWN}, nothing to plot"


def step_breakdown(analysis: Analysis, rows: Sequence[int] | np.ndarray | None = None
                   ) -> go.Figure:
    """Stacked bar per step: GPU busy (with communication kernels: compute busy and exposed
    communication) and the five idle classes (µs), plus cpu_bound_share. ``rows``: the indices
    of the steps drawn (``None``: all of them up to :data:`MAX_FIGURE_STEPS`, else the first
    and last halves of that many); steps without a GPU period are left out."""
    import plotly.graph_objects as go

    table = analysis.steps
    if rows is None:
        rows = shown_steps(len(table), MAX_FIGURE_STEPS)
    sel = np.asarray(rows, np.int64)
    sel = sel[table.column("period_ns")[sel] > 0]
    steps = table.take(sel)
    x = _esc(steps.names())
    fig = go.Figure()
    comm = analysis.comm
    busy = ("gpu_busy",) if comm is None else ("compute_busy", "exposed_comm")
    comm_rows = None if comm is None else comm.steps.take(sel)
    for key in (*busy, *GAP_CLASS_NAMES):
        col = (comm_rows.values(f"{key}_ns") if comm_rows is not None and key in busy
               else steps.column(f"{key}_ns"))
        y = (col / 1000).tolist()
        fig.add_trace(
            go.Bar(name=_LABELS[key], x=x, y=y, marker_color=COLORS[key],
                   hovertemplate="%{x}<br>" + _LABELS[key] + ": %{y:,.1f} µs<extra></extra>")
        )
    share = (steps.cpu_bound_share() * 100).tolist()
    fig.add_trace(
        go.Scatter(name="cpu_bound_share (right axis)", x=x, y=share, yaxis="y2",
                   mode="lines+markers", line={"color": "#222", "width": 1.5},
                   hovertemplate="%{x}<br>cpu_bound_share %{y:.1f}%<extra></extra>")
    )
    fig.update_layout(
        barmode="stack",
        yaxis={"title": "GPU period per step (µs)"},
        yaxis2={"title": "cpu_bound_share (%)", "overlaying": "y", "side": "right",
                "range": [0, 100], "tickmode": "linear", "dtick": 25, "showgrid": False},
        xaxis={"title": "step"},
    )
    _layout(fig, "Where each step's GPU period went")
    fig.update_layout(margin={"r": 70})
    return fig


def _coalesce(
    lanes: np.ndarray, start: np.ndarray, end: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge neighbouring bars of a lane until at most ``limit`` remain.

    Returns ``(lane, start, end, merged_count)``; bars are merged across the smallest gaps first
    (one cut-off for all lanes). Inputs must be sorted by lane then start.
    """
    n = len(start)
    if n <= limit:
        return lanes, start, end, np.ones(n, dtype=np.int64)
    gap = np.empty(n, dtype=np.float64)
    gap[0] = np.inf
    gap[1:] = start[1:] - end[:-1]
    gap[1:][lanes[1:] != lanes[:-1]] = np.inf  # never merge across lanes
    cutoff = np.sort(gap)[limit - 1]  # keep the `limit` largest gaps as boundaries
    new = gap >= cutoff
    group = np.cumsum(new) - 1
    firsts = np.flatnonzero(new)
    ends = np.maximum.reduceat(end, firsts)
    counts = np.bincount(group)
    return lanes[firsts], start[firsts], ends, counts


def timeline(trace: Trace, analysis: Analysis) -> tuple[go.Figure, str]:
    """Representative step: launches, graph replays, GPU activities per stream, idle gaps.

    Returns the figure and a note ("" or how bars were merged). X axis: µs from the step's
    first CPU or GPU event.
    """
    import plotly.graph_objects as go

    step = analysis.representative_step()
    fig = go.Figure()
    if step is None:
        return _not_drawn(fig, "Timeline", "no step with GPU work"), ""
    gpu = trace.gpu
    rows = np.flatnonzero(analysis.activity_step == step.index)
    acts = gpu.iloc[rows]
    cpu_end = step.cpu_start_ns + step.cpu_ns
    rt = trace.runtime
    in_win = (
        (rt["ts_ns"].to_numpy() >= step.cpu_start_ns)
        & (rt["ts_ns"].to_numpy() < cpu_end)
        & (rt["kind"].to_numpy() != int(LaunchKind.OTHER))
    )
    launches = rt[in_win]
    origin = min(step.cpu_start_ns, step.gpu_start_ns or step.cpu_start_ns)
    notes: list[str] = []

    def bars(name: str, lane: list[str], s: np.ndarray, e: np.ndarray, labels: list[str],
             color: str) -> None:
        lane_arr = np.asarray(lane, dtype=object)
        order = np.lexsort((s, lane_arr.astype(str)))
        lane_arr, s, e = lane_arr[order], s[order], e[order]
        labels_arr = np.asarray(labels, dtype=object)[order]
        lane_m, s_m, e_m, counts = _coalesce(lane_arr, s, e, MAX_BARS)
        if len(s_m) < len(s):
            notes.append(f"{name}: {len(s):,} bars merged into {len(s_m):,}")
            first = np.concatenate(([0], np.cumsum(counts)[:-1]))
            text = [
                labels_arr[f] if c == 1 else f"{c} merged, first: {labels_arr[f]}"
                for f, c in zip(first, counts, strict=True)
            ]
        else:
            text = list(labels_arr)
        fig.add_trace(
            go.Bar(
                name=name, orientation="h", y=list(lane_m), base=(s_m - origin) / 1000,
                x=np.maximum(e_m - s_m, 1) / 1000, marker_color=color, marker_line_width=0,
                hovertext=text,
                hovertemplate="%{hovertext}<br>start %{base:,.2f} µs, %{x:,.2f} µs<extra></extra>",
            )
        )

    gaps = analysis.gaps
    gmask = gaps.step == step.index
    for cls_id, cls_name in enumerate(GAP_CLASS_NAMES):
        m = gmask & (gaps.cls == cls_id)
        if m.any():
            dur = gaps.duration_ns[m] / 1000
            bars(_LABELS[cls_name], ["idle gaps"] * int(m.sum()), gaps.start_ns[m],
                 gaps.end_ns[m], [f"{_LABELS[cls_name]} {d:,.2f} µs" for d in dur],
                 COLORS[cls_name])
    for cat, color, label in (
        (Category.KERNEL, COLORS["gpu_busy"], "kernel"),
        (Category.GPU_MEMCPY, "#9D755D", "memcpy"),
        (Category.GPU_MEMSET, "#B279A2", "memset"),
    ):
        sub = acts[acts["cat"].to_numpy() == int(cat)]
        if len(sub):
            bars(label, [f"GPU stream {int(s)}" for s in sub["stream"]],
                 sub["ts_ns"].to_numpy(), sub["end_ns"].to_numpy(), _esc(list(sub["name"])),
                 color)
    replays = [r for r in analysis.graph_replays if r.step == step.name]
    if replays:
        bars("CUDA graph replay", ["graph replays"] * len(replays),
             np.array([r.first_start_ns for r in replays]),
             np.array([r.last_end_ns for r in replays]),
             [f"graph replay: {r.kernels} kernels, {r.nodes} nodes" for r in replays], "#54A24B")
    if len(launches):
        bars("CPU launch call", ["CPU launch calls"] * len(launches),
             launches["ts_ns"].to_numpy(), launches["end_ns"].to_numpy(),
             _esc(list(launches["name"])), "#EECA3B")
    streams = sorted({int(s) for s in acts["stream"]})
    lanes = [
        *(["CPU launch calls"] if len(launches) else []),
        *(["graph replays"] if replays else []),
        *(f"GPU stream {s}" for s in streams),
        *(["idle gaps"] if gmask.any() else []),
    ]
    fig.update_layout(
        barmode="overlay",
        bargap=0.25,
        xaxis={"title": "µs from step start", "rangeslider": {"visible": False}},
        yaxis={"categoryorder": "array", "categoryarray": lanes[::-1], "type": "category"},
    )
    _layout(fig, f"Timeline of {step.name} (median period, {step.period_ns / 1000:,.1f} µs)",
            height=max(320, 70 * len(lanes) + 140))
    return fig, "; ".join(notes)


def _duration_label(us_value: float) -> str:
    if us_value >= 1000:
        return f"{us_value / 1000:g} ms"
    return f"{us_value:g} µs"


def gap_histogram(analysis: Analysis) -> go.Figure:
    """Idle-gap count per log-spaced duration bin, bars per class (overlaid).

    Bins are computed here (40 equal bins of log10 µs), so the figure stays small for any
    number of gaps; the x axis is log10 µs with tick labels in µs / ms.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    dur = analysis.gaps.duration_ns / 1000
    positive = dur > 0
    if positive.any():
        logs = np.log10(dur[positive])
        lo, hi = float(np.floor(logs.min() * 4) / 4), float(np.ceil(logs.max() * 4) / 4)
        hi = max(hi, lo + 0.25)
        edges = np.linspace(lo, hi, 41)
        centers = (edges[:-1] + edges[1:]) / 2
        cls = analysis.gaps.cls[positive]
        for cls_id, name in enumerate(GAP_CLASS_NAMES):
            d = logs[cls == cls_id]
            if not len(d):
                continue
            counts, _ = np.histogram(d, bins=edges)
            keep = counts > 0
            fig.add_trace(
                go.Bar(
                    name=f"{_LABELS[name]} ({len(d):,})", x=centers[keep], y=counts[keep],
                    width=edges[1] - edges[0], marker_color=COLORS[name], opacity=0.75,
                    customdata=np.stack([10 ** edges[:-1][keep], 10 ** edges[1:][keep]], -1),
                    hovertemplate="%{customdata[0]:,.2f}–%{customdata[1]:,.2f} µs: "
                    "%{y:,} gaps<extra></extra>",
                )
            )
        decades = range(int(np.floor(lo)), int(np.ceil(hi)) + 1)
        ticks = [t for d in decades for m in (1, 2, 5)
                 if lo <= (t := round(d + float(np.log10(m)), 6)) <= hi]
        fig.update_layout(xaxis={"tickvals": ticks,
                                 "ticktext": [_duration_label(float(f"{10.0**t:.3g}"))
                                              for t in ticks],
                                 "range": [lo, hi]})
    fig.update_layout(barmode="overlay", xaxis_title="gap duration (log scale)",
                      yaxis={"title": "gaps"})
    return _layout(fig, "Idle gaps by class")


def kernel_families(analysis: Analysis) -> go.Figure:
    """GPU time per kernel family (ms), largest first."""
    import plotly.graph_objects as go

    fams = sorted(analysis.kernel_families, key=lambda f: f.total_ns)
    fig = go.Figure(
        go.Bar(
            orientation="h", y=_esc([f.family for f in fams]),
            x=[f.total_ns / 1e6 for f in fams], marker_color=COLORS["gpu_busy"],
            text=[f"{f.share * 100:.1f}%" for f in fams], textposition="auto",
            customdata=[f.count for f in fams],
            hovertemplate="%{y}: %{x:,.3f} ms in %{customdata:,} activities<extra></extra>",
        )
    )
    fig.update_layout(xaxis={"title": "GPU time (ms, whole trace)"})
    return _layout(fig, "GPU time by kernel family", height=max(260, 28 * len(fams) + 120))


def _no_gpu_reason(comparison: Comparison) -> str:
    """Why a comparison has no per-step GPU figures: a CPU run, or no mode with GPU steps."""
    if any(CPU_RUN in n for n in comparison.notes):
        return "the steps ran on the CPU (no GPU activity in the traces)"
    return "no mode has a trace with GPU work"


def compare_counts(comparison: Comparison) -> go.Figure:
    """Kernels/step and launch calls/step per mode (medians); each series only when a mode
    has it, and none (the title says why: :data:`NOT_DRAWN`) when no mode does."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for key, name, color in (("kernels", "kernels/step", COLORS["gpu_busy"]),
                             ("launches", "launch calls/step", COLORS["host_wait"])):
        rows = [r for r in comparison.rows if getattr(r, key) is not None]
        if rows:
            fig.add_trace(go.Bar(name=name, x=_esc([r.mode for r in rows]),
                                 y=[getattr(r, key) for r in rows], marker_color=color,
                                 texttemplate="%{y:,.0f}", textposition="outside"))
    title = "Kernels and launch calls per step"
    if not fig.data:
        return _not_drawn(fig, title, _no_gpu_reason(comparison))
    fig.update_layout(barmode="group", yaxis={"title": "per step (median)"})
    return _layout(fig, title)


def compare_times(comparison: Comparison) -> go.Figure:
    """Unprofiled step time (median, p10–p90 error bar) next to the profiled GPU period (ms);
    each series only when a mode has it (a CPU run has no GPU period: the title says so), and
    none (:data:`NOT_DRAWN`) when no mode has either."""
    import plotly.graph_objects as go

    fig = go.Figure()
    timed = [r for r in comparison.rows if r.time_median_ms is not None]
    if timed:
        fig.add_trace(
            go.Bar(
                name="unprofiled step time (median, p10–p90)", x=_esc([r.mode for r in timed]),
                y=[r.time_median_ms for r in timed], marker_color="#54A24B",
                error_y={
                    "type": "data", "symmetric": False,
                    "array": [(r.time_p90_ms or r.time_median_ms) - r.time_median_ms
                              for r in timed],
                    "arrayminus": [r.time_median_ms - (r.time_p10_ms or r.time_median_ms)
                                   for r in timed],
                },
            )
        )
    profiled = [r for r in comparison.rows if r.period_ms is not None]
    if profiled:
        fig.add_trace(
            go.Bar(name="profiled GPU period/step (median)", x=_esc([r.mode for r in profiled]),
                   y=[r.period_ms for r in profiled], marker_color=COLORS["gpu_busy"])
        )
    if not fig.data:
        return _not_drawn(fig, "Step time", "no mode has a step time or a GPU period")
    fig.update_layout(barmode="group", yaxis={"title": "ms per step"},
                      showlegend=len(fig.data) > 1)
    if not profiled:
        return _layout(fig, "Step time without the profiler (median, p10–p90); no GPU period: "
                       + _no_gpu_reason(comparison))
    if not timed:
        return _layout(fig, "Step time: profiled GPU period (median; no unprofiled timing)")
    return _layout(fig, "Step time: unprofiled vs profiled")


def waterfall(w: Waterfall) -> go.Figure:
    """Baseline step → the parts' deltas → mode step (µs): unprofiled or profiled units."""
    import plotly.graph_objects as go

    unprofiled = w.units == UNPROFILED
    short = {"gpu_busy_ns": "ΔGPU<br>busy", "host_overhead_ns": "Δhost<br>overhead",
             "host_wait_ns": "Δhost<br>wait", "sync_wait_ns": "Δsync<br>wait",
             "queued_ns": "Δqueued", "graph_internal_ns": "Δin<br>graph",
             "other_idle_ns": "Δother" + ("<br>idle" if unprofiled else ""),
             "compute_busy_ns": "Δcompute<br>busy", "exposed_comm_ns": "Δexposed<br>comm"}
    components = w.components
    step = "step" if unprofiled else "period"
    labels = [f"baseline<br>{step}", *(short[k] for k, _ in components), f"this mode<br>{step}"]
    values = [w.baseline_period_ns / 1000, *(w.parts[k] / 1000 for k, _ in components),
              w.period_ns / 1000]
    fig = go.Figure(
        go.Waterfall(
            x=labels, y=values,
            measure=["absolute", *(["relative"] * len(components)), "total"],
            text=[f"{v:+,.1f}" if 0 < i <= len(components) else f"{v:,.1f}"
                  for i, v in enumerate(values)],
            textposition="outside",
            increasing={"marker": {"color": "#E45756"}},
            decreasing={"marker": {"color": "#54A24B"}},
            totals={"marker": {"color": COLORS["gpu_busy"]}},
            connector={"line": {"color": "#999", "width": 1}},
            hovertemplate="%{x}: %{y:,.2f} µs<extra></extra>",
        )
    )
    axis = ("step time per step without the profiler (µs)" if unprofiled
            else "mean profiled GPU period per step (µs)")
    fig.update_layout(yaxis={"title": axis}, showlegend=False, xaxis={"tickangle": 0})
    how = "unprofiled" if unprofiled else "profiled"
    return _layout(
        fig, f"{w.mode} vs {w.baseline}: {w.delta_ns / 1000:+,.1f} µs per step ({how})",
        height=400,
    )
