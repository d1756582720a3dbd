"""Plotly figures of the multi-rank report (µs): rank × step heatmaps, per-rank stacked bars,
arrival spread per collective."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from traceviz.analyze.distributed.model import RanksAnalysis
from traceviz.lazy import pandas as pd
from traceviz.report.figures import _esc, _layout


def rank_step_heatmap(r: RanksAnalysis) -> go.Figure:
    """Two heatmaps, rank × step: step period and comm wait (µs; blank: unmatched step)."""
    ranks = [i.rank for i in r.ranks]
    steps = list(r.steps)
    period = np.full((len(ranks), len(steps)), np.nan)
    wait = np.full((len(ranks), len(steps)), np.nan)
    ri = {k: i for i, k in enumerate(ranks)}
    si = {k: i for i, k in enumerate(steps)}
    for s in r.rank_steps:
        period[ri[s.rank], si[s.step]] = s.period_ns / 1000
        if s.comm_wait_ns is not None:
            wait[ri[s.rank], si[s.step]] = s.comm_wait_ns / 1000
    fig = make_subplots(rows=1, cols=2, subplot_titles=("step period (µs)", "comm wait (µs)"),
                        horizontal_spacing=0.12)
    y = [f"rank {k}" for k in ranks]
    x = [f"#{k}" for k in steps]
    fig.add_trace(go.Heatmap(z=period, x=x, y=y, colorscale="Blues", colorbar={"x": 0.44},
                             hovertemplate="%{y} step %{x}: %{z:.1f} µs<extra></extra>"), 1, 1)
    fig.add_trace(go.Heatmap(z=wait, x=x, y=y, colorscale="Oranges",
                             hovertemplate="%{y} step %{x}: %{z:.1f} µs<extra></extra>"), 1, 2)
    return _layout(fig, "Rank × step", height=max(260, 60 + 40 * len(ranks)))


def rank_stacked_bars(r: RanksAnalysis) -> go.Figure:
    """Per rank, median µs/step: compute, exposed comm, comm wait, host wait, other (the rest
    of the period; never negative)."""
    y = [f"rank {p.rank}" for p in r.per_rank]
    parts = {"compute": [], "exposed comm": [], "comm wait": [], "host wait": [], "other": []}
    for p in r.per_rank:
        vals = [p.compute_busy_ns_median, p.exposed_comm_ns_median or 0.0,
                p.comm_wait_ns_median or 0.0, p.host_wait_ns_median + p.sync_wait_ns_median]
        vals.append(max(p.period_ns_median - sum(vals), 0.0))
        for k, v in zip(parts, vals, strict=True):
            parts[k].append(v / 1000)
    colors = ["#4C78A8", "#54A24B", "#E45756", "#F58518", "#BAB0AC"]
    fig = go.Figure([go.Bar(name=k, y=y, x=v, orientation="h", marker_color=c)
                     for (k, v), c in zip(parts.items(), colors, strict=True)])
    fig.update_layout(barmode="stack", xaxis_title="µs per step (median)")
    return _layout(fig, "Where each rank's step goes", height=max(240, 80 + 40 * len(y)))


def arrival_spread(r: RanksAnalysis) -> go.Figure:
    """Per matched collective (k-th of its step, over steps): each rank's lateness (µs)."""
    inst = r.instances
    ok = inst.match >= 0
    fig = go.Figure()
    if ok.any():
        step, match, names = inst.step[ok], inst.match[ok], inst.name[ok]
        order = np.lexsort((match, step))
        # k: the instance's position among its step's matched instances (dense rank of its id)
        k = (pd.DataFrame({"step": step[order], "match": match[order]})
             .groupby("step")["match"].rank(method="dense").to_numpy(np.int64) - 1)
        label = np.array([f"{n} #{i}" for n, i in zip(names[order], k.tolist(), strict=True)],
                         dtype=object)
        lateness = inst.lateness_ns[ok][order] / 1000
        ranks = inst.rank[ok][order]
        for k in np.unique(ranks):
            sel = ranks == k
            fig.add_trace(go.Box(x=_esc(label[sel]), y=lateness[sel], name=f"rank {k}",
                                 boxpoints="all"))
        fig.update_layout(boxmode="group", yaxis_title="arrival after the first rank (µs)")
    return _layout(fig, "Arrival spread per collective (k-th in its step)")
